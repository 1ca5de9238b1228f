// `firestore-exact-counter backfill`: counts the documents DOCUMENT_COUNTERS watches that are not counted
// yet, and takes out the counted ones that are gone or no longer match (docs/documents.md). The backfill is
// the functions package's (the admin entry's backfillDocuments: functions/src/documents/backfill.ts, exact while the
// triggers run and the app writes); this is the command line: the arguments, the project folder (the
// counters codebase's params: DOCUMENT_COUNTERS, the new counters' shape, DATABASE_ID), progress, the
// lines and the exit code. Its options and credentials are reconcile's. With --board, it puts on a leaderboard
// the counters that existed before LEADERBOARDS named them (the admin entry's backfillBoard:
// functions/src/leaderboard/backfill.ts, exact while the rollup commits).
// The admin SDK and the admin entry load when a run starts: --help and a mistake answer without them.
import type { BackfillProgress, BackfillReport, RuleBackfill } from "@firestore-exact-counter/functions/admin";
import { parseDocumentCounterRules, ruleNaming } from "../../../functions/src/model/document-rules";
import { isBoardName, parseLeaderboardRules, rulesOfBoard } from "../../../functions/src/model/leaderboard-rules";
import { newCounterRuleOf } from "../../../functions/src/model/new-counter";
import { EXIT, integerValue, lastValue, readArgv, UsageError, type Command } from "../lib/cli";
import { answers } from "../lib/firestore-emulator";
import { configuredFirestoreHost, countersSourceDir, firebasercProject, projectDir, ProjectError, readFirebaseJson, runningParams } from "../lib/project";
import { loadAdminEntry } from "../lib/admin-entry";

const PROGRESS_EVERY_MS = 2_000;
/** The shell's code for a run stopped by Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;
const START_EMULATORS_FIRST = "start the emulators first (firebase emulators:start; in the firestore-exact-counter repository: npm start)";

const HELP = `Usage: firestore-exact-counter backfill [--dir <folder>] [--project <id>] [--counter <id>] [--dry-run] [--force]
                             [--concurrency <n>] [--start-after <position>] [--quiet]
       firestore-exact-counter backfill --board <board> [--dir <folder>] [--project <id>] [--dry-run]

Counts, in the counters DOCUMENT_COUNTERS names, every document its rules watch that is not counted
yet (documents that existed before the rules, or since a counter's deleteCounter), and takes out of the
count every counted document that no longer exists or no longer matches. Each document is decided the
way the document triggers decide it, by its version, so the backfill is exact while the triggers run
and the app writes, and a second run changes nothing. A counter that does not exist yet is created
by its first counted document. --counter: only that counter (a rule must name it).

Prints, per rule, the documents seen, counted and taken out (and those no counter can count: a
wildcard's value no counter id can hold), then the totals. --dry-run reads the same and writes nothing.
Progress goes to stderr every 2 s (--quiet: none). Interrupted (Ctrl-C), it prints the position to
resume from: --start-after <position> goes on from there.

A typo in a rule (posts/{post}/coments/{c}, a condition on state for status) passes every check of its
syntax, and a backfill would take every counted document out. So a run first reads what it would do,
as --dry-run does, and refuses, writing nothing, when a rule finds no document at all while its counters
count something, or would take out most of what they count: one line per rule says what it would take
out and the likely typo. A rule that finds no document and counts nothing (an app without comments yet)
only gets a note on stderr. --dry-run prints the same lines first. --force writes anyway (and reads everything once, not twice).
--concurrency: counters written at once, 1 to 100 (default 8).

--board <board>: instead, puts on that leaderboard (LEADERBOARDS) every counter its rules name that is not
on it yet (a counter that existed before the rule), with its entry at its total, each conditioned on the
counter being unchanged since it was read (exact while the rollup commits), and removes the board's
entries of counters that are gone or no longer named. Prints the counters seen, joined and removed. A
second run changes nothing.
The rules and the new counters' shape (DEFAULT_SHARDS, COUNTER_KINDS, WINDOWED_COUNTERS) come from the
counters codebase's .env and .env.<project> in the project folder, as a deploy reads them.
--dir: the Firebase project folder (default: the current folder, or the nearest above it with
firebase.json); --project: default GCLOUD_PROJECT, else .firebaserc's default project. Connects to the
Firestore emulator when FIRESTORE_EMULATOR_HOST is set, or by default for demo-* projects
(firebase.json's port); otherwise to the real project with Application Default Credentials.

Exit codes: 0 done (or nothing to do); 1 some counter could not be done now (each is listed: a counter
still being deleted, one that kept changing; run it again), a run refused as a likely typo (a dry run:
one that would be), or an unexpected error; 2 bad arguments, a
DOCUMENT_COUNTERS that does not parse or is empty, a --counter no rule names, a LEADERBOARDS that does
not parse or a --board no rule names (nothing read); 3 the
Firestore emulator does not answer (start the emulators first); 130 interrupted (after printing where to resume).`;

interface Args {
  project: string;
  dir: string;
  counter: string | undefined;
  /** --board: the leaderboard to backfill instead of the document counters. */
  board: string | undefined;
  dryRun: boolean;
  force: boolean;
  quiet: boolean;
  concurrency: number;
  startAfter: string | undefined;
  params: Record<string, string>;
}

