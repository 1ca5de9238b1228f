// resetCounter's write: every shard and the total (and a windowed counter's days and windows) back to 0 while increments keep landing, exactly
// (the argument is below), with the 0 on the counter's mirror targets (mirror-writes.ts).
import { FieldValue, type Firestore } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { backoffMs, pause } from "./backoff";
import { CounterError, GRPC, grpcCode } from "./errors";
import type { MirrorTarget } from "./mirror-rules";
import { assertAbsent, mirrorRefs, writeMirrors } from "./mirror-writes";
import { counterRef, shardRef } from "./paths";
import { forgetShape, notForUnique, shapeIn, shapeOf } from "./shape";
import { readCount, shardIds } from "./shards";
import { addDays, dayOf } from "./days";
import { dayField } from "./shard-writes";
import { dayCountsOf, KEPT_DAYS, windowsOf } from "./windows";

/**
 * The update that takes a shard's day counts back to 0, as its count: `increment(-n)` for each day of the
 * windows around `today` that the shard holds at the read. Older days no window spans are left for the
 * increments' pruning (shard-writes.ts), which could otherwise race a subtraction into a stray day.
 */
function dayErasures(days: unknown, today: string): Record<string, FieldValue> {
  const erase: Record<string, FieldValue> = {};
  const oldest = addDays(today, 1 - KEPT_DAYS);
  const newest = addDays(today, 1);
  for (const [day, count] of Object.entries(dayCountsOf(days) ?? {})) {
    if (day >= oldest && day <= newest && count !== 0) erase[dayField(day)] = FieldValue.increment(-count);
  }
  return erase;
}

/** Attempts of a reset whose read went stale before its write (a rollup commit, a reshard between them). */
const RESET_ATTEMPTS = 20;
/** The backoff step between those attempts (backoff.ts). */
const RESET_BACKOFF_STEP_MS = 10;

export interface ResetOptions {
  mirrors?: readonly MirrorTarget[];
  /** The clock whose UTC day a windowed counter's windows are reset for (tests cross midnight with it). */
  now?: () => number;
  /** Runs between the reset's read and its write; tests use it to land writes in that window. */
  beforeCommit?: () => Promise<void>;
}

/**
 * Takes every shard and the total back to 0 without locking the shards: increments keep landing, at full
 * speed, while a reset runs. Those committed after it count from 0; those committed before are gone.
 *
 * How, and why it is exact. The reset reads the parent, every shard and the mirror targets in one getAll
 * of a read-only transaction: a consistent snapshot at one read time R that takes no lock. Then one batch
 * subtracts from each shard the count it held at R (`increment(-count)`; a shard at 0 is not written) and
 * sets `total: 0` and `rollup.readTime` = `resetAt` = R, conditioned on the parent's update time as of R.
 * - An increment committed at or before R is in the count read, so it is subtracted: erased. One
 *   committed after R is not, and increments commute: it survives the subtraction. So after the batch
 *   every shard holds exactly the increments committed after R, and the coverage rule holds with
 *   `rollup.readTime` = R (`total` 0 covers everything up to R, nothing after).
 * - Everything else that changes shards (reshard, delete, another reset) writes the parent in the same
 *   atomic commit, so the precondition refuses the batch if any of them ran between the read and the
 *   write, and the reset reads again. So does a rollup commit in that window (it only wrote the total,
 *   but the precondition cannot tell), a few percent of resets on a counter rolled up every second.
 * - A rollup that summed the shards before the batch cannot overwrite its 0: the rollup's commit is
 *   conditioned on the parent's update time too. Each shard the batch writes fires a rollup event whose
 *   update time is after R, so the increments that survived are rolled up as usual.
 * Cost: 1 + numShards + mirrors reads, 1 + (shards not at 0) + mirrors writes (a missing target's
 * assertion of absence counts as one), and one rollup event per shard written. The old way (one transaction that set every shard to 0) held a lock on every shard from
 * its read to its commit: every increment on the counter waited for it, and under load it could run out
 * of attempts.
 */
