// The fold: what moves an extension counter's amounts into our counter, exactly, whoever runs it (the
// migrate-extension command, or the foldExtensionShards trigger for old clients' later writes).
//
// One fold of one source (a document, a field, the counter it moves to) reads, in one read-only
// transaction (a consistent snapshot at one read time R, which takes no lock): the shard documents it
// moves (the one an event names, or a page of `_counter_shards_`), the app's document, the counter's
// parent, its record of the field (paths.ts, extensionRecordRef) and its deletion marker. What that read
// allows is decided by model/extension-field.ts (foldPlan: when the field is taken, when the counter is
// created, why that takes the field at most once per counter id). Then ONE batch:
// - removes each shard document's amount (only the counted field; the document when nothing else is
//   left), each write conditioned on the document's update time as of R;
// - adds the sum to one shard of the counter exactly like an increment (shard-writes.ts: `count` and
//   `writes` together, a windowed counter's day), or creates the counter with it (create.ts's parent, the
//   shards, and an assertion that no deletion of that id is cleaning up);
// - when the record did not exist at R, creates it (create(): it fails if it exists) with what the write
//   takes of the field: its value as of R when the counter did not exist at R (the same write creates it),
//   else 0 (a counter that exists without a record may have mirrored its total into the field).
// Why that is exact. A shard amount reaches the counter in the very commit that removes it from its
// document, and the precondition makes the removed amount the one read: an old client's write in between
// fails the batch, which reads again. The field's value is added only in the commit that creates both the
// counter and the record (create() on both), so once, whatever runs later: another fold, a second
// migration, a createCounter (which finds the counter), or a mirror writing the total back into that field
// (a fold that read no record but finds one, or a counter, at commit fails, and reads again).
// Duplicated, reordered and retried runs move what is there when they read, and nothing twice.
//
// No counter from nowhere: the trigger (`by: "trigger"`) creates a counter only while the app's document
// exists (at R); otherwise the amounts stay in their shard documents, where migrate-extension (an
// operator's run, which creates counters for documents that exist only through their shards) can still
// move them. And nothing into a document counter (DOCUMENT_COUNTERS): only its documents move it, so a
// fold into one is refused before anything is read, and its amounts stay where they are.
import { FieldPath, FieldValue, type DocumentReference, type DocumentSnapshot, type Firestore, type WriteBatch } from "firebase-admin/firestore";
import { backoffMs, pause } from "../model/backoff";
import { newCounterDocument } from "../counters/create";
import { BOARD_FIELD, writeEntry } from "../leaderboard/entry-writes";
import { extensionRecord } from "../counters/extension-take";
import { GRPC, grpcCode } from "../model/errors";
import { cleanupRef, counterRef, extensionRecordRef, shardRef } from "../model/paths";
import { readState, type Read } from "./snapshot";
import { shapeIn } from "../counters/shape";
import { NEW_SHARD, shardIncrement } from "../counters/shard-writes";
import { pickShard, type Random } from "../model/shards";
import { shardAmount, type Removal } from "./amounts";
import { fieldAmount, fieldSegments, valueAt } from "../model/extension-data";
import { noExtensionAmounts, ruleNaming, type DocumentRule } from "../model/document-rules";
import type { NewCounterRule } from "../model/new-counter";
import { EXTENSION_SHARDS, type ExtensionSource } from "../model/extension-rules";
import { foldPlan, type Folder } from "../model/extension-field";

export interface FoldOptions {
  /** Who folds: the trigger creates a counter only while its document exists, a migration always (model/extension-field.ts). */
  by: Folder;
  /** Only these documents of `_counter_shards_` (the trigger: the one written); every one, page by page, when absent. */
  shardIds?: readonly string[];
  /**
   * The UTC day the shard amounts count for on a windowed counter (the trigger: today, like an increment);
   * null: in the total only (the migration: history). The field's value never counts for a day.
   */
  day: string | null;
  /** The shape of a counter the fold creates (new-counter.ts). */
  newCounter: NewCounterRule;
  /** DOCUMENT_COUNTERS: a counter one of them names takes no extension amount (refused before anything is read). */
  documentRules?: readonly DocumentRule[];
  /** Read and report, write nothing. */
  dryRun?: boolean;
  /** Shard documents per page (and per batch) when listing them. */
  pageSize?: number;
  random?: Random;
  now?: () => number;
}

