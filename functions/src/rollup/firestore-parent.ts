// The parent document as the rollup reads and writes it over Firestore (for the store, firestore-store.ts):
// its bookkeeping read into a ParentView (plan.ts); its two writes, a rollup's commit of a sum (with its
// mirrors, mirrored.ts, and the shards a growth adds) and the midnight commit's move of the windows, each
// conditioned on the version read; and the Firestore forms of the times and versions the rollup handles as
// numbers and opaque tokens (store.ts).
import { FieldValue, Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore, type WriteResult } from "firebase-admin/firestore";
import { differingValues, logMissingMirror, writeTargets, type MirrorValues } from "../counters/mirror-writes";
import { newShardMerge } from "../counters/shard-writes";
import { GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { MAX_INTERVAL_MS } from "../model/param-rules";
import { counterRef, shardRef, TRAILING, WINDOWS_MOVE_AT } from "../model/paths";
import { microsFloor } from "../model/time";
import { dayCountsOf, type DaysRead, everyDayOpen, type WindowsState } from "../model/windows";
import { moveAtTimestamp, timestampOfMicros } from "../counters/times";
import type { Load } from "./growth";
import { commitMirrored, type MirroredCommit, type MirrorPort } from "./mirrored";
import { entryDue } from "../model/board";
import { BOARD_FIELD, parentBoardOf, writeEntry } from "../leaderboard/entry-writes";
import type { Kept, Trailing } from "./plan";
import type { CommitFields, CommitResult, MoveResult, ParentRead } from "./store";

/** `rollup.load` as the rollup reads it; null when absent or malformed (the next commit measures afresh). */
function loadOf(parent: DocumentSnapshot): Load | null {
  const load = parent.exists ? (parent.get("rollup.load") as unknown) : undefined;
  if (typeof load !== "object" || load === null) return null;
  const { readTime, writes, hotSince, hotWrites, hotStepTime, hotStepFrom } = load as Record<string, unknown>;
  if (!(readTime instanceof Timestamp) || typeof writes !== "number" || !Number.isSafeInteger(writes)) return null;
  const step =
    hotStepTime instanceof Timestamp && typeof hotStepFrom === "number" && Number.isSafeInteger(hotStepFrom) && hotStepFrom >= 1
      ? { atUs: microsFloor(hotStepTime), from: hotStepFrom }
      : null;
  const hot =
    hotSince instanceof Timestamp && typeof hotWrites === "number" && Number.isSafeInteger(hotWrites)
      ? { sinceUs: microsFloor(hotSince), writes: hotWrites, step }
      : null;
  return { readUs: microsFloor(readTime), writes, hot };
}

/** `numShards` if it holds a positive integer; null otherwise. */
function numShardsOf(parent: DocumentSnapshot): number | null {
  const value = parent.exists ? (parent.get("numShards") as unknown) : undefined;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : null;
}

/** The parent's bookkeeping as the rollup reads it. */
export function parentReadOf(parent: DocumentSnapshot): ParentRead {
  const total = parent.exists ? (parent.get("total") as unknown) : undefined;
  return {
    view: {
      parentExists: parent.exists,
      coveredUntilUs: coveredUntilUs(parent),
      // When the rollup last wrote the parent: `rollup.committedAt`.
      lastCommitUs: timeFieldUs(parent, "rollup.committedAt"),
      recordedIntervalMs: recordedIntervalMs(parent),
      numShards: numShardsOf(parent),
      load: loadOf(parent),
      days: daysOf(parent),
      updatedUs: parent.exists ? microsFloor(parent.updateTime!) : null,
      trailing: trailingOf(parent),
      total: typeof total === "number" ? total : null,
      createdUs: parent.exists && parent.createTime !== undefined ? microsFloor(parent.createTime) : null,
      board: parentBoardOf(parent),
      kept: keptOf(parent),
      movingSinceUs: timeFieldUs(parent, "rollup.movingSince"),
    },
    version: parent.exists ? versionOf(parent.updateTime!) : null,
    observedUs: microsFloor(parent.readTime),
  };
}

/** A document counter's `kept` (plan.ts, Kept); null when absent or unknown (kept by its shards). */
function keptOf(parent: DocumentSnapshot): Kept | null {
  const kept = parent.exists ? (parent.get("kept") as unknown) : undefined;
  return kept === "recount" || kept === "moving" || kept === "records" ? kept : null;
}

/** `rollup.trailing`, the pending promise (plan.ts); null when absent or unreadable. */
function trailingOf(parent: DocumentSnapshot): Trailing | null {
  const trailing = parent.exists ? (parent.get(TRAILING) as unknown) : undefined;
  if (typeof trailing !== "object" || trailing === null) return null;
  const { dueAt, owner } = trailing as Record<string, unknown>;
  return dueAt instanceof Timestamp && typeof owner === "string" ? { dueMs: dueAt.toMillis(), owner } : null;
}

/** `rollup.trailing` as stored: the due time as a Timestamp (the sweep's query orders by it), and the owner. */
export function storedTrailing(trailing: Trailing | null): Record<string, unknown> | FieldValue {
  return trailing === null ? FieldValue.delete() : { dueAt: Timestamp.fromMillis(trailing.dueMs), owner: trailing.owner };
}

/**
 * A windowed parent's days (model/windows.ts): `rollup.days`, exact at `rollup.readTime` (before the first
 * rollup: at the reset, or at the creation). Days that cannot be read are summed again: every day of the
 * last 30 is open then. Null for a counter that is not windowed.
 */
function daysOf(parent: DocumentSnapshot): DaysRead | null {
  if (!parent.exists || parent.get("windowed") !== true) return null;
  const days = dayCountsOf(parent.get("rollup.days"));
  const since = coveredUntilUs(parent) ?? timeFieldUs(parent, "resetAt") ?? (parent.createTime === undefined ? null : microsFloor(parent.createTime));
  const moveAt = timeFieldUs(parent, WINDOWS_MOVE_AT);
  const moveAtMs = moveAt === null ? null : Math.floor(moveAt / 1000);
  if (days === null || since === null) return everyDayOpen(moveAtMs);
  return { days, sinceUs: since, moveAtMs };
}

/** `rollup.intervalMs` if it holds a valid interval; anything else counts as none recorded. */
function recordedIntervalMs(parent: DocumentSnapshot): number | null {
  const value = parent.exists ? (parent.get("rollup.intervalMs") as unknown) : undefined;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 && value <= MAX_INTERVAL_MS ? value : null;
}

/** The read time of the sum the parent's total holds, in microseconds (rounded down); null if none. */
function coveredUntilUs(parent: DocumentSnapshot): number | null {
  return timeFieldUs(parent, "rollup.readTime");
}

/** A Timestamp field of the parent in microseconds (rounded down); null if absent. */
function timeFieldUs(parent: DocumentSnapshot, field: string): number | null {
  const value = parent.exists ? (parent.get(field) as unknown) : undefined;
  return value instanceof Timestamp ? microsFloor(value) : null;
}

/**
 * A rollup's commit onto the parent (RollupStore.commit): `total` = the sum and `rollup.readTime` = its read
 * time, with the bookkeeping in `fields`, on condition that the parent is still at `parent.version`, and in the
 * same atomic write the total on every mirror target that exists (commitTotalAt) and, for a counter on a
 * leaderboard (`board`), its entry where model/board.ts's entryDue asks for it.
 */
export async function commitParent(
  db: Firestore,
  counterId: string,
  parent: ParentRead,
  sum: { total: number; readUs: number },
  fields: CommitFields,
  targets: readonly MirrorTarget[],
  onStep?: (step: MirrorStep) => void | Promise<void>,
  board?: string,
): Promise<CommitResult> {
  if (parent.version === null) return { kind: "gone" };
  const ref = counterRef(db, counterId);
  const readTime = timestampOfMicros(sum.readUs);
  const values = { total: sum.total, windows: fields.windows?.windows ?? null };
  const entry = entryDue(board, parent.view.board, parent.view.total, sum.total) ? board : undefined;
  const extras = { ...commitExtras(counterId, fields), ...(entry === undefined ? {} : { [BOARD_FIELD]: entry }) };
  const commit = await commitTotalAt(ref, timestampOf(parent.version), values, readTime, extras, targets, onStep, fields.grow, entry);
  if (commit.kind !== "committed") return { kind: commit.kind, mirrorReads: commit.reads };
  return {
    kind: "committed",
    version: versionOf(commit.result.writeTime),
    commitUs: microsFloor(commit.result.writeTime),
    mirrorWrites: commit.targetWrites,
    mirrorReads: commit.reads,
    ...(entry === undefined ? {} : { boardWrites: 1 }),
  };
}

function commitExtras(counterId: string, fields: CommitFields): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  if (fields.intervalMs !== undefined) extras["rollup.intervalMs"] = fields.intervalMs;
  if (fields.reconciled === true) extras["rollup.reconciledAt"] = FieldValue.serverTimestamp();
  if (fields.load !== undefined) extras["rollup.load"] = storedLoad(fields.load);
  if (fields.grow !== undefined) extras.numShards = fields.grow.to;
  if (fields.trailing !== undefined) extras[TRAILING] = storedTrailing(fields.trailing);
  if (fields.kept !== undefined) extras.kept = fields.kept;
  if (fields.kept === "moving") extras["rollup.movingSince"] = FieldValue.serverTimestamp();
  return fields.windows === undefined ? extras : { ...extras, ...windowsFields(counterId, fields.windows) };
}