export async function resetCounter(db: Firestore, counterId: string, options: ResetOptions = {}): Promise<{ counterId: string }> {
  const mirrors = options.mirrors ?? [];
  const now = options.now ?? Date.now;
  const targetRefs = mirrorRefs(db, mirrors);
  for (let attempt = 0; attempt < RESET_ATTEMPTS; attempt++) {
    // One read of everything at one read time, with the shard count this instance knows (cached, or read
    // first); a stale guess shows in the parent read with the shards, and the reset reads again.
    const guess = await shapeOf(db, counterId, attempt > 0);
    if (guess.unique) throw notForUnique(counterId, "resetCounter", "its total is its number of members (delete it to start again)");
    const shardRefs = shardIds(guess.numShards).map((id) => shardRef(db, counterId, id));
    const snapshot = await db.runTransaction((tx) => tx.getAll(counterRef(db, counterId), ...targetRefs, ...shardRefs), {
      readOnly: true, // one snapshot for every read, and no lock
    });
    const at = snapshot[0]!;
    const targets = snapshot.slice(1, 1 + targetRefs.length);
    const shards = snapshot.slice(1 + targetRefs.length);
    const shape = shapeIn(counterId, at); // not-found if the counter is gone
    if (shape.unique || shape.numShards !== guess.numShards) {
      forgetShape(counterId);
      continue;
    }
    const readTime = at.readTime;
    const today = dayOf(now());
    const batch = db.batch();
    for (const shard of shards) {
      if (!shard.exists) continue;
      const count = readCount(shard.data());
      if (count.malformed) {
        // Not a number: nothing to subtract from. Overwritten, if nothing wrote it since the read.
        logger.error("reset overwrites a malformed shard count", { counterId, shardId: shard.id, path: shard.ref.path });
        batch.update(shard.ref, { count: 0 }, { lastUpdateTime: shard.updateTime! });
      } else {
        // A windowed counter's days go back to 0 the same way (counters/windows.ts).
        const erase: Record<string, FieldValue> = shape.windowed ? dayErasures(shard.get("days"), today) : {};
        if (count.value !== 0) erase.count = FieldValue.increment(-count.value);
        if (Object.keys(erase).length > 0) batch.update(shard.ref, erase);
      }
    }
    const windows = shape.windowed ? { windows: windowsOf({}, today), "rollup.days": {}, "rollup.windowsMoveAt": null } : {};
    batch.update(at.ref, { total: 0, resetAt: readTime, "rollup.readTime": readTime, ...windows }, { lastUpdateTime: at.updateTime! });
    writeMirrors(batch, counterId, mirrors, targets, 0, shape);
    // A target missing at R is asserted still missing at the commit (a delete conditioned on absence
    // writes nothing): one that appeared in between must get the 0 too, so the reset reads again.
    assertAbsent(batch, targets);
    if (options.beforeCommit !== undefined) await options.beforeCommit();
    try {
      await batch.commit();
      return { counterId };
    } catch (error) {
      const code = grpcCode(error);
      // FAILED_PRECONDITION: the parent (or a malformed shard) was written since the read. NOT_FOUND: a
      // shard or mirror target went away (a reshard or delete, which the next read sees). ALREADY_EXISTS
      // (or FAILED_PRECONDITION): a mirror target appeared. Read again.
      if (code !== GRPC.FAILED_PRECONDITION && code !== GRPC.NOT_FOUND && code !== GRPC.ALREADY_EXISTS && code !== GRPC.ABORTED) throw error;
      logger.debug("reset read went stale; reading again", { counterId, attempt, code });
      await pause(backoffMs(attempt, Math.random, RESET_BACKOFF_STEP_MS));
    }
  }
  throw new CounterError("aborted", `resetCounter: counter "${counterId}" kept changing; try again`);
}
