// `firestore-exact-counter init`: adds the counters to a Firebase project folder in one command (the
// codebase folder, firebase.json's entry, the rules block, the indexes, the params) and says what it
// changed. Everything is worked out before anything is written (init/plan.ts): a refusal changes no file.
import { existsSync, realpathSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { readArgv, lastValue, EXIT, type Command } from "../lib/cli";
import { firebaseToolsRoot, firebaseToolsVersion, useFirebaseToolsFrom } from "../lib/firebase-tools-internals";
import { CLI_NAME, FUNCTIONS_PACKAGE, VERSION } from "../lib/package";
import { checkCodebaseName } from "../init/firebase-json";
import { changed, changesAnything, planInit, type Plan } from "../init/plan";
import { resolveSpec } from "../init/tarballs";
import { npmInstall, writePlan } from "../init/apply";

const HELP = `Usage: ${CLI_NAME} init [--dir <project folder>] [--codebase <name>]
                             [--functions-package <spec>] [--cli-package <spec>]
                             [--dry-run] [--no-install]

Adds the counters to the Firebase project in --dir (default: the current folder), which holds
firebase.json, and touches nothing else of yours:
  <name>/                  a codebase folder (--codebase, default counters): package.json depending on
                           ${FUNCTIONS_PACKAGE} (--functions-package: a version, a range or a tarball path;
                           default ${VERSION}), firebase-functions and firebase-admin, with this CLI as a
                           devDependency for the predeploy preflight (--cli-package, default ${VERSION});
                           index.js re-exporting the functions; .env with every param's default;
                           .env.local with a short ROLLUP_INTERVAL_MS for the emulator only (it delivers
                           trigger events one at a time: a local burst then settles within seconds). A
                           tarball is copied into the folder and named by a relative path (file:./x.tgz),
                           so a clone of the app and firebase deploy's build install it
  firebase.json            the codebase (source <name>, codebase <name>, the preflight as its predeploy)
                           added to "functions", a single entry of yours becoming a list with it first
  firestore.rules          the counters' block inside match /databases/{database}/documents, every line
                           of yours kept (the file firebase.json names; created when there is none), then
                           checked with check-rules
  firestore.indexes.json   the counters' indexes and field overrides added, yours kept with every comment
                           (read as firebase-tools reads it: JSON with comments, as firebase init writes it)
Then runs npm install in the codebase folder (not with --no-install), and prints what it changed and
the deploy command. Run again, it changes nothing (a newer version adds only what is new).
--dry-run prints the changes and writes nothing.

It refuses, changing no file, when: the folder has no firebase.json; the codebase folder exists and is
not one of ours; another codebase of yours exports a function named like one of ours (createCounter,
incrementCounter, …: names are per project); your rules would let clients read or write the counters'
documents even with the block (what check-rules refuses: rules are OR'ed).

Needs firebase-tools in the project (npm install --save-dev firebase-tools@14.27.0: init loads your
codebases with it, and npx firebase runs the emulators and the deploy; a global install does for init),
and a Firestore emulator for the rules check (FIRESTORE_EMULATOR_HOST if set, else one started for it).

Exit codes: 0 done (or nothing to change); 1 npm install failed (the files are written: run npm install
in the codebase folder) or an unexpected error; 2 bad arguments or a refusal (nothing changed).`;

/** What init says first: it needs firebase-tools in the project, and how to add it. */
const FIREBASE_TOOLS_NEEDED = "init needs firebase-tools in the project to load your codebases as a deploy does (add it: npm install --save-dev firebase-tools@14.27.0)";

interface Args {
  dir: string;
  codebase: string;
  functionsPackage: string | undefined;
  cliPackage: string | undefined;
  dryRun: boolean;
  install: boolean;
}

function parse(argv: string[]): Args | "help" {
  const read = readArgv(argv, {
    flags: ["--dry-run", "--no-install"],
    values: {
      "--dir": "the Firebase project folder (holds firebase.json)",
      "--codebase": "a codebase name (lowercase letters, digits, _ and -)",
      "--functions-package": "a version, a range or a tarball of @firestore-exact-counter/functions",
      "--cli-package": "a version, a range or a tarball of @firestore-exact-counter/cli",
    },
  });
  if (read === "help") return read;
  return {
    dir: resolve(lastValue(read, "--dir") ?? "."),
    codebase: checkCodebaseName(lastValue(read, "--codebase")),
    functionsPackage: lastValue(read, "--functions-package"),
    cliPackage: lastValue(read, "--cli-package"),
    dryRun: read.flags.has("--dry-run"),
    install: !read.flags.has("--no-install"),
  };
}

/**
 * The firebase-tools install firebase-tools-internals.ts found, as the line init starts with says it: where
 * the project sees it (its node_modules or a folder above it; the install may be a link), else where it is.
 */
function firebaseToolsFound(dir: string): string {
  const root = realpathSync(firebaseToolsRoot());
  const found = `found ${firebaseToolsVersion()}`;
  for (let at = dir; ; at = dirname(at)) {
    const seen = join(at, "node_modules", "firebase-tools");
    if (existsSync(seen) && realpathSync(seen) === root) {
      const rel = relative(dir, seen);
      return `${found} (${rel.startsWith("..") ? seen : rel})`;
    }
    if (dirname(at) === at) return `${found} (${root}, not the project's: npx firebase in the project needs it there)`;
  }
}

async function run(args: Args): Promise<number> {
  const codebaseDir = join(args.dir, args.codebase);
  useFirebaseToolsFrom(args.dir);
  console.log(`init: ${args.dir}${args.dryRun ? " (dry run: nothing is written)" : ""}`);
  // First, and in one line: what init (and the emulators, and a deploy) need of the project, and how to add it.
  console.log(`  ${FIREBASE_TOOLS_NEEDED}: ${firebaseToolsFound(args.dir)}`);
  const functions = resolveSpec("--functions-package", args.functionsPackage ?? VERSION, codebaseDir, args.dir);
  const cli = resolveSpec("--cli-package", args.cliPackage ?? VERSION, codebaseDir, args.dir);
  const plan = await planInit({
    dir: args.dir,
    codebase: args.codebase,
    specs: { functions: functions.spec, cli: cli.spec },
    tarballs: [functions.copy, cli.copy].filter((copy) => copy !== undefined),
  });
  plan.warnings.unshift(...[functions.warning, cli.warning].filter((warning) => warning !== undefined));
  const changes = changed(plan);
  const would = args.dryRun ? "would " : "";
  for (const copy of plan.copies.filter((c) => c.changed)) {
    console.log(`  ${would}copy ${copy.path}: ${copy.source}, which package.json names (a clone of the app and firebase deploy's build install it from there)`);
  }
  for (const file of changes) console.log(`  ${would}${file.before === undefined ? "create" : "change"} ${file.path}: ${file.what}`);
  for (const path of plan.removals) console.log(`  ${would}remove ${path}: package.json names it no more`);
  console.log(`  ${plan.namesSummary}`);
  console.log(`  ${plan.rulesSummary}`);
  for (const warning of plan.warnings) console.log(`  WARN ${warning}`);
  const anything = changesAnything(plan);
  const install = args.install && (anything || !plan.installed);
  if (args.dryRun) {
    if (install) console.log(`  would run npm install in ${args.codebase}/`);
    if (!anything) console.log(`init: nothing to change: the counters are in ${args.codebase}/ as this version adds them`);
    return EXIT.ok;
  }
  writePlan(plan);
  if (install) {
    console.log(`init: npm install in ${args.codebase}/`);
    const code = await npmInstall(codebaseDir);
    if (code !== 0) {
      console.error(`init: npm install in ${codebaseDir} failed (exit ${code}); the files above are written: run npm install there once the cause is fixed`);
      return EXIT.failed;
    }
  }
  console.log(anything ? "init: done" : `init: nothing to change: the counters are in ${args.codebase}/ as this version adds them`);
  printNext(plan);
  return EXIT.ok;
}

function printNext(plan: Plan): void {
  const only = `functions:${plan.codebase}`;
  console.log(
    [
      "Next:",
      `  set per-project params in ${plan.codebase}/.env.<projectId> (REGION for your database's location, ENFORCE_APP_CHECK=true, CREATE_POLICY)`,
      `  try it: npx firebase emulators:start   (offline: export FIRESTORE_EMULATOR_BINARY_PATH="$(npx --prefix ${plan.codebase} ${CLI_NAME} firestore-jar)" first;`,
      `          ${plan.codebase}/.env.local gives the emulator a short rollup interval: a local burst settles within seconds)`,
      `  deploy: npx firebase deploy --only ${only},firestore   (the preflight runs first; deploys your rules and indexes with ours)`,
    ].join("\n"),
  );
}

export const command: Command<Args> = { name: "init", help: HELP, parse, run };