/** `rollup.load` as stored: the measure's read time and writes, and the hot streak's and its last step's (null when none). */
function storedLoad(load: Load): Record<string, unknown> {
  return {
    readTime: timestampOfMicros(load.readUs),
    writes: load.writes,
    hotSince: load.hot === null ? null : timestampOfMicros(load.hot.sinceUs),
    hotWrites: load.hot === null ? null : load.hot.writes,
    hotStepTime: load.hot?.step == null ? null : timestampOfMicros(load.hot.step.atUs),
    hotStepFrom: load.hot?.step == null ? null : load.hot.step.from,
  };
}

/** The steps of a mirrored commit, for tests: "commit" before each write, "read" before each read of the targets. */
export type MirrorStep = "commit" | "read";

/**
 * The commit: the parent's update and, in the same write, the total on every mirror target that exists
 * (mirrored.ts says how, and why only the parent's absence means "gone").
 */
async function commitTotalAt(
  ref: DocumentReference,
  lastUpdateTime: Timestamp,
  values: MirrorValues,
  readTime: Timestamp,
  extra: Record<string, unknown>,
  mirrors: readonly MirrorTarget[] = [],
  onStep?: (step: MirrorStep) => void | Promise<void>,
  grow?: { from: number; to: number },
  board?: string,
): Promise<MirroredCommit<WriteResult>> {
  const db = ref.firestore;
  const fields = {
    total: values.total,
    "rollup.readTime": readTime,
    "rollup.commits": FieldValue.increment(1),
    "rollup.committedAt": FieldValue.serverTimestamp(),
    ...extra,
  };
  const port: MirrorPort<WriteResult> = {
    async commit(present, absent) {
      await onStep?.("commit");
      const batch = db.batch();
      batch.update(ref, fields, { lastUpdateTime });
      if (grow !== undefined) {
        // New shards at 0, created with numShards (growth.ts). A merge of increment(0) creates a missing
        // shard and leaves one that somehow exists as it is: nothing already counted is ever overwritten.
        for (let i = grow.from; i < grow.to; i++) {
          batch.set(shardRef(db, ref.id, i), newShardMerge(), { merge: true });
        }
      }
      writeTargets(batch, db, ref.id, present, absent, values);
      // The leaderboard's entry at this very total (leaderboard/entry-writes.ts): the board's one write.
      if (board !== undefined) writeEntry(batch, db, board, ref.id, values.total);
      const [result] = await batch.commit();
      return result!;
    },
    async read(paths) {
      await onStep?.("read");
      const [parent, ...docs] = await db.getAll(ref, ...paths.map((path) => db.doc(path)));
      return {
        parent: !parent!.exists ? "gone" : parent!.updateTime!.isEqual(lastUpdateTime) ? "same" : "changed",
        exists: docs.map((doc) => doc.exists),
      };
    },
  };
  return await commitMirrored(port, mirrors, (target) => logMissingMirror(ref.id, target));
}

