// `firestore-exact-counter backfill`: counts the documents DOCUMENT_COUNTERS watches that are not counted
// yet, and takes out the counted ones that are gone or no longer match (docs/documents.md). The backfill is
// the functions package's (the admin entry's backfillDocuments: functions/src/documents/backfill.ts, exact while the
// triggers run and the app writes); this is the command line: the arguments, the project folder (the
// counters codebase's params: DOCUMENT_COUNTERS, the new counters' shape, DATABASE_ID), progress, the
// lines and the exit code. Its options and credentials are reconcile's.
// The admin SDK and the admin entry load when a run starts: --help and a mistake answer without them.
import type { BackfillProgress, BackfillReport, RuleBackfill } from "@firestore-exact-counter/functions/admin";
import { parseDocumentCounterRules, ruleNaming } from "../../../functions/src/model/document-rules";
import { newCounterRuleOf } from "../../../functions/src/model/new-counter";
import { EXIT, integerValue, lastValue, readArgv, UsageError, type Command } from "../lib/cli";
import { answers } from "../lib/firestore-emulator";
import { configuredFirestoreHost, countersSourceDir, firebasercProject, projectDir, ProjectError, readFirebaseJson, runningParams } from "../lib/project";
import { loadAdminEntry } from "../lib/admin-entry";

