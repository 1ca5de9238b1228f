// firestore-exact-counter: the command line of the counters. The first argument names the command; each
// command is one module under commands/ and one line of COMMANDS, loaded only when it runs (reconcile's
// admin SDK is never loaded for init). The repository's npm scripts run this same file from its sources.
import { EXIT, runCommand, usageLine, type Command } from "./lib/cli";
import { CLI_NAME, VERSION } from "./lib/package";

interface CommandModule {
  command: Command<unknown>;
}

interface Entry {
  summary: string;
  /** The command's module, loaded (and its imports with it) only when it runs. */
  load: () => Promise<CommandModule>;
}

const COMMANDS: Record<string, Entry> = {
  init: { summary: "add the counters to a Firebase project: codebase, firebase.json, rules, indexes, params", load: () => import("./commands/init.js") },
  preflight: { summary: "check, offline, what a deploy of the counters checks (the codebase's predeploy runs it)", load: () => import("./commands/preflight.js") },
  "check-rules": { summary: "check that a rules file keeps the counters' guarantees (rules are OR'ed)", load: () => import("./commands/check-rules.js") },
  reconcile: { summary: "compare every counter's total with its shards; --fix repairs drift", load: () => import("./commands/reconcile.js") },
  backfill: { summary: "count the documents DOCUMENT_COUNTERS watches that are not counted yet; take out those gone", load: () => import("./commands/backfill.js") },
  "migrate-extension": { summary: "move the firestore-counter extension's counters to exact counters", load: () => import("./commands/migrate-extension.js") },
  "firestore-jar": { summary: "print a Firestore emulator for FIRESTORE_EMULATOR_BINARY_PATH (offline machines)", load: () => import("./commands/firestore-jar.js") },
};

const HELP = `Usage: ${CLI_NAME} <command> [options]   (${CLI_NAME} <command> --help for its options)

${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(17)} ${summary}`)
  .join("\n")}

Version ${VERSION}. Exit codes: 0 done, 1 a failure the command reports, 2 a mistake in the arguments or a
refusal (one line saying which), as each command's --help details.`;

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-v") {
    console.log(VERSION);
    return;
  }
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    (name === undefined ? console.error : console.log)(HELP);
    process.exitCode = name === undefined ? EXIT.usage : EXIT.ok;
    return;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry === undefined) {
    console.error(usageLine({ name: CLI_NAME, helpCommand: `${CLI_NAME} --help` }, `unknown command ${JSON.stringify(name)} (commands: ${Object.keys(COMMANDS).join(", ")})`));
    process.exitCode = EXIT.usage;
    return;
  }
  runCommand((await entry.load()).command, rest);
}

void main(process.argv.slice(2));
