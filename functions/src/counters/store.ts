// The only module that writes counters on behalf of callers: create, increment (with idempotency keys),
// reset, reshard and delete. Every change is one atomic batch or transaction, so a failed call leaves
// nothing behind and a concurrent increment lands either wholly before or wholly after it. Membership of
// unique counters is written by members.ts; what a deleted counter leaves behind, by cleanup.ts.
import { FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { finishDeletion, markDeleted } from "./cleanup";
import { CounterError, GRPC, grpcCode } from "./errors";
import type { MirrorTarget } from "./mirrors";
import { cleanupRef, COUNTERS, counterRef, leaseRef, requestRef, shardRef } from "./paths";
import { forgetShape, rememberShape, shapeIn, shapeOf } from "./shape";
import { logMissingMirror } from "./rollup/firestore";
import { pickShard, readCount, removedShardIds, shardIds, spread, type Random } from "./shards";

/** Transactions here lock at most the parent and the shards being removed; contention retries them. */
const ADMIN_TRANSACTION_ATTEMPTS = 20;

export interface CreateResult {
  counterId: string;
  numShards: number;
  unique: boolean;
}

/** A new auto id (20 characters), as Firestore makes them: createCounter without a counterId. */
export function newCounterId(db: Firestore): string {
  return db.collection(COUNTERS).doc().id;
}

/**
 * Creates the parent (`numShards`, `unique`, `total: 0`) and all its shards (`count: 0`) in one short
 * transaction. Shards exist from the start because increments use `update()`, which fails on a missing
 * shard: that is what keeps an increment from recreating a shard removed by a reshard or a deleted counter.
 *
 * The transaction reads the parent and the deletion marker (cleanup.ts) and refuses while the marker
 * exists: a counter deleted moments ago may still have members and idempotency records being removed, and
 * a new counter with the same id must start with none of them. Reading the marker in the transaction
 * serializes the create with the cleanup's last step, which removes the marker only once nothing is left.
 */
export async function createCounter(
  db: Firestore,
  counterId: string | undefined,
  numShards: number,
  options: { unique?: boolean; mirrors?: readonly MirrorTarget[] } = {},
): Promise<CreateResult> {
  const unique = options.unique ?? false;
  const mirrors = options.mirrors ?? [];
  const id = counterId ?? newCounterId(db);
  const parent = counterRef(db, id);
  try {
    await db.runTransaction(
      async (tx) => {
        const [existing, marker, ...targets] = await tx.getAll(parent, cleanupRef(db, id), ...mirrorRefs(db, mirrors));
        if (existing!.exists) throw new CounterError("already-exists", `counter "${id}" already exists`);
        if (marker!.exists) {
          throw new CounterError("failed-precondition", `counter "${id}" is still being deleted; try again shortly`);
        }
        tx.create(parent, {
          numShards,
          total: 0,
          unique,
          createdAt: FieldValue.serverTimestamp(),
          rollup: { commits: 0 },
        });
        for (const shardId of shardIds(numShards)) tx.set(shardRef(db, id, shardId), { count: 0 });
        // A counter created again after a delete starts its mirror at 0 too, not at the old total.
        writeMirrors(tx, id, mirrors, targets, 0);
      },
      { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
    );
  } catch (error) {
    if (grpcCode(error) === GRPC.ALREADY_EXISTS) throw new CounterError("already-exists", `counter "${id}" already exists`);
    throw error;
  }
  rememberShape(id, { numShards, unique });
  return { counterId: id, numShards, unique };
}

// ---------------------------------------------------------------------------------------------------

/** A commit time as plain integers, the way it crosses the callable protocol (DESIGN.md). */
export interface WriteTime {
  seconds: number;
  nanoseconds: number;
}

export interface IncrementResult {
  counterId: string;
  shard: number;
  applied: boolean;
  /**
   * Commit time of the write that applied the delta (for a replay: the first call's). Compared with the
   * parent's `rollup.readTime`, it tells a client whether `total` already contains this increment.
   */
  writeTime: WriteTime;
}

export function writeTimeOf(time: Timestamp): WriteTime {
  return { seconds: time.seconds, nanoseconds: time.nanoseconds };
}

export interface IncrementOptions {
  requestId?: string | undefined;
  requestTtlMs: number;
  random?: Random;
  now?: () => number;
}

/** Attempts before giving up when shards keep vanishing under us (reshards racing the increment). */
const INCREMENT_ATTEMPTS = 4;

/**
 * Adds `delta` to one random shard. With a `requestId`, the idempotency record and the shard update are
 * one batch: the record exists if and only if the delta was applied, and a second call with the same key
 * finds the record (`create()` fails) and applies nothing.
 */
export async function incrementCounter(
  db: Firestore,
  counterId: string,
  delta: number,
  options: IncrementOptions,
): Promise<IncrementResult> {
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  for (let attempt = 0; attempt < INCREMENT_ATTEMPTS; attempt++) {
    const { numShards, unique } = await shapeOf(db, counterId, attempt > 0);
    if (unique) throw notForUnique(counterId, "incrementCounter", "only setMember moves its total");
    const shard = pickShard(numShards, random);
    const batch = db.batch();
    if (options.requestId !== undefined) {
      batch.create(requestRef(db, counterId, options.requestId), {
        shard,
        delta,
        createdAt: FieldValue.serverTimestamp(),
        expireAt: Timestamp.fromMillis(now() + options.requestTtlMs),
      });
    }
    batch.update(shardRef(db, counterId, shard), { count: FieldValue.increment(delta) });
    try {
      const [result] = await batch.commit(); // every write of a batch carries the batch's commit time
      return { counterId, shard, applied: true, writeTime: writeTimeOf(result!.writeTime) };
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.ALREADY_EXISTS && options.requestId !== undefined) {
        const replay = await replayRequest(db, counterId, options.requestId, delta, numShards, options, now);
        if (replay !== "expired") return replay;
        continue;
      }
      if (code === GRPC.NOT_FOUND) {
        // The shard is gone: the counter was deleted or resharded down. Re-read and try again.
        forgetShape(counterId);
        logger.debug("increment hit a missing shard; retrying", { counterId, shard, attempt });
        continue;
      }
      throw error;
    }
  }
  throw new CounterError("aborted", `counter "${counterId}" kept changing shape; try again`);
}

/**
 * A requestId that was seen before. A live record means "already applied". A record past its expiry that
 * the TTL policy has not deleted yet counts as gone: the key is claimed again (guarded by the record's
 * update time, so two racing callers cannot both apply) and the caller retries the increment.
 *
 * The record is only ever written in the same batch as the shard increment it stands for (created with
 * the first one, rewritten when an expired key is renewed with a new one), so its update time is the
 * commit time of the write that applied the delta: that is the replay's writeTime.
 */
async function replayRequest(
  db: Firestore,
  counterId: string,
  requestId: string,
  delta: number,
  numShards: number,
  options: IncrementOptions,
  now: () => number,
): Promise<IncrementResult | "expired"> {
  const ref = requestRef(db, counterId, requestId);
  const snap = await ref.get();
  if (!snap.exists) return "expired"; // deleted (TTL) between our create and this read: claim it anew
  const expireAt = snap.get("expireAt") as unknown;
  const recordedShard = snap.get("shard") as unknown;
  const shard = typeof recordedShard === "number" ? recordedShard : -1;
  if (expireAt instanceof Timestamp && expireAt.toMillis() <= now()) {
    const random = options.random ?? Math.random;
    const fresh = pickShard(numShards, random);
    const batch = db.batch();
    batch.update(
      ref,
      {
        shard: fresh,
        delta,
        createdAt: FieldValue.serverTimestamp(),
        expireAt: Timestamp.fromMillis(now() + options.requestTtlMs),
      },
      { lastUpdateTime: snap.updateTime! },
    );
    batch.update(shardRef(db, counterId, fresh), { count: FieldValue.increment(delta) });
    try {
      const [result] = await batch.commit();
      return { counterId, shard: fresh, applied: true, writeTime: writeTimeOf(result!.writeTime) };
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.FAILED_PRECONDITION) {
        // Another call with the same key renewed it first: that one applied the delta.
        const renewed = await ref.get();
        if (!renewed.exists) return "expired";
        const renewedShard = renewed.get("shard") as unknown;
        return {
          counterId,
          shard: typeof renewedShard === "number" ? renewedShard : -1,
          applied: false,
          writeTime: writeTimeOf(renewed.updateTime!),
        };
      }
      if (code === GRPC.NOT_FOUND) return "expired";
      throw error;
    }
  }
  return { counterId, shard, applied: false, writeTime: writeTimeOf(snap.updateTime!) };
}

