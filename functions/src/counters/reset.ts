// zeroShardsAndTotal, resetCounter's write: every shard and the total (and a windowed counter's days and
// windows) back to 0 while increments keep landing and the rollup keeps committing, exactly (the argument:
// reset-plan.ts), with the new values on the counter's mirror targets (mirror-writes.ts).
import { FieldValue, Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { backoffMs, pause } from "../model/backoff";
import { CounterError, GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { logMissingMirror, mirroredValue, mirrorRefs } from "./mirror-writes";
import { counterRef, shardRef } from "../model/paths";
import { ADMIN_TRANSACTION_ATTEMPTS, forgetShape, notForUnique, shapeIn, shapeOf } from "./shape";
import { dayField, readCount, shardIds } from "../model/shards";
import { type DayCounts, dayCountsOf, dayOf, shardDaysOf, windowsMoveAtMs, windowsOf } from "../model/windows";
import { erasedDays, resetPlan, type ResetMarks, type ResetParent, type ResetRead } from "../model/reset-plan";
import { microsFloor } from "../model/time";
import { moveAtTimestamp } from "./times";
import { BOARD_FIELD, writeEntry } from "../leaderboard/entry-writes";

/** Attempts of a reset whose read went stale before its write (another reset, a reshard, a delete between them). */
const RESET_ATTEMPTS = 20;
/** The backoff step between those attempts (backoff.ts). */
const RESET_BACKOFF_STEP_MS = 10;

export interface ResetOptions {
  mirrors?: readonly MirrorTarget[];
  /** The leaderboard the counter is on (LEADERBOARDS): its entry takes the new total in the same write. */
  board?: string;
  /** The clock whose UTC day a windowed counter's windows are reset for (tests cross midnight with it). */
  now?: () => number;
  /** Runs between the reset's read and its write; tests use it to land writes in that window. */
  beforeCommit?: () => Promise<void>;
}

/** One shard's part of the write: what takes it back to 0, with a precondition when its count is overwritten. */
interface ShardErasure {
  ref: DocumentReference;
  update: Record<string, FieldValue | number>;
  /** A malformed count is overwritten, only if nothing wrote the shard since the read. */
  lastUpdateTime?: Timestamp;
}

/**
 * Takes every shard and the total back to 0 without locking the shards: increments keep landing, at full
 * speed, while a reset runs. Those committed after it count from 0; those committed before are gone.
 *
 * How. The reset reads the parent and every shard in one read-only transaction: a consistent snapshot at
 * one read time R that takes no lock. Then one transaction reads the parent again (locking it, and the
 * mirror targets, until it commits), decides with resetPlan (reset-plan.ts: why it is exact) and writes:
 * `increment(-count at R)` on each shard that held something (a windowed counter's days too), and on the
 * parent `total`, `resetAt` = R and `rollup.readTime` (R, or the later read time of a rollup commit that
 * came in between, whose total then loses what the reset erased), with the same values on the targets.
 * Increments commute with the subtraction, and rollup commits are taken into account rather than refused,
 * so on a busy counter (its parent committed every second) a reset of any size commits at its first
 * attempt; only another reset, a reshard or a delete in between makes it read again.
 * Cost: 1 + numShards reads, then 1 + mirror targets in the write; 1 + (shards not at 0) + existing targets
 * written, and one rollup event per shard written. The old ways held a lock on every shard from its read
 * to its commit (every increment waited for it), or conditioned the write on the parent's update time
 * (a rollup commit between read and write made it start again, and on a big busy counter it gave up).
 */
export async function zeroShardsAndTotal(db: Firestore, counterId: string, options: ResetOptions = {}): Promise<{ counterId: string }> {
  const mirrors = options.mirrors ?? [];
  const now = options.now ?? Date.now;
  for (let attempt = 0; attempt < RESET_ATTEMPTS; attempt++) {
    if (attempt > 0) await pause(backoffMs(attempt, Math.random, RESET_BACKOFF_STEP_MS));
    // One read of everything at one read time, with the shard count this instance knows (cached, or read
    // first); a stale guess shows in the parent read with the shards, and the reset reads again.
    const guess = await shapeOf(db, counterId, attempt > 0);
    if (guess.unique) throw notForUnique(counterId, "resetCounter", "its total is its number of members (delete it to start again)");
    const shardRefs = shardIds(guess.numShards).map((id) => shardRef(db, counterId, id));
    const snapshot = await db.runTransaction((tx) => tx.getAll(counterRef(db, counterId), ...shardRefs), {
      readOnly: true, // one snapshot for every read, and no lock
    });
    const at = snapshot[0]!;
    const shape = shapeIn(counterId, at); // not-found if the counter is gone
    if (shape.unique || shape.numShards !== guess.numShards) {
      forgetShape(counterId);
      continue;
    }
    const today = dayOf(now());
    const erasing = erasuresOf(counterId, snapshot.slice(1), shape.windowed ? today : null);
    const read: ResetRead = { readUs: microsFloor(at.readTime), marks: marksOf(at), total: erasing.total, days: erasing.days };
    if (options.beforeCommit !== undefined) await options.beforeCommit();
    const outcome = await writeReset(db, counterId, { read, readTime: at.readTime, erasures: erasing.erasures, mirrors, today, board: options.board });
    if (outcome === "committed") return { counterId };
    if (outcome === "gone") throw new CounterError("not-found", `counter "${counterId}" does not exist`);
    logger.debug("reset read went stale; reading again", { counterId, attempt });
  }
  throw new CounterError("aborted", `resetCounter: counter "${counterId}" kept changing; try again`);
}

/** What marks the parent's history at a read: its creation, its last reset, its reshards. */
function marksOf(parent: DocumentSnapshot): ResetMarks {
  const resetAt = parent.get("resetAt") as unknown;
  const reshards = parent.get("rollup.reshards") as unknown;
  return {
    createdUs: microsFloor(parent.createTime!),
    resetUs: resetAt instanceof Timestamp ? microsFloor(resetAt) : null,
    reshards: typeof reshards === "number" ? reshards : 0,
  };
}

/** The parent as the write finds it. */
function resetParentOf(parent: DocumentSnapshot): ResetParent {
  if (!parent.exists) return { exists: false, marks: { createdUs: 0, resetUs: null, reshards: 0 }, total: 0, coveredUntilUs: null, days: null };
  const total = parent.get("total") as unknown;
  const readTime = parent.get("rollup.readTime") as unknown;
  return {
    exists: true,
    marks: marksOf(parent),
    total: typeof total === "number" ? total : 0,
    coveredUntilUs: readTime instanceof Timestamp ? microsFloor(readTime) : null,
    days: dayCountsOf(parent.get("rollup.days")),
  };
}

/**
 * What takes each shard read back to 0, and what they held: Σ counts and, on a windowed counter (`today`:
 * the resetting clock's day), Σ of each erased day. Days older than the erased ones, which no window of
 * `today` spans, are left to the increments' pruning (shard-writes.ts), which could otherwise race a
 * subtraction into a stray day.
 */
function erasuresOf(counterId: string, shards: DocumentSnapshot[], today: string | null): { erasures: ShardErasure[]; total: number; days: DayCounts | null } {
  const erasures: ShardErasure[] = [];
  const days: DayCounts | null = today === null ? null : {};
  const range = today === null ? null : erasedDays(today);
  let total = 0;
  for (const shard of shards) {
    if (!shard.exists) continue;
    const count = readCount(shard.data());
    if (count.malformed) {
      // Not a number: nothing to subtract from. Overwritten, if nothing wrote it since the read.
      logger.error("reset overwrites a malformed shard count", { counterId, shardId: shard.id, path: shard.ref.path });
      erasures.push({ ref: shard.ref, update: { count: 0 }, lastUpdateTime: shard.updateTime! });
      continue;
    }
    const update: Record<string, FieldValue> = {};
    if (count.value !== 0) update.count = FieldValue.increment(-count.value);
    total += count.value;
    if (range !== null && days !== null) {
      for (const [day, n] of Object.entries(shardDaysOf(shard.get("days")) ?? {})) {
        if (day < range.from || day > range.to || n === 0) continue;
        update[dayField(day)] = FieldValue.increment(-n);
        days[day] = (days[day] ?? 0) + n;
      }
    }
    if (Object.keys(update).length > 0) erasures.push({ ref: shard.ref, update });
  }
  return { erasures, total, days };
}

interface ResetWrite {
  read: ResetRead;
  /** R itself (its nanoseconds included): `resetAt`, and `rollup.readTime` when nothing after it is covered. */
  readTime: Timestamp;
  erasures: ShardErasure[];
  mirrors: readonly MirrorTarget[];
  today: string;
  board: string | undefined;
}

/** The write (see zeroShardsAndTotal): one transaction over the parent and the mirror targets. */
async function writeReset(db: Firestore, counterId: string, write: ResetWrite): Promise<"committed" | "gone" | "retry"> {
  const ref = counterRef(db, counterId);
  try {
    return await db.runTransaction(
      async (tx) => {
        const [parent, ...targets] = await tx.getAll(ref, ...mirrorRefs(db, write.mirrors));
        const plan = resetPlan(write.read, resetParentOf(parent!));
        if (plan.kind === "gone" || plan.kind === "retry") return plan.kind;
        if (plan.kind === "unreadable-days") {
          throw new Error(`resetCounter: counter "${counterId}" has a rollup.days that cannot be read; npm run reconcile -- --fix sums it again`);
        }
        for (const e of write.erasures) {
          if (e.lastUpdateTime === undefined) tx.update(e.ref, e.update);
          else tx.update(e.ref, e.update, { lastUpdateTime: e.lastUpdateTime });
        }
        const windows = plan.days === null ? null : windowsOf(plan.days, write.today);
        // The load its last commit measured no longer tells what the shards hold: deleted (rollup/plan.ts, markOfParent).
        const fields: Record<string, unknown> = { total: plan.total, resetAt: write.readTime, "rollup.load": FieldValue.delete() };
        if (plan.covers === "read") fields["rollup.readTime"] = write.readTime;
        if (plan.days !== null) {
          const moveAtMs = windowsMoveAtMs(plan.days, write.today);
          Object.assign(fields, { windows, "rollup.days": plan.days, "rollup.windowsMoveAt": moveAtTimestamp(counterId, moveAtMs) });
        }
        if (write.board !== undefined) {
          fields[BOARD_FIELD] = write.board;
          writeEntry(tx, db, write.board, counterId, plan.total);
        }
        tx.update(ref, fields);
        write.mirrors.forEach((target, i) => {
          if (!targets[i]!.exists) return logMissingMirror(counterId, target);
          const value = mirroredValue(counterId, target, { total: plan.total, windows });
          if (value !== undefined) tx.update(targets[i]!.ref, { [target.field]: value });
        });
        return "committed";
      },
      { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
    );
  } catch (error) {
    // FAILED_PRECONDITION: a malformed shard was written since the read. NOT_FOUND: a shard went away (the
    // counter was deleted). Read again: the next read sees it.
    const code = grpcCode(error);
    if (code === GRPC.FAILED_PRECONDITION || code === GRPC.NOT_FOUND) return "retry";
    throw error;
  }
}
