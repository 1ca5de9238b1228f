// The migrate-extension command: arguments, connection, progress and printing around the migration that
// functions/src/extension/ owns (which documents, the atomic fold, the record of the field). `main(argv)`
// is the whole command (help, a mistake as one line and exit 2, the exit codes), so a CLI can mount it as a
// subcommand as it is; scripts/migrate-extension.ts runs it as `npm run migrate-extension`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { deleteApp, initializeApp } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import { migrate, type MigrationItem, type MigrationScan } from "../../functions/src/extension/migrate";
import { newCounterRuleOf, type NewCounterRule } from "../../functions/src/extension/new-counter";
import { extensionRule, type ExtensionRule } from "../../functions/src/extension/rules";
import type { FoldReport } from "../../functions/src/extension/fold";
import { EXIT, integerValue, lastValue, readArgv, UsageError, usageLine, type ScriptName } from "./cli";
import { answers, configuredHosts, START_EMULATORS_FIRST } from "./emulator-hosts";
import { functionsParams } from "./functions-env";

export const HELP = `Usage: migrate-extension --document <pattern> --field <field> --counter <id-pattern>
                         [--dry-run] [--project <id>] [--database <id>] [--concurrency <n>] [--quiet]

Moves counters of the firestore-counter extension to exact counters. For every document that
--document names (a path with at most one {name} placeholder, in a document id: pages/{id}) and that
has a count, the counter --counter names (the same placeholder: page-{id}-visits) gains exactly the
extension's value: the document's --field (a dotted path: stats.visits) once, and every amount of that
field in the document's _counter_shards_ (clients' shards and the workers' partials, whose ids begin
with tabs). Each amount leaves its shard document in the same atomic write that adds it (only that
field; other fields stay), so nothing is lost or counted twice while old app versions keep writing.
A counter that does not exist is created (the shape createCounter gives its id: DEFAULT_SHARDS or
COUNTER_KINDS, WINDOWED_COUNTERS; read from functions/.env and .env.<project>). The counter records that
it took the field: a second run, the foldExtensionShards trigger and a mirror writing the total back
into the field never add it again. Run it again whenever you like: it moves what shards received since.
Run it after uninstalling the extension (its workers move amounts into the field): see
docs/from-the-extension.md.

Prints one line per document with a count, then a summary. --dry-run reads the same and writes
nothing (each line says what would move). Progress goes to stderr every 2 s (--quiet: none).
--concurrency: documents migrated at once, 1 to 100 (default 8).
The project is --project, else GCLOUD_PROJECT, else the default project of ./.firebaserc; the
database is (default) unless --database names another. Connects to the Firestore emulator when
FIRESTORE_EMULATOR_HOST is set, or by default for demo-* projects (firebase.json's port); otherwise to
the real project with Application Default Credentials (an account that may read and write the database).

Exit codes: 0 every document's count moved (or there was nothing to move); 1 some document's count did
not move (each is listed with why: a unique counter, an amount that is not an integer, a document id no
counter id can hold, a counter still being deleted) or an unexpected error; 2 bad arguments or a pattern
that does not parse (nothing read); 3 the Firestore emulator does not answer (start the emulators first:
npm start); 130 interrupted (what was written is whole: run it again to finish).`;

export interface Args {
  rule: ExtensionRule;
  dryRun: boolean;
  project: string;
  database: string;
  concurrency: number;
  quiet: boolean;
}

