// `firestore-exact-counter reconcile` (in this repository: npm run reconcile): compares every counter's
// total with the sum of its shards (and a unique counter's shard sum with its members); reports drift;
// fixes it with --fix. The check and the repair are the functions package's (the admin entry's reconcile,
// beside the rollup whose commit it repairs through); this is the command line: the arguments, the project
// folder (the counters codebase's params: MIRRORS, DATABASE_ID; for a demo-* project the Firestore
// emulator's port), progress, the lines and the exit code.
// The admin SDK and the admin entry load when a run starts: --help and a mistake answer without them.
import type { CounterReport, ToolOptions } from "@firestore-exact-counter/functions/admin";
import { STUCK_INTERVALS, STUCK_MARGIN_MS, stuckAfterMsFor } from "../../../functions/src/model/stuck";
import { EXIT, integerValue, lastValue, readArgv, UsageError, type Command } from "../lib/cli";
import { parseMirrorRules } from "../../../functions/src/model/mirror-rules";
import { parseDocumentCounterRules } from "../../../functions/src/model/document-rules";
import { answers } from "../lib/firestore-emulator";
import { configuredFirestoreHost, countersSourceDir, firebasercProject, projectDir, ProjectError, readFirebaseJson, runningParams } from "../lib/project";
import { progressLine } from "../lib/progress";
import { loadAdminEntry } from "../lib/admin-entry";

/** A progress line on stderr at most this often (a run over 100,000 counters takes minutes). */
const PROGRESS_EVERY_MS = 2_000;
/** The shell's code for a run stopped by Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;
/** Some counter is stuck (and none drifted): its own code, so a cron job can page on it. */
const STUCK = 4;

/** What to do when the emulator does not answer. */
const START_EMULATORS_FIRST = "start the emulators first (firebase emulators:start; in the firestore-exact-counter repository: npm start)";

const HELP = `Usage: firestore-exact-counter reconcile [--dir <folder>] [--project <id>] [--counter <id>]...
                              [--fix] [--json] [--concurrency <n>] [--start-after <id>] [--quiet]
                              [--interval-ms <ms>] [--stuck-after <seconds>]

For every counter (or each --counter), compares total with the sum of its shards and prints one line
per counter whose status is not ok (all of them with --json), then a summary.
  ok        total equals the shard sum
  lagging   it differs, but a shard changed after the sum the total holds: a rollup is due (normal
            for about one rollup interval under load); age= says how long ago the oldest write
            missing from the total was committed (at least)
  stuck     lagging, with that write older than ${STUCK_INTERVALS} rollup intervals + ${STUCK_MARGIN_MS / 60_000} min (the sweep's
            period and a minute): nothing will bring it in by itself; --fix commits the sum
            (--interval-ms: your ROLLUP_INTERVAL_MS, default 1000; --stuck-after sets the age directly)
  drift     it differs although the total claims to cover every shard write; or, for a unique
            counter, the shard sum differs from the number of member documents (read at one time);
            or, for a document counter (DOCUMENT_COUNTERS), the shard sum differs from count() (or
            sum() of the safe integers, as the counter adds them) of its documents read at the same
            time (documents= and document-drift=; a document written in the last moments may still
            have its event on the way: check again); or a MIRRORS target's field holds another
            value than the counter, read together (mirror <path>:<field>=<value>: someone else
            wrote it, such as a client the app's rules let)
  overflow  the shard sum is beyond 2^53 - 1
  missing   a --counter names no counter (no counters/<id> document)
Also lists shard documents outside 0..numShards-1 (stray) and missing shards, shards without writes
(written before shards counted their applied writes: such a counter never grows, and each rollup of it
sums twice; --fix gives them writes 0, exactly, while increments go on), and for unique counters
members= (member documents) and member-drift= (shard sum - members).
--fix writes the shard sum as the total (a rollup commit, conditioned on the parent being unchanged),
and to the counter's mirrors (MIRRORS from the counters' codebase's .env and .env.<project>) in the
same write. For a unique counter whose shard sum differs from its members, --fix first adds the
difference to shard 0 (exact while setMember calls run), then commits the new sum. For a document
counter whose shards differ from its documents, --fix runs the backfill of that counter (exact while
the triggers run and the app writes; the rollup then commits the new sum), unless that looks like a
typo in its rule (backfill --counter <id> --force does it then).
Many counters: --concurrency checks that many at once (default 16; reports stay in id order). Progress
goes to stderr (done of a total taken with one count() aggregation, rate, time left); --quiet turns it
off. Interrupted (Ctrl-C), it prints the id to resume from: --start-after <id> resumes after it.
Connects to the Firestore emulator when FIRESTORE_EMULATOR_HOST is set, or by default for demo-*
projects (firebase.json's port); otherwise to the real project with Application Default Credentials.

--dir: the Firebase project folder (default: the current folder, or the nearest above it with
firebase.json); --project: default GCLOUD_PROJECT, else .firebaserc's default project.
--concurrency takes 1 to 500; --interval-ms and --stuck-after a whole number from 1 up.

Exit codes: 0 every counter is ok or was fixed; 1 drift or lag remains (or an unexpected error);
2 bad arguments, a MIRRORS or DOCUMENT_COUNTERS param that does not parse (nothing checked), or a --counter that does
not exist (the other counters are still checked; drift and stuck outrank it); 3 the Firestore emulator does not answer (start the emulators first);
4 a counter is stuck and none drifted; 130 interrupted (after printing where to resume).`;