// ---------------------------------------------------------------------------------------------------
// Admin operations. Each runs in a transaction that reads the parent, so they serialize with each other;
// increments are plain batched writes and land before or after the commit, never half-way.

/** numShards of the parent, read inside the transaction (which locks it). */
async function readNumShards(tx: Transaction, db: Firestore, counterId: string): Promise<number> {
  return shapeIn(counterId, await tx.get(counterRef(db, counterId))).numShards;
}

/** The refusal of an operation that would let a unique counter's total differ from its members. */
function notForUnique(counterId: string, operation: string, why: string): CounterError {
  return new CounterError("failed-precondition", `${operation}: counter "${counterId}" is a unique counter; ${why}`);
}

/**
 * Sets every shard and the total to 0 in one transaction. Increments committed after it count from 0;
 * those committed before are gone. `resetAt` (the commit time) lets callers tell the two apart. A rollup
 * that summed the shards before the reset cannot overwrite the 0: its commit is conditioned on the
 * parent's update time, which the reset changed.
 *
 * The coverage rule (DESIGN.md) must keep holding across a reset: every increment with
 * `writeTime <= rollup.readTime` is accounted for in `total` (here: erased), every later one is not. So
 * the reset sets `rollup.readTime` to a time R with every erased increment at or before R and every
 * surviving one after it. The transaction reads the parent and every shard: serializability means no
 * write to them commits between those reads and the reset's commit, so the latest of their update times
 * is such an R (an increment's commit is its shard's update time or earlier; an increment folded away by a
 * reshard is covered by the reshard's parent update). Not a server timestamp: production resolves it to
 * the commit time, which would do too, but the emulator fills it from its own millisecond clock.
 */