function parse(argv: string[]): Args | "help" {
  const read = readArgv(argv, {
    flags: ["--dry-run", "--force", "--quiet"],
    values: {
      "--dir": "the Firebase project folder (holds firebase.json)",
      "--project": "a project id",
      "--counter": "a counter id",
      "--concurrency": "a whole number from 1 to 100",
      "--start-after": "a position a backfill printed",
      "--board": "a board's name",
    },
  });
  if (read === "help") return read;
  const dir = projectDir(lastValue(read, "--dir"));
  const project = lastValue(read, "--project") ?? process.env.GCLOUD_PROJECT ?? firebasercProject(dir);
  if (project === undefined) throw new UsageError(`no --project given, no GCLOUD_PROJECT, and no default project in ${dir}/.firebaserc`);
  const concurrency = lastValue(read, "--concurrency");
  const counter = lastValue(read, "--counter");
  const startAfter = lastValue(read, "--start-after");
  const board = lastValue(read, "--board");
  if (board !== undefined) {
    for (const other of ["--counter", "--start-after", "--concurrency"]) {
      if (lastValue(read, other) !== undefined) throw new UsageError(`--board backfills a leaderboard: ${other} is an option of the document counters' backfill`);
    }
    return { project, dir, counter: undefined, board, dryRun: read.flags.has("--dry-run"), force: false, quiet: read.flags.has("--quiet"), concurrency: 1, startAfter: undefined, params: boardParams(dir, project, board) };
  }
  if (startAfter !== undefined && !/^\d+:(documents|records):/.test(startAfter)) throw new UsageError(`--start-after ${startAfter}: not a position a backfill printed (<rule>:documents:<path> or <rule>:records:<counter>)`);
  return {
    project,
    dir,
    counter,
    board: undefined,
    dryRun: read.flags.has("--dry-run"),
    force: read.flags.has("--force"),
    quiet: read.flags.has("--quiet"),
    concurrency: concurrency === undefined ? 8 : integerValue("--concurrency", concurrency, { min: 1, max: 100 }),
    startAfter,
    params: checkedParams(dir, project, counter),
  };
}

/**
 * The counters codebase's params for the project, read as a deploy reads them, and what `parse` makes of
 * them (it throws on a rule that does not parse); a usage error naming where to fix it otherwise.
 */