/** The shell's code for a run stopped by Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;
const PROGRESS_EVERY_MS = 2_000;

/** The default project of `.firebaserc` in `dir`, if it names one. */
export function firebasercProject(dir: string): string | undefined {
  const path = join(dir, ".firebaserc");
  if (!existsSync(path)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as { projects?: { default?: unknown } };
    return typeof parsed.projects?.default === "string" ? parsed.projects.default : undefined;
  } catch {
    throw new UsageError(`${path} is not valid JSON`);
  }
}

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Args | "help" {
  const read = readArgv(argv, {
    flags: ["--dry-run", "--quiet"],
    values: {
      "--document": "a document path pattern such as pages/{id}",
      "--field": "the counted field, such as visits or stats.visits",
      "--counter": "a counter-id pattern such as page-{id}-visits",
      "--project": "a project id",
      "--database": "a Firestore database id",
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
  let rule: ExtensionRule;
  try {
    rule = extensionRule(document, field, counter);
  } catch (error) {
    throw new UsageError(`--document ${document} --field ${field} --counter ${counter}: the rule ${error instanceof Error ? error.message : String(error)}`);
  }
  const project = lastValue(read, "--project") ?? (env.GCLOUD_PROJECT || undefined) ?? firebasercProject(cwd);
  if (project === undefined) throw new UsageError("no project: give --project, set GCLOUD_PROJECT, or run it where .firebaserc names a default project");
  const concurrency = lastValue(read, "--concurrency");
  return {
    rule,
    dryRun: read.flags.has("--dry-run"),
    quiet: read.flags.has("--quiet"),
    project,
    database: lastValue(read, "--database") ?? "(default)",
    concurrency: concurrency === undefined ? 8 : integerValue("--concurrency", concurrency, { min: 1, max: 100 }),
  };
}

/** How a migrated counter is created, from the codebase's params for the project (as a deploy would read them). */
function newCounterFor(project: string): NewCounterRule {
  try {
    return newCounterRuleOf(functionsParams([".env", `.env.${project}`]));
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}; fix it in functions/.env or functions/.env.${project}`);
  }
}

/** One document's line. */
export function line(item: MigrationItem): string {
  if (item.kind === "unmapped") return `${item.document}  NOT MOVED: its id cannot be part of a counter id (A-Z, a-z, 0-9, _ and -, at most 128 characters)`;
  if (item.kind === "failed") return `${item.document} -> ${item.counterId}  FAILED: ${item.error} (nothing of the failing page was written; run it again)`;
  const r = item.report;
  if (r.problems.length > 0 && r.amount === 0 && r.shards + r.partials === 0 && r.fieldTaken !== "taken") {
    return `${r.document} -> ${r.counterId}  NOT MOVED: ${r.problems.join("; ")}`;
  }
  const verb = r.dryRun ? "would move" : "moved";
  const field = r.fieldTaken === "taken" ? `field ${r.fieldValue}` : r.fieldTaken === "before" ? "field taken before" : `field ${r.fieldValue} not taken`;
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
  shards: number;
  partials: number;
  created: number;
  notMoved: number;
}

export function summary(t: Totals, scan: MigrationScan, dryRun: boolean): string {
  const verb = dryRun ? "would move" : "moved";
  return (
    `${t.documents} document${t.documents === 1 ? "" : "s"} with a count (${scan.documents} listed, ${scan.shardDocuments} _counter_shards_ documents): ` +
    `${verb} ${signed(t.amount)} in ${t.moved}; fields taken ${t.fieldsTaken} (${t.fieldsBefore} before), ${t.shards} shard and ${t.partials} partial documents, ` +
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
  t.shards += r.shards;
  t.partials += r.partials;
  if (r.created) t.created++;
}

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const CONSOLE: Io = { out: (l) => console.log(l), err: (l) => console.error(l) };

/**
 * The whole command: `argv` without the command's name. Answers the exit code (EXIT in cli.ts); `name` and
 * `helpCommand` are what its messages call it (a CLI that mounts it passes its own).
 */
export async function main(argv: string[], script: ScriptName = "migrate-extension", io: Io = CONSOLE): Promise<number> {
  const name = typeof script === "string" ? script : script.name;
  let args: Args | "help";
  let newCounter: NewCounterRule;
  try {
    args = parseArgs(argv);
    if (args === "help") {
      io.out(HELP);
      return EXIT.ok;
    }
    newCounter = newCounterFor(args.project);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(usageLine(script, error.message));
    return EXIT.usage;
  }

  if (process.env.FIRESTORE_EMULATOR_HOST === undefined && args.project.startsWith("demo-")) {
    process.env.FIRESTORE_EMULATOR_HOST = configuredHosts().firestore; // firebase.json's, as npm start uses
  }
  const emulator = process.env.FIRESTORE_EMULATOR_HOST;
  if (emulator !== undefined) {
    if (!(await answers(emulator))) {
      io.err(`${name}: the Firestore emulator does not answer at ${emulator}: ${START_EMULATORS_FIRST} (in another terminal).`);
      return EXIT.emulatorsDown;
    }
    process.env.METADATA_SERVER_DETECTION ??= "none";
  }
  const app = initializeApp({ projectId: args.project }, `migrate-extension-${Date.now()}`);
  const db = getFirestore(app, args.database);

  const totals: Totals = { documents: 0, moved: 0, amount: 0, fieldsTaken: 0, fieldsBefore: 0, shards: 0, partials: 0, created: 0, notMoved: 0 };
  const scan: MigrationScan = { documents: 0, shardDocuments: 0 };
  const started = Date.now();
  let lastProgress = started;
  const progress = () => {
    const seconds = (Date.now() - started) / 1000;
    return `${name}: ${scan.shardDocuments} shard documents and ${scan.documents} documents listed, ${totals.documents} with a count done (${(totals.documents / Math.max(seconds, 0.001)).toFixed(1)}/s)`;
  };
  const interrupted = (signal: NodeJS.Signals) => () => {
    io.err(`${name}: interrupted (${signal}) after ${totals.documents} documents; every write so far is whole: run it again to move the rest`);
    process.exit(INTERRUPTED);
  };
  const onSigint = interrupted("SIGINT");
  const onSigterm = interrupted("SIGTERM");
  process.once("SIGINT", onSigint);
  process.once("SIGTERM", onSigterm);
  try {
    for await (const item of migrate(db, args.rule, { dryRun: args.dryRun, newCounter, concurrency: args.concurrency }, scan)) {
      add(totals, item);
      io.out(line(item));
      if (!args.quiet && Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = Date.now();
        io.err(progress());
      }
    }
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    await deleteApp(app);
  }
  io.out(summary(totals, scan, args.dryRun));
  return totals.notMoved > 0 ? EXIT.failed : EXIT.ok;
}