/** What one fold of one source did (or, dry, would do). */
export interface FoldReport extends ExtensionSource {
  documentExists: boolean;
  /** The field's value on the document when it was read. */
  fieldValue: number;
  /**
   * "taken": this fold added the field's value; "before": an earlier write had settled it (a record);
   * "left": the counter existed without a record, so its field is not taken (it may hold the counter's
   * mirrored total) and this fold recorded that; "no": not settled (nothing to move yet, or a problem).
   */
  fieldTaken: "taken" | "before" | "left" | "no";
  /** Client shards and worker partials whose amount moved. */
  shards: number;
  partials: number;
  /** What the counter gained. */
  amount: number;
  /** The counter was created by this fold. */
  created: boolean;
  /** What could not move, and why (left where it is). */
  problems: string[];
  /** The counter does not exist and the trigger did not create it: the document does not exist. */
  noDocument: boolean;
  /** A problem that goes away by itself (the counter's deletion is still cleaning up, or contention): fold again later. */
  retryLater: boolean;
  dryRun: boolean;
}

const DEFAULT_PAGE_SIZE = 100;
/** Attempts of one page before giving up (each a fresh read: a precondition failed, a create raced). */
const ATTEMPTS = 12;
const BACKOFF_STEP_MS = 20;
/** Errors of a commit that a fresh read gets past: a document changed since the read, a create raced, a shard went. */
const RETRYABLE = new Set<number>([GRPC.ABORTED, GRPC.FAILED_PRECONDITION, GRPC.ALREADY_EXISTS, GRPC.NOT_FOUND]);

interface Move {
  ref: DocumentReference;
  updateTime: DocumentSnapshot["updateTime"];
  amount: number;
  partial: boolean;
  removal: Removal;
}

/** Folds one source: all of its shard documents, page by page, or only those of `options.shardIds`. */
export async function foldSource(db: Firestore, source: ExtensionSource, options: FoldOptions): Promise<FoldReport> {
  const report: FoldReport = {
    ...source,
    documentExists: false,
    fieldValue: 0,
    fieldTaken: "no",
    shards: 0,
    partials: 0,
    amount: 0,
    created: false,
    problems: [],
    noDocument: false,
    retryLater: false,
    dryRun: options.dryRun === true,
  };
  const counted = ruleNaming(options.documentRules ?? [], source.counterId);
  if (counted !== undefined) {
    report.problems.push(`counter "${source.counterId}" cannot take extension amounts: ${noExtensionAmounts(counted)}`);
    return report;
  }
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  let after: string | undefined;
  for (;;) {
    const page = await foldPage(db, source, options, report, pageSize, after);
    if (options.shardIds !== undefined || page.listed < pageSize || page.stop) return report;
    after = page.lastId;
  }
}

async function foldPage(
  db: Firestore,
  source: ExtensionSource,
  options: FoldOptions,
  report: FoldReport,
  pageSize: number,
  after: string | undefined,
): Promise<{ listed: number; lastId: string | undefined; stop: boolean }> {
  const random = options.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    const read = await readState(db, source, options.shardIds, pageSize, after);
    const problemsBefore = report.problems.length;
    try {
      const stop = await planAndCommit(db, source, options, report, read, random);
      return { listed: read.listed, lastId: read.lastId, stop };
    } catch (error) {
      if (!RETRYABLE.has(grpcCode(error) ?? -1)) throw error;
      report.problems.length = problemsBefore; // this attempt's findings are read again
      if (attempt >= ATTEMPTS) {
        report.problems.push(`${source.document} kept changing under ${ATTEMPTS} attempts; fold again`);
        report.retryLater = true;
        return { listed: read.listed, lastId: read.lastId, stop: true };
      }
      await pause(backoffMs(attempt, random, BACKOFF_STEP_MS));
    }
  }
}

/**
 * Decides what this read allows (model/extension-field.ts, foldPlan) and commits it in one batch (unless
 * dry). Adds to the report only what committed. True when the source cannot go on (a problem that stops
 * every page).
 */