function projectParams<T>(dir: string, project: string, parse: (params: Record<string, string>) => T): { params: Record<string, string>; parsed: T; where: string } {
  let source: string;
  try {
    source = countersSourceDir(dir);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const where = `${source}/.env or .env.${project}`;
  try {
    const params = runningParams(source, project);
    return { params, parsed: parse(params), where };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(error instanceof ProjectError ? message : `${message}; fix it in ${where}`);
  }
}

/** The counters codebase's params for the project, with rules to backfill (and one naming --counter); a usage error otherwise. */
function checkedParams(dir: string, project: string, counter: string | undefined): Record<string, string> {
  const { params, parsed: rules, where } = projectParams(dir, project, (p) => {
    const parsed = parseDocumentCounterRules("DOCUMENT_COUNTERS", p.DOCUMENT_COUNTERS ?? "");
    newCounterRuleOf(p, "documents");
    return parsed;
  });
  if (rules.length === 0) throw new UsageError(`DOCUMENT_COUNTERS is empty in ${where}: there is nothing to backfill`);
  if (counter !== undefined && ruleNaming(rules, counter) === undefined) throw new UsageError(`--counter ${counter}: no DOCUMENT_COUNTERS rule names it (${where})`);
  return params;
}

/** The counters codebase's params for the project, with a LEADERBOARDS rule of `board`; a usage error otherwise. */
function boardParams(dir: string, project: string, board: string): Record<string, string> {
  if (!isBoardName(board)) throw new UsageError(`--board ${board}: not a board's name (1-64 characters of A-Z, a-z, 0-9, _ and -)`);
  const { params, parsed: rules, where } = projectParams(dir, project, (p) => parseLeaderboardRules("LEADERBOARDS", p.LEADERBOARDS ?? ""));
  if (rulesOfBoard(rules, board).length === 0) throw new UsageError(`--board ${board}: no LEADERBOARDS rule names it (${where})`);
  return params;
}

function ruleLine(r: RuleBackfill, dryRun: boolean): string {
  const verb = dryRun ? "would count" : "counted";
  const parts = [`rule ${r.position} ${r.rule}`, `seen ${r.seen}`, `${verb} ${r.counted}`, `${dryRun ? "would take out" : "taken out"} ${r.takenOut}`, `${r.delta < 0 ? "" : "+"}${r.delta}`];
  if (r.created > 0) parts.push(`${r.created} counter${r.created === 1 ? "" : "s"} ${dryRun ? "to create" : "created"}`);
  if (r.notCountable > 0) parts.push(`not countable ${r.notCountable} (a wildcard's value no counter id can hold)`);
  for (const problem of r.problems) parts.push(`NOT DONE: ${problem}`);
  return parts.join("  ");
}

function progressLine(p: BackfillProgress, startedMs: number, checking: boolean): string {
  const seconds = Math.max(0.001, (Date.now() - startedMs) / 1000);
  const [counted, takenOut] = checking ? ["would count", "would take out"] : ["counted", "taken out"];
  return `backfill: ${checking ? "checking " : ""}rule ${p.rule}, ${p.phase}: ${p.report.seen} seen (${(p.report.seen / seconds).toFixed(1)}/s), ${p.report.counted} ${counted}, ${p.report.takenOut} ${takenOut}`;
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
  const [{ deleteApp, initializeApp }, { backfillDocuments, backfillBoard }] = await loadAdminEntry();
  const app = initializeApp({ projectId: args.project }, `backfill-${Date.now()}`);
  if (args.board !== undefined) {
    try {
      const report = await backfillBoard(args.board, { app, env: args.params, dryRun: args.dryRun });
      const [join, remove] = report.dryRun ? ["would join", "would remove"] : ["joined", "removed"];
      console.log(`${args.project}: board ${report.board}: ${report.seen} counters seen, ${join} ${report.joined}, ${remove} ${report.removed}${report.dryRun ? " (dry run: nothing written)" : ""}`);
      return EXIT.ok;
    } finally {
      await deleteApp(app);
    }
  }
  const started = Date.now();
  // The first page of the check and the first page of the run each show at once, so an operator sees the run
  // has begun (however quickly the check before it ended); later pages every PROGRESS_EVERY_MS.
  let lastProgress: { ms: number; checking: boolean } | undefined;
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
  const options = {
    app,
    env: args.params,
    concurrency: args.concurrency,
    ...(args.counter === undefined ? {} : { counter: args.counter }),
    ...(args.startAfter === undefined ? {} : { startAfter: args.startAfter }),
  };
  const progress = (checking: boolean) => (p: BackfillProgress) => {
    // A check writes nothing: only the run's own positions are places to resume from.
    if (!checking) position = p.position;
    if (!args.quiet && (lastProgress === undefined || lastProgress.checking !== checking || Date.now() - lastProgress.ms >= PROGRESS_EVERY_MS)) {
      lastProgress = { ms: Date.now(), checking };
      console.error(progressLine(p, started, checking));
    }
  };
  try {
    // Unless forced, what the run would do is read first, and what looks like a typo in a rule refuses it.
    if (!args.dryRun && !args.force) {
      const check = await backfillDocuments({ ...options, dryRun: true, onProgress: progress(true) });
      if (check.warnings.length > 0) {
        for (const warning of check.warnings) console.error(`backfill: refused, nothing written: ${warning}`);
        console.error("backfill: if that is what you mean, run it again with --force");
        return EXIT.failed;
      }
    }
    report = await backfillDocuments({ ...options, dryRun: args.dryRun, force: true, onProgress: progress(args.dryRun) });
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    await deleteApp(app);
  }
  for (const warning of report.warnings) console.log(`WARNING ${warning}; a run without --force refuses it`);
  for (const notice of report.notices) console.error(`backfill: note: ${notice}`);
  for (const rule of report.rules) console.log(ruleLine(rule, report.dryRun));
  const problems = report.rules.reduce((n, r) => n + r.problems.length, 0);
  const verb = report.dryRun ? "would count" : "counted";
  console.log(
    `${args.project}: ${report.seen} documents seen, ${verb} ${report.counted}, ${report.dryRun ? "would take out" : "took out"} ${report.takenOut}` +
      `${problems > 0 ? `; ${problems} not done (run it again)` : ""}${report.dryRun ? " (dry run: nothing written)" : ""}`,
  );
  return problems > 0 || report.warnings.length > 0 ? EXIT.failed : EXIT.ok;
}

export const command: Command<Args> = { name: "backfill", help: HELP, parse, run };
