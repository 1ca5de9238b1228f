// `firestore-exact-counter preflight` (in this repository: npm run preflight): what `firebase deploy
// --only functions:counters,firestore` checks before it touches the network, offline, with firebase-tools'
// own code (cli/src/preflight/). The predeploy step of the counters' codebase runs it before every deploy;
// run it yourself after changing a param.
import { join } from "node:path";
import { lastValue, readArgv, UsageError, type Command } from "../lib/cli";
import { firebaseToolsRoot, useFirebaseToolsFrom } from "../lib/firebase-tools-internals";
import { withFirestoreEmulator } from "../lib/firestore-emulator";
import { CODEBASE, firebasercProject, projectDir } from "../lib/project";
import { CODEBASE_NAME } from "../init/firebase-json";
import { runPreflight, type CheckResult } from "../preflight";

const HELP = `Usage: firestore-exact-counter preflight [--dir <folder>] [--project <id>] [--codebase <name>] [--now <date>] [--rules]

Checks, offline, what \`firebase deploy --only functions:counters,firestore\` checks before uploading anything:
  runtime        the functions' runtime (engines.node, or runtime in firebase.json) is supported;
                 fails when decommissioned, warns within 90 days of its deprecation
  functions sdk  firebase-functions is installed, recent enough, and matches package.json
  discovery      the functions load and the SDK's manifest can be read (built, and installed: npm install)
  params         every param has a value for the project (<source>/.env, .env.<project>): a deploy
                 never prompts; memory/CPU/concurrency settings are valid
  settings       every param within its range, DEFAULT_SHARDS <= MAX_SHARDS, and
                 ROLLUP_TIMEOUT_SECONDS >= 2 x ROLLUP_INTERVAL_MS + 10 s
  exposure       warns when a project that is not demo-* would deploy the settings open for local
                 use (CREATE_POLICY=signed-in, RATE_LIMIT_PER_MINUTE=0, ENFORCE_APP_CHECK=false)
  manifest       the 6 callables, rollupTotal (v2, event type, document pattern, retry), the
                 scheduled rollupSweep and cleanupDeletedCounter (event type, document, retry)
  placement      rollupTotal's region matches firebase.json firestore.location (nam5 -> us-central1,
                 eur3 -> europe-west1, a regional database -> that region); warns "unknown" when firebase.json
                 names no firestore.location; the database ids agree
  codebase       the functions are codebase "counters" of firebase.json (found among an app's codebases);
                 --only functions:counters deploys all of them and no function of another codebase
                 (warns when it would); no other codebase has a function of the same name
  unique counters  UNIQUE_COUNTERS parses: comma-separated counter-id patterns, each with at most one
                 {name} placeholder (the message names a bad pattern)
  windows        WINDOWED_COUNTERS parses, as UNIQUE_COUNTERS
  mirrors        MIRRORS parses: rules COUNTER_ID_PATTERN=DOCUMENT_PATH_PATTERN:FIELD_PATH, the same
                 placeholder on both sides, a document path (even segments, not in counters/), a
                 valid field path (the message names a bad rule)
  counter kinds  COUNTER_KINDS parses: rules ID_PATTERN=shards:N;maxDelta:N;callers:add|none, shards
                 within MAX_SHARDS, maxDelta within MAX_DELTA, callers add or none, no rule hidden
                 behind an earlier one (the message names a bad rule)
  auto create    AUTO_CREATE parses: rules ID_PATTERN=DOCUMENT_PATTERN, the same placeholder on both
                 sides, a document path not in counters/ (the message names a bad rule)
  extension      EXTENSION_COUNTERS parses: rules DOCUMENT_PATTERN:FIELD=ID_PATTERN of top-level
                 collections' documents, counters UNIQUE_COUNTERS does not reserve (a warning when no
                 MIRRORS rule writes a counter back into its field)
  id patterns    those params together: a window mirrored (@today, @last7Days, @last30Days) of ids
                 that WINDOWED_COUNTERS does not make windowed fails; a MIRRORS or AUTO_CREATE pattern
                 one character away from another param's (post-{id}-likes / post-{id}-like) warns
  admin settings another codebase of firebase.json that depends on @firestore-exact-counter/functions
                 (its admin entry) gives the counters' params (UNIQUE_COUNTERS, MIRRORS, ...) the
                 same values in its own .env files as the counters codebase
  rules          firebase.json's rules file compiles (in a Firestore emulator; FIRESTORE_EMULATOR_HOST
                 if set, otherwise one started for the check)
  rules guarantees  the rules file keeps every guarantee of check-rules (a catch-all rule of an app
                 that opens counters/** fails, naming each guarantee it breaks)
  indexes        firestore.indexes.json passes firebase-tools' validator and keeps the TTL policy
                 and the sweep's collection-group index on exactCounterRollup.dueAt
--dir      the folder holding firebase.json (default: the current folder, or the nearest folder above
           it holding one: the project, when run from its codebase folder)
--project  the project whose params are checked: a project id (lowercase letters, digits, hyphens;
           default: .firebaserc's default project)
--codebase the counters' codebase in firebase.json (default: counters)
--now      check the runtime's support window as of this date (e.g. 2027-03-01)
Needs firebase-tools: the project's own (its devDependency, or a global install).
--rules    only rules and rules guarantees: the predeploy step of firebase.json's firestore section,
           so whenever a deploy includes Firestore rules (starts a Firestore emulator: a few seconds)
Run by firebase deploy as the codebase's predeploy step (PROJECT_DIR and RESOURCE_DIR set), it makes
only the checks that need neither the built functions nor an emulator.
Exit code: 0 when nothing failed (warnings allowed), 1 when a check failed, 2 on bad arguments (an
unknown option, a folder without firebase.json, no project given and none in .firebaserc, no
firebase-tools).`;

