// The command lines README.md and docs/*.md give a user to type, as written: each line of a fenced code
// block (a trailing `\` joins the next line; a `# comment` after two spaces is dropped) and each inline code
// span that starts like a command (npx, npm --prefix, export NAME=). The docs' test holds every one
// that runs the CLI to a form that works from an app's folder (scripts/test/doc-commands.test.ts), and
// the app tier runs the app pages' ones as written (scripts/test/init.app.test.ts, after APP_COMMANDS).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface DocCommand {
  /** The Markdown file, relative to the repository. */
  file: string;
  line: number;
  /** The command as written (continuation lines joined with one space). */
  text: string;
  /** Whether it stands on a line of its own in a code block (else an inline code span). */
  block: boolean;
}

const STARTS = /^(npx|npm|firebase|node)\s|^export [A-Z_]+=/;
// Inline, `firebase deploy` and the like name a command in prose; a command to type is written whole.
const INLINE_STARTS = /^(npx|npm --prefix)\s|^export [A-Z_]+=/;

/** The command lines of one Markdown text. */
export function commandsIn(markdown: string, file: string): DocCommand[] {
  const commands: DocCommand[] = [];
  const lines = markdown.split("\n");
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (/^\s*(```|~~~)/.test(text)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      let command = text.replace(/\s{2,}#.*$/, "").trim();
      const first = i;
      while (command.endsWith("\\") && i + 1 < lines.length) command = `${command.slice(0, -1).trim()} ${lines[++i]!.replace(/\s{2,}#.*$/, "").trim()}`;
      if (STARTS.test(command)) commands.push({ file, line: first + 1, text: command, block: true });
      continue;
    }
    for (const span of text.matchAll(/`([^`]+)`/g)) {
      if (INLINE_STARTS.test(span[1]!)) commands.push({ file, line: i + 1, text: span[1]!, block: false });
    }
  }
  return commands;
}

/** The Markdown files the docs' tests read: README.md and docs/*.md. */
export function docFiles(root: string): string[] {
  return ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
}

export function docCommands(root: string): DocCommand[] {
  return docFiles(root).flatMap((file) => commandsIn(readFileSync(join(root, file), "utf8"), file));
}

/** The pages whose commands a user types in an app's folder (the others: this repository's). */
export const APP_PAGES = ["README.md", "docs/existing-app.md", "docs/documents.md", "docs/from-the-extension.md"];

/** Whether a command runs the CLI (its bin, or its scoped package) or firebase-tools: what an app page's test runs. */
export function runsOurTools(text: string): boolean {
  return /(^|\s)firestore-exact-counter\s|@firestore-exact-counter\/cli|^npm --prefix \S+ run preflight\b/.test(text) || /^(npx )?firebase\s/.test(text);
}

/**
 * Every command of the app pages that runs the CLI or firebase-tools, and how the app tier takes it:
 * "run" as written in the app made by init (placeholders such as <projectId> filled in), or why not.
 */
export const APP_COMMANDS: Record<string, "run" | { notRun: string }> = {
  "npx --yes @firestore-exact-counter/cli init": "run",
  "npx firebase emulators:start": "run",
  "npx firebase deploy --only functions:counters,firestore": "run",
  "npx --yes --package /path/to/packs/firestore-exact-counter-cli-*.tgz firestore-exact-counter init --functions-package /path/to/packs/firestore-exact-counter-functions-*.tgz --cli-package /path/to/packs/firestore-exact-counter-cli-*.tgz":
    "run",
  'export FIRESTORE_EMULATOR_BINARY_PATH="$(npx --prefix counters firestore-exact-counter firestore-jar)"': "run",
  "npx --prefix counters firestore-exact-counter firestore-jar": "run",
  "npm --prefix counters run preflight -- --project <projectId>": "run",
  "npx --yes @firestore-exact-counter/cli@<version> init": "run",
  "npx --prefix counters firestore-exact-counter check-rules firestore.rules": "run",
  "npx firebase deploy --only functions:counters": "run",
  "npx --prefix counters firestore-exact-counter backfill": "run",
  "npx --prefix counters firestore-exact-counter backfill --counter post-42-comments --dry-run": "run",
  "npx --prefix counters firestore-exact-counter migrate-extension --document 'pages/{id}' --field visits --counter 'page-{id}-visits' --dry-run > extension-values.txt": "run",
  "npx --prefix counters firestore-exact-counter migrate-extension --document 'pages/{id}' --field visits --counter 'page-{id}-visits'": "run",
  "npx firebase functions:delete createCounter incrementCounter setMember resetCounter reshardCounter deleteCounter rollupTotal rollupSweep rollupWindows cleanupDeletedCounter": "run",
  "npx --prefix counters firestore-exact-counter …": { notRun: "a pattern (…: any command), not a command line" },
};