const PROGRESS_EVERY_MS = 2_000;
/** The shell's code for a run stopped by Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;
const START_EMULATORS_FIRST = "start the emulators first (firebase emulators:start; in the firestore-exact-counter repository: npm start)";

const HELP = `Usage: firestore-exact-counter backfill [--dir <folder>] [--project <id>] [--counter <id>] [--dry-run]
                             [--concurrency <n>] [--start-after <position>] [--quiet]

Counts, in the counters DOCUMENT_COUNTERS names, every document its rules watch that is not counted
yet (documents that existed before the rules, or since a counter's deleteCounter), and takes out of the
count every counted document that no longer exists or no longer matches. Each document is decided the
way the document triggers decide it, by its version, so the backfill is exact while the triggers run
and the app writes, and a second run changes nothing. A counter that does not exist yet is created
by its first counted document. --counter: only that counter (a rule must name it).

Prints, per rule, the documents seen, counted and taken out, then the totals. --dry-run reads the same
and writes nothing. Progress goes to stderr every 2 s (--quiet: none). Interrupted (Ctrl-C), it prints
the position to resume from: --start-after <position> goes on from there.
--concurrency: counters written at once, 1 to 100 (default 8).
The rules and the new counters' shape (DEFAULT_SHARDS, COUNTER_KINDS, WINDOWED_COUNTERS) come from the
counters codebase's .env and .env.<project> in the project folder, as a deploy reads them.
--dir: the Firebase project folder (default: the current folder, or the nearest above it with
firebase.json); --project: default GCLOUD_PROJECT, else .firebaserc's default project. Connects to the
Firestore emulator when FIRESTORE_EMULATOR_HOST is set, or by default for demo-* projects
(firebase.json's port); otherwise to the real project with Application Default Credentials.

Exit codes: 0 done (or nothing to do); 1 some counter could not be done now (each is listed: a counter
still being deleted, one that kept changing; run it again) or an unexpected error; 2 bad arguments, a
DOCUMENT_COUNTERS that does not parse or is empty, or a --counter no rule names (nothing read); 3 the
Firestore emulator does not answer (start the emulators first); 130 interrupted (after printing where to resume).`;

interface Args {
  project: string;
  dir: string;
  counter: string | undefined;
  dryRun: boolean;
  quiet: boolean;
  concurrency: number;
  startAfter: string | undefined;
  params: Record<string, string>;
}

function parse(argv: string[]): Args | "help" {
  const read = readArgv(argv, {
    flags: ["--dry-run", "--quiet"],
    values: {
      "--dir": "the Firebase project folder (holds firebase.json)",
      "--project": "a project id",
      "--counter": "a counter id",
      "--concurrency": "a whole number from 1 to 100",
      "--start-after": "a position a backfill printed",
    },
  });
  if (read === "help") return read;
  const dir = projectDir(lastValue(read, "--dir"));
  const project = lastValue(read, "--project") ?? process.env.GCLOUD_PROJECT ?? firebasercProject(dir);
  if (project === undefined) throw new UsageError(`no --project given, no GCLOUD_PROJECT, and no default project in ${dir}/.firebaserc`);
  const concurrency = lastValue(read, "--concurrency");
  const counter = lastValue(read, "--counter");
  const startAfter = lastValue(read, "--start-after");
  if (startAfter !== undefined && !/^\d+:(documents|records):/.test(startAfter)) throw new UsageError(`--start-after ${startAfter}: not a position a backfill printed (<rule>:documents:<path> or <rule>:records:<counter>)`);
  return {
    project,
    dir,
    counter,
    dryRun: read.flags.has("--dry-run"),
    quiet: read.flags.has("--quiet"),
    concurrency: concurrency === undefined ? 8 : integerValue("--concurrency", concurrency, { min: 1, max: 100 }),
    startAfter,
    params: checkedParams(dir, project, counter),
  };
}

/** The counters codebase's params for the project, with rules to backfill (and one naming --counter); a usage error otherwise. */
function checkedParams(dir: string, project: string, counter: string | undefined): Record<string, string> {
  let source: string;
  try {
    source = countersSourceDir(dir);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const where = `${source}/.env or .env.${project}`;
  let params: Record<string, string>;
  let rules;
  try {
    params = runningParams(source, project);
    rules = parseDocumentCounterRules("DOCUMENT_COUNTERS", params.DOCUMENT_COUNTERS ?? "");
    newCounterRuleOf(params, "documents");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(error instanceof ProjectError ? message : `${message}; fix it in ${where}`);
  }
  if (rules.length === 0) throw new UsageError(`DOCUMENT_COUNTERS is empty in ${where}: there is nothing to backfill`);
  if (counter !== undefined && ruleNaming(rules, counter) === undefined) throw new UsageError(`--counter ${counter}: no DOCUMENT_COUNTERS rule names it (${where})`);
  return params;
}

function ruleLine(r: RuleBackfill, dryRun: boolean): string {
  const verb = dryRun ? "would count" : "counted";
  const parts = [`rule ${r.position} ${r.rule}`, `seen ${r.seen}`, `${verb} ${r.counted}`, `${dryRun ? "would take out" : "taken out"} ${r.takenOut}`, `${r.delta < 0 ? "" : "+"}${r.delta}`];
  if (r.created > 0) parts.push(`${r.created} counter${r.created === 1 ? "" : "s"} ${dryRun ? "to create" : "created"}`);
  for (const problem of r.problems) parts.push(`NOT DONE: ${problem}`);
  return parts.join("  ");
}

function progressLine(p: BackfillProgress, startedMs: number): string {
  const seconds = Math.max(0.001, (Date.now() - startedMs) / 1000);
  return `backfill: rule ${p.rule}, ${p.phase}: ${p.report.seen} seen (${(p.report.seen / seconds).toFixed(1)}/s), ${p.report.counted} counted, ${p.report.takenOut} taken out`;
}

async function run(args: Args): Promise<number> {
  if (process.env.FIRESTORE_EMULATOR_HOST === undefined && args.project.startsWith("demo-")) {
    process.env.FIRESTORE_EMULATOR_HOST = configuredFirestoreHost(readFirebaseJson(args.dir)); // as firebase emulators:start serves it
  }
  const emulator = process.env.FIRESTORE_EMULATOR_HOST;
  if (emulator !== undefined) {
    if (!(await answers(emulator))) {
      console.error(`backfill: the Firestore emulator does not answer at ${emulator}: ${START_EMULATORS_FIRST} (in another terminal).`);
      return EXIT.emulatorsDown;
    }
    process.env.METADATA_SERVER_DETECTION ??= "none";
  }
  const [{ deleteApp, initializeApp }, { backfillDocuments }] = await loadAdminEntry();
  const app = initializeApp({ projectId: args.project }, `backfill-${Date.now()}`);
  const started = Date.now();
  let lastProgress: number | undefined; // the first page shows at once, so an operator sees the run has begun
  let position: string | undefined;
  const interrupted = (signal: NodeJS.Signals) => () => {
    const resume = position === undefined ? "nothing done yet; run it again" : `resume with --start-after '${position}'`;
    console.error(`backfill: interrupted (${signal}); every write so far is whole; ${resume}`);
    process.exit(INTERRUPTED);
  };
  const onSigint = interrupted("SIGINT");
  const onSigterm = interrupted("SIGTERM");
  process.once("SIGINT", onSigint);
  process.once("SIGTERM", onSigterm);
  let report: BackfillReport;
  try {
    report = await backfillDocuments({
      app,
      env: args.params,
      dryRun: args.dryRun,
      concurrency: args.concurrency,
      ...(args.counter === undefined ? {} : { counter: args.counter }),
      ...(args.startAfter === undefined ? {} : { startAfter: args.startAfter }),
      onProgress: (progress) => {
        position = progress.position;
        if (!args.quiet && (lastProgress === undefined || Date.now() - lastProgress >= PROGRESS_EVERY_MS)) {
          lastProgress = Date.now();
          console.error(progressLine(progress, started));
        }
      },
    });
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    await deleteApp(app);
  }
  for (const rule of report.rules) console.log(ruleLine(rule, report.dryRun));
  const problems = report.rules.reduce((n, r) => n + r.problems.length, 0);
  const verb = report.dryRun ? "would count" : "counted";
  console.log(
    `${args.project}: ${report.seen} documents seen, ${verb} ${report.counted}, ${report.dryRun ? "would take out" : "took out"} ${report.takenOut}` +
      `${problems > 0 ? `; ${problems} not done (run it again)` : ""}${report.dryRun ? " (dry run: nothing written)" : ""}`,
  );
  return problems > 0 ? EXIT.failed : EXIT.ok;
}

export const command: Command<Args> = { name: "backfill", help: HELP, parse, run };