/**
 * A windowed counter's windows moved to a later day (midnight.ts), on condition that the parent is still at
 * `parent.version`: one update without mirrors; with them, one transaction (moveMirrored).
 */
export async function moveWindows(db: Firestore, counterId: string, parent: ParentRead, moved: WindowsState, targets: readonly MirrorTarget[]): Promise<MoveResult> {
  if (parent.version === null) return { kind: "gone", targetWrites: 0, reads: 0 };
  const ref = counterRef(db, counterId);
  const lastUpdateTime = timestampOf(parent.version);
  if (targets.length > 0) return await moveMirrored(ref, lastUpdateTime, moved, targets);
  try {
    await ref.update(windowsFields(counterId, moved), { lastUpdateTime });
    return { kind: "committed", targetWrites: 0, reads: 0 };
  } catch (error) {
    const code = grpcCode(error);
    if (code === GRPC.FAILED_PRECONDITION) return { kind: "changed", targetWrites: 0, reads: 0 };
    if (code === GRPC.NOT_FOUND) return { kind: "gone", targetWrites: 0, reads: 0 };
    throw error;
  }
}

/**
 * A mirrored counter's move of its windows: one transaction reads the parent and the target documents
 * (locked until it commits, so none can appear, disappear or change between the read and the write) and
 * writes the parent's windows and, on each target that exists, only the values that differ from what it
 * holds: a target that appeared since the last commit gets them all, one that holds them is not written.
 * The total stays as it is, so its targets are written only where they lost it.
 */
