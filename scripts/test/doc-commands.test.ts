// The command lines of README.md and docs/*.md (test/helpers/doc-commands.ts) work as written from an app's
// folder: every one that runs the CLI names the scoped package (npx --yes @firestore-exact-counter/cli …, which
// nobody else can publish) or the CLI the counters codebase installed (npx --prefix counters …), an npx that
// installs a package says --yes (without a terminal npx refuses to ask), firebase-tools runs as the
// project's (npx firebase …) in the app pages, and the app tier (scripts/test/init.app.test.ts) takes every
// command of the app pages: APP_COMMANDS lists each, run as written or why not.
import { REPO_ROOT } from "../lib/firebase-cli";
import { APP_COMMANDS, APP_PAGES, commandsIn, docCommands, runsOurTools, type DocCommand } from "../../test/helpers/doc-commands";

/** The forms that find the CLI from an app's folder. */
const WORKING = [
  /^npx --yes @firestore-exact-counter\/cli(@\S+)? [a-z]/,
  /^npx --yes --package \S+\.tgz firestore-exact-counter [a-z]/,
  /^npx --prefix \S+ firestore-exact-counter [a-z…]/,
  /^npm --prefix \S+ run preflight\b/,
  /^export [A-Z_]+="\$\(npx --prefix \S+ firestore-exact-counter [a-z]/,
];

const where = (c: DocCommand) => `${c.file}:${c.line} ${c.text}`;
const all = docCommands(REPO_ROOT);

describe("the documented command lines", () => {
  it("are found: the README's, a block's joined continuation lines, inline ones", () => {
    expect(all.filter((c) => c.file === "README.md").map((c) => c.text)).toContain("npx --yes @firestore-exact-counter/cli init");
    expect(commandsIn("text `npx --prefix counters firestore-exact-counter backfill` text\n```\nnpx --yes --package a.tgz firestore-exact-counter init \\\n  --dry-run  # why\n```\n", "x.md")).toEqual([
      { file: "x.md", line: 1, text: "npx --prefix counters firestore-exact-counter backfill", block: false },
      { file: "x.md", line: 3, text: "npx --yes --package a.tgz firestore-exact-counter init --dry-run", block: true },
    ]);
  });

  it("run the CLI through the scoped package or the codebase's installed CLI, never the unscoped name anyone could publish", () => {
    const cli = all.filter((c) => /(^|\s|")firestore-exact-counter\s|@firestore-exact-counter\/cli/.test(c.text));
    expect(cli.length).toBeGreaterThan(10);
    expect(cli.filter((c) => !WORKING.some((form) => form.test(c.text))).map(where)).toEqual([]);
  });

  it("let npx install a package without asking (--yes), which it refuses to do without a terminal", () => {
    // Not the project's own bins (firebase-tools as a devDependency, this repository's jest and tsx) nor Expo's installer.
    const installing = all.filter((c) => /^npx (?!--prefix\b|firebase\b|jest\b|tsx\b|expo\b)/.test(c.text));
    expect(installing.length).toBeGreaterThan(3);
    expect(installing.filter((c) => !c.text.startsWith("npx --yes ")).map(where)).toEqual([]);
  });

  it("run firebase-tools as the project's (npx firebase …) in the app pages' blocks", () => {
    expect(all.filter((c) => APP_PAGES.includes(c.file) && c.block && /^firebase\s/.test(c.text)).map(where)).toEqual([]);
  });

  it("of the app pages are each run as written by the app tier, or say why not (APP_COMMANDS)", () => {
    const documented = [...new Set(all.filter((c) => APP_PAGES.includes(c.file) && runsOurTools(c.text)).map((c) => c.text))].sort();
    expect(documented).toEqual(Object.keys(APP_COMMANDS).sort());
  });
});