async function planAndCommit(db: Firestore, source: ExtensionSource, options: FoldOptions, report: FoldReport, read: Read, random: Random): Promise<boolean> {
  report.documentExists = read.document.exists;
  const data = read.document.data();
  const field = fieldAmount(data, source.field);
  if (typeof field === "string") {
    report.problems.push(`${source.document}: ${field}; nothing of it moved`);
    return true;
  }
  report.fieldValue = field;
  // A dry run writes no record: its later pages must not count the field again.
  const recorded = read.record.exists || (report.dryRun && report.fieldTaken === "taken");
  if (read.record.exists && report.fieldTaken === "no") report.fieldTaken = "before";

  const moves: Move[] = [];
  let sum = 0;
  for (const shard of read.shards) {
    const found = shardAmount(shard.id, shard.data() ?? {}, source.field);
    if (found.kind === "absent") continue;
    if (found.kind === "bad") {
      report.problems.push(`${shard.ref.path}: ${found.reason}; left where it is`);
      continue;
    }
    moves.push({ ref: shard.ref, updateTime: shard.updateTime, amount: found.amount, partial: found.partial, removal: found.removal });
    sum += found.amount;
  }
  const plan = foldPlan(
    {
      record: recorded,
      // A dry run's earlier page would have created the counter.
      parent: read.parent.exists || (report.dryRun && report.created),
      deleting: read.marker.exists,
      documentExists: read.document.exists,
      fieldPresent: valueAt(data, fieldSegments(source.field)) !== undefined,
      field,
      moves: moves.length,
      sum,
    },
    options.by,
  );
  if (plan.kind === "nothing") return false;
  if (plan.kind === "no-document") {
    report.problems.push(`${source.document} does not exist: no counter is created for it (its amounts stay in ${EXTENSION_SHARDS}, where migrate-extension can still move them)`);
    report.noDocument = true;
    return true;
  }
  if (plan.kind === "deleting") {
    report.problems.push(`counter "${source.counterId}" is still being deleted; fold again shortly`);
    report.retryLater = true;
    return true;
  }
  const { total } = plan;
  if (!Number.isSafeInteger(total)) {
    report.problems.push(`${source.document}: the amounts add up beyond 2^53 - 1; nothing of them moved`);
    return true;
  }

  let create: { numShards: number; windowed: boolean } | null = null;
  let existing: { numShards: number; windowed: boolean } | null = null;
  if (read.parent.exists) {
    const shape = shapeIn(source.counterId, read.parent);
    if (shape.unique) {
      report.problems.push(`counter "${source.counterId}" is a unique counter (it counts members): extension amounts cannot move into it`);
      return true;
    }
    existing = shape;
  } else if (plan.createsCounter) {
    try {
      create = options.newCounter(source.counterId);
    } catch (error) {
      report.problems.push(error instanceof Error ? error.message : String(error));
      return true;
    }
  }

  if (!report.dryRun) {
    const batch = db.batch();
    for (const move of moves) remove(batch, move);
    if (create !== null) {
      const shard = pickShard(create.numShards, random);
      // The field's value is history: it counts in the total only, never in a day's window.
      const day = create.windowed ? options.day : null;
      createCounterWith(batch, db, source.counterId, create, shard, { total, day, dayAmount: sum, nowMs: (options.now ?? Date.now)() });
    } else if (existing !== null && total !== 0) {
      const day = existing.windowed ? options.day : null;
      batch.update(shardRef(db, source.counterId, pickShard(existing.numShards, random)), shardIncrement(total, day, sum));
    }
    if (plan.field.createRecord) {
      batch.create(extensionRecordRef(db, source.counterId, source.document, source.field), extensionRecord(source, plan.field.taken));
    }
    await batch.commit();
  }
  if (plan.field.createRecord) report.fieldTaken = plan.field.settlement === "taken" ? "taken" : "left";
  if (create !== null) report.created = true;
  report.amount += total;
  for (const move of moves) {
    if (move.partial) report.partials++;
    else report.shards++;
  }
  return false;
}

/** Removes one document's amount, conditioned on the document being as it was read. */
function remove(batch: WriteBatch, move: Move): void {
  const precondition = { lastUpdateTime: move.updateTime! };
  const { removal } = move;
  if (removal.op === "delete") batch.delete(move.ref, precondition);
  else if (removal.op === "deleteField") batch.update(move.ref, new FieldPath(...removal.path), FieldValue.delete(), precondition);
  else batch.update(move.ref, "_updates_", removal.updates, precondition);
}

/**
 * Creates the counter with its first amount on shard `first`, as createCounter would create it (plain, the
 * shape new-counter.ts gives), in the fold's own batch: `create()` fails if another fold created it first
 * (this one then reads again and adds to it), and the marker's absence is asserted so that no counter
 * appears while a deletion of the same id is cleaning up.
 */
function createCounterWith(
  batch: WriteBatch,
  db: Firestore,
  counterId: string,
  shape: { numShards: number; windowed: boolean; board?: string },
  first: number,
  amount: { total: number; day: string | null; dayAmount: number; nowMs: number },
): void {
  const board = shape.board;
  batch.create(counterRef(db, counterId), { ...newCounterDocument(shape.numShards, { unique: false, windowed: shape.windowed, nowMs: amount.nowMs }), ...(board === undefined ? {} : { [BOARD_FIELD]: board }) });
  // On a leaderboard at its total, 0 (the first rollup commits the amount, and its entry with it).
  if (board !== undefined) writeEntry(batch, db, board, counterId, 0);
  for (let i = 0; i < shape.numShards; i++) {
    if (i !== first) {
      batch.set(shardRef(db, counterId, i), NEW_SHARD);
      continue;
    }
    const days = amount.day !== null && amount.dayAmount !== 0 ? { days: { [amount.day]: amount.dayAmount } } : {};
    batch.set(shardRef(db, counterId, i), { count: amount.total, writes: 1, ...days });
  }
  batch.delete(cleanupRef(db, counterId), { exists: false });
}