async function moveMirrored(ref: DocumentReference, lastUpdateTime: Timestamp, moved: WindowsState, targets: readonly MirrorTarget[]): Promise<MoveResult> {
  const db = ref.firestore;
  const paths = [...new Set(targets.map((t) => t.path))];
  return await db.runTransaction(async (tx) => {
    const [parent, ...docs] = await tx.getAll(ref, ...paths.map((path) => db.doc(path)));
    const reads = 1 + paths.length;
    if (!parent!.exists) return { kind: "gone", targetWrites: 0, reads };
    if (!parent!.updateTime!.isEqual(lastUpdateTime)) return { kind: "changed", targetWrites: 0, reads };
    const total = parent!.get("total") as unknown;
    if (typeof total !== "number") throw new Error(`counter "${ref.id}" has no numeric total to mirror`);
    const values: MirrorValues = { total, windows: moved.windows };
    let targetWrites = 0;
    docs.forEach((doc, i) => {
      const mirrors = targets.filter((t) => t.path === paths[i]);
      if (!doc.exists) return mirrors.forEach((target) => logMissingMirror(ref.id, target));
      const update = differingValues(ref.id, doc, mirrors, values);
      if (Object.keys(update).length === 0) return;
      tx.update(doc.ref, update);
      targetWrites++;
    });
    tx.update(ref, windowsFields(ref.id, moved));
    return { kind: "committed", targetWrites, reads };
  });
}

/** A windowed counter's commit fields: `windows`, `rollup.days` and `rollup.windowsMoveAt`. */
export function windowsFields(counterId: string, windows: WindowsState): Record<string, unknown> {
  return {
    windows: windows.windows,
    "rollup.days": windows.days,
    [WINDOWS_MOVE_AT]: moveAtTimestamp(counterId, windows.moveAtMs),
  };
}

/** A version token: the exact update time, so a precondition built from it matches to the nanosecond. */
export function versionOf(time: Timestamp): string {
  return `${time.seconds}.${String(time.nanoseconds).padStart(9, "0")}`;
}

export function timestampOf(version: string): Timestamp {
  const [seconds, nanos] = version.split(".");
  return new Timestamp(Number(seconds), Number(nanos));
}