export async function resetCounter(
  db: Firestore,
  counterId: string,
  options: { mirrors?: readonly MirrorTarget[] } = {},
): Promise<{ counterId: string }> {
  const mirrors = options.mirrors ?? [];
  await db.runTransaction(
    async (tx) => {
      const [parent, ...targets] = await tx.getAll(counterRef(db, counterId), ...mirrorRefs(db, mirrors));
      const { numShards, unique } = shapeIn(counterId, parent!);
      if (unique) throw notForUnique(counterId, "resetCounter", "its total is its number of members (delete it to start again)");
      const shards = await tx.getAll(...shardIds(numShards).map((id) => shardRef(db, counterId, id)));
      let coveredUntil = parent!.updateTime!;
      for (const shard of shards) {
        if (shard.exists && shard.updateTime!.valueOf() > coveredUntil.valueOf()) coveredUntil = shard.updateTime!;
      }
      for (const shard of shards) tx.set(shard.ref, { count: 0 });
      tx.update(parent!.ref, {
        total: 0,
        resetAt: FieldValue.serverTimestamp(),
        "rollup.readTime": coveredUntil,
      });
      writeMirrors(tx, counterId, mirrors, targets, 0);
    },
    { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
  );
  return { counterId };
}

/**
 * Changes the number of shards without changing their sum. Up: new shards start at 0. Down: the removed
 * shards are read (which locks them against increments until the commit), their counts are added to the
 * kept shards and they are deleted, all in one transaction. An increment that still targets a removed
 * shard afterwards fails on the missing document and retries on a kept one.
 */
export async function reshardCounter(
  db: Firestore,
  counterId: string,
  numShards: number,
): Promise<{ counterId: string; numShards: number }> {
  await db.runTransaction(
    async (tx) => {
      const current = await readNumShards(tx, db, counterId);
      if (current === numShards) return;
      if (numShards > current) {
        for (const id of shardIds(numShards).slice(current)) tx.set(shardRef(db, counterId, id), { count: 0 });
      } else {
        const removed = await tx.getAll(...removedShardIds(current, numShards).map((id) => shardRef(db, counterId, id)));
        let folded = 0;
        for (const shard of removed) {
          const count = readCount(shard.exists ? shard.data() : undefined);
          if (count.malformed) {
            logger.error("reshard drops a malformed shard count", { counterId, shardId: shard.id, path: shard.ref.path });
          }
          folded += count.value;
        }
        spread(folded, numShards).forEach((addend, i) => {
          if (addend !== 0) tx.update(shardRef(db, counterId, i), { count: FieldValue.increment(addend) });
        });
        for (const shard of removed) tx.delete(shard.ref);
      }
      tx.update(counterRef(db, counterId), { numShards });
    },
    { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
  );
  forgetShape(counterId);
  return { counterId, numShards };
}

/**
 * Deletes the parent, its shards and the rollup lease in one transaction, which also writes the deletion
 * marker: from then on increments and setMember calls fail with not-found and write nothing (their shard
 * update fails, taking the idempotency record or member document with it), trigger events find no parent,
 * and createCounter refuses the id. Then cleanup.ts removes the members and idempotency records (nothing
 * can add to them anymore) and, last, the marker.
 *
 * A counter whose parent is gone but whose marker remains (a cleanup cut off by a timeout or a crash) is
 * still being deleted: deleting it again finishes the cleanup instead of answering not-found.
 */
export async function deleteCounter(
  db: Firestore,
  counterId: string,
  options: { mirrors?: readonly MirrorTarget[] } = {},
): Promise<{ counterId: string }> {
  const mirrors = options.mirrors ?? [];
  await db.runTransaction(
    async (tx) => {
      const [parent, marker, ...targets] = await tx.getAll(counterRef(db, counterId), cleanupRef(db, counterId), ...mirrorRefs(db, mirrors));
      if (!parent!.exists && marker!.exists) return;
      const { numShards } = shapeIn(counterId, parent!);
      for (const id of shardIds(numShards)) tx.delete(shardRef(db, counterId, id));
      tx.delete(leaseRef(db, counterId));
      tx.delete(counterRef(db, counterId));
      markDeleted(tx, db, counterId);
      // The mirrored field goes with the counter: a count that no counter stands behind any more.
      writeMirrors(tx, counterId, mirrors, targets, FieldValue.delete());
    },
    { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
  );
  forgetShape(counterId);
  await finishDeletion(db, counterId);
  return { counterId };
}

// ---------------------------------------------------------------------------------------------------
// Mirrors (counters/mirrors.ts): an admin operation that writes `total` writes the same value to every
// mirror target in its transaction. The targets are read in the transaction first (reads come before
// writes), and a missing one is skipped with a warning: a target document is never created.

function mirrorRefs(db: Firestore, mirrors: readonly MirrorTarget[]) {
  return mirrors.map((target) => db.doc(target.path));
}

function writeMirrors(
  tx: Transaction,
  counterId: string,
  mirrors: readonly MirrorTarget[],
  snaps: readonly (DocumentSnapshot | undefined)[],
  value: number | FieldValue,
): void {
  mirrors.forEach((target, i) => {
    const snap = snaps[i];
    if (snap?.exists) tx.update(snap.ref, { [target.field]: value });
    else logMissingMirror(counterId, target);
  });
}
