// `firestore-exact-counter migrate-extension` (in this repository: npm run migrate-extension): moves the
// firestore-counter extension's counters to exact counters (docs/from-the-extension.md). Arguments,
// connection, progress and printing around the migration that the functions package owns (the admin
// entry's migrateExtension: which documents, the atomic fold, the record that the field was taken). A
// counter it creates gets the shape the counters codebase's params give its id, read from that codebase's
// .env files in the project folder, as a deploy reads them.
import { existsSync } from "node:fs";
import { join } from "node:path";
// The admin SDK and the admin entry load when a run starts: --help and a mistake answer without them.
import type { FoldReport, MigrationItem, MigrationScan } from "@firestore-exact-counter/functions/admin";
import { newCounterRuleOf } from "../../../functions/src/model/new-counter";
import { extensionRule } from "../../../functions/src/model/extension-rules";
import { noExtensionAmounts, parseDocumentCounterRules, ruleSharingIds } from "../../../functions/src/model/document-rules";
import { parseCounterIdPattern } from "../../../functions/src/model/patterns";
import { paramProblem } from "../../../functions/src/model/param-rules";
import { EXIT, integerValue, lastValue, readArgv, UsageError, type Command } from "../lib/cli";
import { answers } from "../lib/firestore-emulator";
import { configuredFirestoreHost, countersSourceDir, firebasercProject, ProjectError, readFirebaseJson, runningParams } from "../lib/project";
import { loadAdminEntry } from "../lib/admin-entry";

const HELP = `Usage: firestore-exact-counter migrate-extension --document <pattern> --field <field> --counter <id-pattern>
         [--dry-run] [--project <id>] [--database <id>] [--dir <folder>] [--concurrency <n>] [--quiet]

Moves counters of the firestore-counter extension to exact counters. For every document that
--document names (a path with at most one {name} placeholder, in a document id: pages/{id}) and that
has a count, the counter --counter names (the same placeholder: page-{id}-visits) gains exactly the
extension's value: the document's --field (a dotted path: stats.visits) once, and every amount of that
field in the document's _counter_shards_ (clients' shards and the workers' partials, whose ids begin
with tabs). Each amount leaves its shard document in the same atomic write that adds it (only that
field; other fields stay), so nothing is lost or counted twice while old app versions keep writing.
A counter that does not exist is created, also for a document whose field is 0 (the shape
createCounter gives its id: DEFAULT_SHARDS or COUNTER_KINDS, WINDOWED_COUNTERS; read from the counters
codebase's .env and .env.<project>, and .env.local against the emulator). The counter records that it
took the field: a second run, the foldExtensionShards trigger, a mirror writing the total back into the
field and a counter created again after a delete never add it again. A counter that existed without
that record (made before EXTENSION_COUNTERS named it) never takes the field, which may hold its own
mirrored total ("field N left"). Run it again whenever you like: it moves what shards received since.
Run it after uninstalling the extension (its workers move amounts into the field): see
docs/from-the-extension.md.

Prints one line per document with a count, then a summary. --dry-run reads the same and writes
nothing (each line says what would move). Progress goes to stderr every 2 s (--quiet: none).
--concurrency: documents migrated at once, 1 to 100 (default 8).
--dir: the Firebase project folder (holding firebase.json; default: the current folder or the nearest
above it), whose counters codebase gives the params and whose firebase.json the emulator's port.
The project is --project, else GCLOUD_PROJECT, else the default project of ./.firebaserc; the
database is (default) unless --database names another. Connects to the Firestore emulator when
FIRESTORE_EMULATOR_HOST is set, or by default for demo-* projects (firebase.json's port); otherwise to
the real project with Application Default Credentials (an account that may read and write the database).

A count of documents that the extension kept (comments under a post) needs no migration once
DOCUMENT_COUNTERS counts those documents: the backfill counts them. A --counter whose counters
DOCUMENT_COUNTERS names is refused, before anything is read.

Exit codes: 0 every document's count moved (or there was nothing to move); 1 some document's count did
not move (each is listed with why: a unique counter, an amount that is not an integer, a document id no
counter id can hold, a counter still being deleted) or an unexpected error; 2 bad arguments, a pattern
that does not parse, or counters DOCUMENT_COUNTERS names (nothing read); 3 the Firestore emulator does not answer (start the emulators first); 130 interrupted (what was written is whole: run it again to finish).`;