interface Args {
  dir: string;
  project: string;
  counterIds: string[];
  fix: boolean;
  json: boolean;
  concurrency: number;
  startAfter: string | undefined;
  quiet: boolean;
  stuckAfterMs: number;
}

function parse(argv: string[]): Args | "help" {
  const read = readArgv(argv, {
    flags: ["--fix", "--json", "--quiet"],
    values: {
      "--dir": "the Firebase project folder (holds firebase.json)",
      "--project": "a project id",
      "--counter": "a counter id",
      "--concurrency": "a whole number from 1 to 500",
      "--start-after": "a counter id",
      "--interval-ms": "your ROLLUP_INTERVAL_MS, a whole number of milliseconds",
      "--stuck-after": "a whole number of seconds",
    },
  });
  if (read === "help") return read;
  const positive = { min: 1, max: Number.MAX_SAFE_INTEGER };
  const intervalMs = lastValue(read, "--interval-ms");
  const stuckAfter = lastValue(read, "--stuck-after");
  const concurrency = lastValue(read, "--concurrency");
  const dir = projectDir(lastValue(read, "--dir"));
  const project = lastValue(read, "--project") ?? process.env.GCLOUD_PROJECT ?? firebasercProject(dir);
  if (project === undefined) throw new UsageError(`no --project given, no GCLOUD_PROJECT, and no default project in ${dir}/.firebaserc`);
  return {
    dir,
    project,
    counterIds: read.values.get("--counter") ?? [],
    fix: read.flags.has("--fix"),
    json: read.flags.has("--json"),
    quiet: read.flags.has("--quiet"),
    concurrency: concurrency === undefined ? 16 : integerValue("--concurrency", concurrency, { min: 1, max: 500 }),
    startAfter: lastValue(read, "--start-after"),
    // --stuck-after wins over the threshold --interval-ms computes, whatever their order.
    stuckAfterMs:
      stuckAfter !== undefined
        ? integerValue("--stuck-after", stuckAfter, positive) * 1000
        : stuckAfterMsFor(intervalMs === undefined ? 1000 : integerValue("--interval-ms", intervalMs, positive)),
  };
}

function line(r: CounterReport): string {
  if (r.status === "missing") return `${r.status.padEnd(8)} ${r.counterId}  no such counter (no counters/${r.counterId} document)`;
  const parts = [`${r.status.padEnd(8)} ${r.counterId}`, `total=${String(r.total)}`, `sum=${String(r.sum)}`];
  if (r.drift !== null && r.drift !== 0) parts.push(`drift=${r.drift}`);
  if (r.missingForMs !== null) parts.push(`age=${(r.missingForMs / 1000).toFixed(1)}s`);
  if (r.unique) parts.push(`members=${String(r.members)}`);
  if (r.memberDrift !== null && r.memberDrift !== 0) parts.push(`member-drift=${r.memberDrift}`);
  const d = r.documents;
  if (d !== undefined) {
    parts.push(d.documents === null ? "documents=? (in more than one collection: run backfill)" : `documents=${d.documents}`);
    if (d.drift !== null && d.drift !== 0) parts.push(`document-drift=${d.drift}`);
    if (d.backfill !== null) parts.push(`backfilled: counted ${d.backfill.counted}, took out ${d.backfill.takenOut}${d.backfill.problems.length > 0 ? ` (${d.backfill.problems.join("; ")})` : ""}`);
  }
  for (const m of r.staleMirrors) parts.push(`mirror ${m.path}:${m.field}=${JSON.stringify(m.holds)} (the counter holds ${m.expected})`);
  if (r.strayShards.length > 0) parts.push(`stray shards: ${r.strayShards.join(",")}`);
  if (r.missingShards.length > 0) parts.push(`missing shards: ${r.missingShards.join(",")}`);
  if (r.unmeasuredShards.length > 0) parts.push(`shards without writes: ${r.unmeasuredShards.length}${r.writesAdded > 0 ? " (writes added)" : ""}`);
  if (r.fixed) parts.push("FIXED");
  return parts.join("  ");
}