interface Args {
  dir: string;
  project: string | undefined;
  codebase: string;
  now: Date;
  rules: boolean;
}

const PROJECT_ID = /^[a-z0-9][a-z0-9-]*$/;

function parse(argv: string[]): Args | "help" {
  const read = readArgv(argv, {
    values: {
      "--project": "a project id (lowercase letters, digits, hyphens)",
      "--dir": "a project folder holding firebase.json",
      "--codebase": "the counters' codebase name",
      "--now": "a date such as 2027-03-01",
    },
    flags: ["--rules"],
  });
  if (read === "help") return read;
  const project = lastValue(read, "--project");
  if (project !== undefined && !PROJECT_ID.test(project)) throw new UsageError(`--project takes a project id (lowercase letters, digits, hyphens), not ${JSON.stringify(project)}`);
  const dir = projectDir(lastValue(read, "--dir"));
  const codebase = lastValue(read, "--codebase") ?? CODEBASE;
  if (!CODEBASE_NAME.test(codebase)) throw new UsageError(`--codebase takes a codebase name of lowercase letters, digits, _ and -, not ${JSON.stringify(codebase)}`);
  const nowValue = lastValue(read, "--now");
  const now = nowValue === undefined ? new Date() : new Date(nowValue);
  if (Number.isNaN(now.getTime())) throw new UsageError(`--now takes a date such as 2027-03-01, not ${JSON.stringify(nowValue)}`);
  return { dir, project, codebase, now, rules: read.flags.has("--rules") };
}

function defaultProject(dir: string): string {
  const project = firebasercProject(dir);
  if (project === undefined) throw new UsageError(`no --project given and no default project in ${join(dir, ".firebaserc")}`);
  return project;
}

const MARK: Record<CheckResult["status"], string> = { ok: "ok  ", warn: "WARN", fail: "FAIL" };

/**
 * Whether `firebase deploy` runs this as a predeploy hook of firebase.json: firebase-tools sets
 * PROJECT_DIR and RESOURCE_DIR for hook commands (its deploy/lifecycleHooks.js), and nothing else does.
 * Then the build has not run yet, so only the checks that need no build and no emulator run.
 */
function inPredeployHook(): boolean {
  return process.env.PROJECT_DIR !== undefined && process.env.RESOURCE_DIR !== undefined;
}

async function run(args: Args): Promise<number> {
  const projectId = args.project ?? defaultProject(args.dir);
  const predeploy = !args.rules && inPredeployHook();
  useFirebaseToolsFrom(args.dir);
  firebaseToolsRoot(); // every check runs firebase-tools' code: without it, say what to install first
  console.log(`preflight${args.rules ? " (rules)" : predeploy ? " (predeploy)" : ""}: ${args.dir} for project ${projectId} on Node ${process.versions.node}`);
  const options = { projectDir: args.dir, projectId, now: args.now, codebase: args.codebase, rulesOnly: args.rules };
  const results = predeploy
    ? await runPreflight({ ...options, firestoreHost: "", predeploy })
    : await withFirestoreEmulator((firestoreHost) => runPreflight({ ...options, firestoreHost }));
  const width = Math.max(...results.map((r) => r.check.length));
  for (const r of results) console.log(`  ${MARK[r.status]} ${r.check.padEnd(width)}  ${r.message}`);
  const failed = results.filter((r) => r.status === "fail").length;
  const warned = results.filter((r) => r.status === "warn").length;
  console.log(failed === 0 ? `preflight: passed${warned ? ` with ${warned} warning(s)` : ""}` : `preflight: ${failed} check(s) failed`);
  return failed === 0 ? 0 : 1;
}

export const command: Command<Args> = { name: "preflight", help: HELP, parse, run };
