// The only module that writes counters on behalf of callers: create, increment (with idempotency keys),
// reset, reshard and delete. Every change is one atomic batch or transaction, so a failed call leaves
// nothing behind and a concurrent increment lands either wholly before or wholly after it. Membership of
// unique counters is written by members.ts; what a deleted counter leaves behind, by cleanup.ts.
import { FieldValue, Timestamp, type DocumentSnapshot, type DocumentData, type DocumentReference, type Firestore, type Transaction, type UpdateData } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { backoffMs, pause } from "./backoff";
import { cleanUp, handOff, INLINE_BUDGET_MS, markDeleted } from "./cleanup";
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

/** Attempts of a reset whose read went stale before its write (a rollup commit, a reshard between them). */
const RESET_ATTEMPTS = 20;
/** The backoff step between those attempts (backoff.ts). */
const RESET_BACKOFF_STEP_MS = 10;

export interface ResetOptions {
  mirrors?: readonly MirrorTarget[];
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
    const batch = db.batch();
    for (const shard of shards) {
      if (!shard.exists) continue;
      const count = readCount(shard.data());
      if (count.malformed) {
        // Not a number: nothing to subtract from. Overwritten, if nothing wrote it since the read.
        logger.error("reset overwrites a malformed shard count", { counterId, shardId: shard.id, path: shard.ref.path });
        batch.update(shard.ref, { count: 0 }, { lastUpdateTime: shard.updateTime! });
      } else if (count.value !== 0) {
        batch.update(shard.ref, { count: FieldValue.increment(-count.value) });
      }
    }
    batch.update(at.ref, { total: 0, resetAt: readTime, "rollup.readTime": readTime }, { lastUpdateTime: at.updateTime! });
    writeMirrors(batch, counterId, mirrors, targets, 0);
    // A target missing at R is asserted still missing at the commit (a delete conditioned on absence
    // writes nothing): one that appeared in between must get the 0 too, so the reset reads again.
    const absent = new Map(targets.filter((t) => !t.exists).map((t) => [t.ref.path, t.ref]));
    for (const ref of absent.values()) batch.delete(ref, { exists: false });
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

export interface DeleteOptions {
  mirrors?: readonly MirrorTarget[];
  /** How long this call removes members and idempotency records before handing off (cleanup.ts). */
  cleanupBudgetMs?: number;
  nowMs?: () => number;
}

/**
 * Deletes the parent, its shards and the rollup lease in one transaction, which also writes the deletion
 * marker: from then on increments and setMember calls fail with not-found and write nothing (their shard
 * update fails, taking the idempotency record or member document with it), trigger events find no parent,
 * and createCounter refuses the id. Then it removes the members and idempotency records (nothing can add
 * to them anymore) and, last, the marker, for at most `cleanupBudgetMs`; what is left then is handed to
 * the trigger cleanupDeletedCounter, round by round (cleanup.ts). The answer does not wait for that: the
 * counter is gone when it comes, and the id can be created again once the marker is.
 *
 * A counter whose parent is gone but whose marker remains is still being deleted: there is no counter to
 * delete, so the answer is not-found (DESIGN.md) and nothing is touched; the cleanup goes on without the
 * caller (its rounds, or the sweep that resumes a stranded one: cleanup.ts).
 */
export async function deleteCounter(db: Firestore, counterId: string, options: DeleteOptions = {}): Promise<{ counterId: string }> {
  const mirrors = options.mirrors ?? [];
  const nowMs = options.nowMs ?? Date.now;
  await db.runTransaction(
    async (tx) => {
      const [parent, marker, ...targets] = await tx.getAll(counterRef(db, counterId), cleanupRef(db, counterId), ...mirrorRefs(db, mirrors));
      if (!parent!.exists && marker!.exists) {
        throw new CounterError("not-found", `counter "${counterId}" does not exist (an earlier delete of it is still cleaning up)`);
      }
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
  const progress = await cleanUp(db, counterId, nowMs() + (options.cleanupBudgetMs ?? INLINE_BUDGET_MS), { nowMs });
  // The marker this call wrote is at round 0; handOff moves it on only if nobody did (the sweep, for one).
  if (!progress.done && (await handOff(db, counterId, 0))) {
    logger.info("deleteCounter handed the rest of its cleanup to cleanupDeletedCounter", { counterId, removed: progress.removed, round: 1 });
  }
  return { counterId };
}

// ---------------------------------------------------------------------------------------------------
// Mirrors (counters/mirrors.ts): an admin operation that writes `total` writes the same value to every
// mirror target in its transaction. The targets are read in the transaction first (reads come before
// writes), and a missing one is skipped with a warning: a target document is never created.

function mirrorRefs(db: Firestore, mirrors: readonly MirrorTarget[]) {
  return mirrors.map((target) => db.doc(target.path));
}

/** What writeMirrors needs of a transaction or a batch. */
interface Updater {
  update(ref: DocumentReference, data: UpdateData<DocumentData>): unknown;
}

function writeMirrors(
  tx: Updater,
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