async function run(args: Args): Promise<number> {
  if (process.env.FIRESTORE_EMULATOR_HOST === undefined && args.project.startsWith("demo-")) {
    process.env.FIRESTORE_EMULATOR_HOST = configuredFirestoreHost(readFirebaseJson(args.dir)); // as firebase emulators:start serves it
  }
  const emulator = process.env.FIRESTORE_EMULATOR_HOST;
  if (emulator !== undefined) {
    // Against a stopped emulator the admin SDK retries for about 45 s and then prints a gRPC stack: ask first.
    if (!(await answers(emulator))) {
      console.error(`The Firestore emulator does not answer at ${emulator}: ${START_EMULATORS_FIRST} (in another terminal).`);
      return EXIT.emulatorsDown;
    }
    // No Google metadata server to look for next to an emulator.
    process.env.METADATA_SERVER_DETECTION ??= "none";
  }
  const env = checkedParams(args.dir, args.project);
  if (typeof env === "string") {
    console.error(env);
    return EXIT.usage;
  }
  const [{ initializeApp }, { countCounters, reconcile }] = await loadAdminEntry();
  // Which counters, and where: what the count and the run share.
  const selection: ToolOptions & Parameters<typeof countCounters>[0] = {
    app: initializeApp({ projectId: args.project }),
    env,
    ...(args.counterIds.length ? { counterIds: args.counterIds } : {}),
    ...(args.startAfter !== undefined ? { startAfter: args.startAfter } : {}),
  };
  const options: Parameters<typeof reconcile>[0] = { ...selection, fix: args.fix, concurrency: args.concurrency, stuckAfterMs: args.stuckAfterMs };
  const total = await countCounters(selection);
  const started = Date.now();
  let done = 0;
  let lastId: string | undefined;
  let lastProgress = started;
  const progress = () => progressLine({ done, total, elapsedMs: Date.now() - started });
  // Reports arrive in id order, each after every counter before it: lastId is a safe place to resume.
  const interrupted = (signal: NodeJS.Signals) => () => {
    const resume = lastId === undefined ? "nothing checked yet; run it again" : `resume with --start-after ${lastId}`;
    console.error(`reconcile: interrupted (${signal}) after ${done}/${total} counters; ${resume}`);
    process.exit(INTERRUPTED);
  };
  process.once("SIGINT", interrupted("SIGINT"));
  process.once("SIGTERM", interrupted("SIGTERM"));
  const counts: Record<string, number> = {};
  let drifted = 0; // drift or overflow left: a wrong total
  let stuck = 0;
  let lagging = 0;
  let missing = 0; // a --counter that names no counter
  for await (const report of reconcile(options)) {
    done++;
    lastId = report.counterId;
    if (!args.quiet && Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = Date.now();
      console.error(`reconcile: ${progress()}`);
    }
    counts[report.status] = (counts[report.status] ?? 0) + 1;
    if (!report.fixed) {
      if (report.status === "drift" || report.status === "overflow") drifted++;
      else if (report.status === "stuck") stuck++;
      else if (report.status === "lagging") lagging++;
      else if (report.status === "missing") missing++;
    }
    if (args.json) console.log(JSON.stringify(report));
    else if (report.status !== "ok" || report.strayShards.length > 0 || report.missingShards.length > 0 || report.unmeasuredShards.length > 0) console.log(line(report));
  }
  const summary = Object.entries(counts).map(([status, n]) => `${n} ${status}`).join(", ") || "no counters";
  if (!args.quiet && done > 0) console.error(`reconcile: ${progress()}`);
  console.error(`${args.project}: ${summary}${args.fix ? " (--fix applied)" : ""}`);
  // Drift (a wrong total) outranks stuck (a total that stopped moving), which outranks mere lag.
  if (drifted > 0) return EXIT.failed;
  if (stuck > 0) return STUCK;
  if (missing > 0) return EXIT.usage;
  return lagging > 0 ? EXIT.failed : EXIT.ok;
}

/**
 * The counters codebase's params for the project, as a deploy reads them (.env, then .env.<projectId>; against
 * the emulator .env.local too, as the functions emulator reads them): the
 * reconcile reads the counters' database (DATABASE_ID) and MIRRORS from them (--fix writes a repaired total
 * to its mirrors in the same atomic write, as the rollup does, so a repair never leaves a mirrored field
 * behind its total). A MIRRORS that does not parse, or no counters codebase: the message naming the cause.
 */
function checkedParams(dir: string, project: string): Record<string, string> | string {
  try {
    const env = runningParams(countersSourceDir(dir), project);
    parseMirrorRules("MIRRORS", env.MIRRORS ?? "");
    parseDocumentCounterRules("DOCUMENT_COUNTERS", env.DOCUMENT_COUNTERS ?? "");
    return env;
  } catch (error) {
    const where = error instanceof ProjectError ? "" : `; fix it in ${countersSourceDir(dir)}/.env or .env.${project}`;
    return `reconcile: ${error instanceof Error ? error.message : String(error)}${where}`;
  }
}

export const command: Command<Args> = { name: "reconcile", help: HELP, parse, run };