interface Args {
  /** The rule's three arguments, checked (functions/src/model/extension-rules.ts). */
  rule: { document: string; field: string; counter: string };
  dryRun: boolean;
  project: string;
  database: string;
  concurrency: number;
  quiet: boolean;
  /** The project folder (firebase.json), if there is one. */
  dir: string | undefined;
  /** The counters codebase's params for the project (checked: a new counter's shape can be decided from them). */
  params: Record<string, string>;
}

/** The shell's code for a run stopped by Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;
const PROGRESS_EVERY_MS = 2_000;
const START_EMULATORS_FIRST = "start the emulators first (firebase emulators:start; in the firestore-exact-counter repository: npm start)";

/** The folder holding firebase.json: --dir, else the current folder or the nearest one above it; undefined when none (defaults apply). */
function projectFolder(dir: string | undefined, cwd: string): string | undefined {
  if (dir !== undefined) {
    if (!existsSync(join(dir, "firebase.json"))) throw new UsageError(`--dir ${dir}: no firebase.json there`);
    return dir;
  }
  for (let at = cwd; ; ) {
    if (existsSync(join(at, "firebase.json"))) return at;
    const up = join(at, "..");
    if (up === at) return undefined;
    at = up;
  }
}

function parse(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Args | "help" {
  const read = readArgv(argv, {
    flags: ["--dry-run", "--quiet"],
    values: {
      "--document": "a document path pattern such as pages/{id}",
      "--field": "the counted field, such as visits or stats.visits",
      "--counter": "a counter-id pattern such as page-{id}-visits",
      "--project": "a project id",
      "--database": "a Firestore database id",
      "--dir": "a project folder holding firebase.json",
      "--concurrency": "a whole number from 1 to 100",
    },
  });
  if (read === "help") return read;
  const required = (option: string): string => {
    const value = lastValue(read, option);
    if (value === undefined) throw new UsageError(`${option} is required`);
    return value;
  };
  const document = required("--document");
  const field = required("--field");
  const counter = required("--counter");
  try {
    extensionRule(document, field, counter);
  } catch (error) {
    throw new UsageError(`--document ${document} --field ${field} --counter ${counter}: the rule ${error instanceof Error ? error.message : String(error)}`);
  }
  const dir = projectFolder(lastValue(read, "--dir"), cwd);
  const project = lastValue(read, "--project") ?? (env.GCLOUD_PROJECT || undefined) ?? firebasercProject(cwd);
  if (project === undefined) throw new UsageError("no project: give --project, set GCLOUD_PROJECT, or run it where .firebaserc names a default project");
  const concurrency = lastValue(read, "--concurrency");
  const workers = concurrency === undefined ? 8 : integerValue("--concurrency", concurrency, { min: 1, max: 100 });
  const params = checkedParams(dir, project);
  refuseDocumentCounters(counter, params);
  return {
    rule: { document, field, counter },
    dryRun: read.flags.has("--dry-run"),
    quiet: read.flags.has("--quiet"),
    project,
    database: databaseOf(lastValue(read, "--database")),
    dir,
    concurrency: workers,
    params,
  };
}

/** --counter naming counters DOCUMENT_COUNTERS names: a mistake, said before anything is read (the admin entry refuses it too). */
function refuseDocumentCounters(counter: string, params: Record<string, string>): void {
  let rules;
  try {
    rules = parseDocumentCounterRules("DOCUMENT_COUNTERS", params.DOCUMENT_COUNTERS ?? "");
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}; fix it in the counters codebase's .env`);
  }
  const counted = ruleSharingIds(rules, parseCounterIdPattern(counter)); // already checked with the rule (parse)
  if (counted !== undefined) throw new UsageError(`--counter ${counter}: these counters cannot take the extension's amounts: ${noExtensionAmounts(counted)}`);
}

/**
 * The params a migrated counter is created by: the counters codebase's for the project (.env, then
 * .env.<project>, as a deploy reads them; against the emulator .env.local too, as the functions emulator
 * reads them); the params' defaults where the folder has no counters codebase.
 * Checked here, so that a bad one is a usage error before anything is read.
 */
function checkedParams(dir: string | undefined, project: string): Record<string, string> {
  let source: string | undefined;
  try {
    source = dir === undefined ? undefined : countersSourceDir(dir);
  } catch (error) {
    if (!(error instanceof ProjectError)) throw error;
  }
  try {
    const params = source === undefined ? {} : runningParams(source, project);
    newCounterRuleOf(params);
    return params;
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}; fix it in ${source ?? "the counters codebase"}/.env or .env.${project}`);
  }
}

/** --database, held to DATABASE_ID's rule (functions/src/model/param-rules.ts): "(default)" when absent. */
function databaseOf(value: string | undefined): string {
  if (value === undefined) return "(default)";
  const problem = paramProblem("DATABASE_ID", value);
  if (problem !== undefined) throw new UsageError(`--database ${value}: ${problem.replace(/^DATABASE_ID /, "")}`);
  return value;
}

/** The Firestore emulator of the project folder's firebase.json (firebase-tools' default without one). */
function emulatorHostOf(dir: string | undefined): string {
  return configuredFirestoreHost(dir === undefined ? {} : readFirebaseJson(dir));
}

/** One document's line. */
function line(item: MigrationItem): string {
  if (item.kind === "unmapped") return `${item.document}  NOT MOVED: its id cannot be part of a counter id (A-Z, a-z, 0-9, _ and -, at most 128 characters)`;
  if (item.kind === "failed") return `${item.document} -> ${item.counterId}  FAILED: ${item.error} (nothing of the failing page was written; run it again)`;
  const r = item.report;
  if (r.problems.length > 0 && r.amount === 0 && r.shards + r.partials === 0 && r.fieldTaken !== "taken") {
    return `${r.document} -> ${r.counterId}  NOT MOVED: ${r.problems.join("; ")}`;
  }
  const verb = r.dryRun ? "would move" : "moved";
  const field =
    r.fieldTaken === "taken"
      ? `field ${r.fieldValue}`
      : r.fieldTaken === "before"
        ? "field taken before"
        : r.fieldTaken === "left"
          ? `field ${r.fieldValue} left: the counter existed first`
          : `field ${r.fieldValue} not taken`;
  const parts = [`${r.document} -> ${r.counterId}`, `${verb} ${signed(r.amount)}`, `(${field}, ${r.shards} shard${r.shards === 1 ? "" : "s"}, ${r.partials} partial${r.partials === 1 ? "" : "s"})`];
  if (r.created) parts.push(r.dryRun ? "counter would be created" : "counter created");
  if (!r.documentExists) parts.push("no such document: nothing to mirror into");
  if (r.problems.length > 0) parts.push(`NOT MOVED: ${r.problems.join("; ")}`);
  return parts.join("  ");
}

function signed(n: number): string {
  return n < 0 ? String(n) : `+${n}`;
}

interface Totals {
  documents: number;
  moved: number;
  amount: number;
  fieldsTaken: number;
  fieldsBefore: number;
  /** Fields of counters that existed without a record: not taken (they may hold the counter's mirrored total). */
  fieldsLeft: number;
  shards: number;
  partials: number;
  created: number;
  notMoved: number;
}

function summary(t: Totals, scan: MigrationScan, dryRun: boolean): string {
  const verb = dryRun ? "would move" : "moved";
  return (
    `${t.documents} document${t.documents === 1 ? "" : "s"} with a count (${scan.documents} listed, ${scan.shardDocuments} _counter_shards_ documents): ` +
    `${verb} ${signed(t.amount)} in ${t.moved}; fields taken ${t.fieldsTaken} (${t.fieldsBefore} before${t.fieldsLeft > 0 ? `, ${t.fieldsLeft} left` : ""}), ${t.shards} shard and ${t.partials} partial documents, ` +
    `${t.created} counter${t.created === 1 ? "" : "s"} ${dryRun ? "to create" : "created"}; ${t.notMoved} not moved${dryRun ? " (dry run: nothing written)" : ""}`
  );
}

function add(t: Totals, item: MigrationItem): void {
  t.documents++;
  if (item.kind !== "folded") {
    t.notMoved++;
    return;
  }
  const r: FoldReport = item.report;
  if (r.problems.length > 0) t.notMoved++;
  if (r.amount !== 0 || r.shards + r.partials > 0 || r.fieldTaken === "taken") t.moved++;
  t.amount += r.amount;
  if (r.fieldTaken === "taken") t.fieldsTaken++;
  if (r.fieldTaken === "before") t.fieldsBefore++;
  if (r.fieldTaken === "left") t.fieldsLeft++;
  t.shards += r.shards;
  t.partials += r.partials;
  if (r.created) t.created++;
}

async function run(args: Args): Promise<number> {
  if (process.env.FIRESTORE_EMULATOR_HOST === undefined && args.project.startsWith("demo-")) {
    process.env.FIRESTORE_EMULATOR_HOST = emulatorHostOf(args.dir); // firebase.json's, as firebase emulators:start serves it
  }
  const emulator = process.env.FIRESTORE_EMULATOR_HOST;
  if (emulator !== undefined) {
    if (!(await answers(emulator))) {
      console.error(`migrate-extension: the Firestore emulator does not answer at ${emulator}: ${START_EMULATORS_FIRST} (in another terminal).`);
      return EXIT.emulatorsDown;
    }
    process.env.METADATA_SERVER_DETECTION ??= "none";
  }
  const [{ deleteApp, initializeApp }, { migrateExtension }] = await loadAdminEntry();
  const app = initializeApp({ projectId: args.project }, `migrate-extension-${Date.now()}`);
  const env = { ...args.params, DATABASE_ID: args.database };

  const totals: Totals = { documents: 0, moved: 0, amount: 0, fieldsTaken: 0, fieldsBefore: 0, fieldsLeft: 0, shards: 0, partials: 0, created: 0, notMoved: 0 };
  const scan: MigrationScan = { documents: 0, shardDocuments: 0 };
  const started = Date.now();
  let lastProgress = started;
  const progress = () => {
    const seconds = (Date.now() - started) / 1000;
    return `migrate-extension: ${scan.shardDocuments} shard documents and ${scan.documents} documents listed, ${totals.documents} with a count done (${(totals.documents / Math.max(seconds, 0.001)).toFixed(1)}/s)`;
  };
  const interrupted = (signal: NodeJS.Signals) => () => {
    console.error(`migrate-extension: interrupted (${signal}) after ${totals.documents} documents; every write so far is whole: run it again to move the rest`);
    process.exit(INTERRUPTED);
  };
  const onSigint = interrupted("SIGINT");
  const onSigterm = interrupted("SIGTERM");
  process.once("SIGINT", onSigint);
  process.once("SIGTERM", onSigterm);
  try {
    for await (const item of migrateExtension(args.rule, { app, env, dryRun: args.dryRun, concurrency: args.concurrency, scan })) {
      add(totals, item);
      console.log(line(item));
      if (!args.quiet && Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = Date.now();
        console.error(progress());
      }
    }
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    await deleteApp(app);
  }
  console.log(summary(totals, scan, args.dryRun));
  return totals.notMoved > 0 ? EXIT.failed : EXIT.ok;
}

export const command: Command<Args> = { name: "migrate-extension", help: HELP, parse: (argv) => parse(argv), run };
