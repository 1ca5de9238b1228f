// addToRandomShard, incrementCounter's write: a delta on one random shard, with an idempotency record in
// the same batch when the caller sends a requestId, so a retried call applies its delta once. Every change
// is one atomic batch: a concurrent reset, reshard or delete lands wholly before or wholly after it.
import { FieldValue, Timestamp, type Firestore } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { CounterError, GRPC, grpcCode } from "../model/errors";
import { requestRef, shardRef } from "../model/paths";
import { dayOf } from "../model/windows";
import { timeOf, type Time } from "../model/time";
import { shapeOrCreate, type AutoCreateLookup } from "./auto-create";
import { forgetShape, notForUnique, type CounterShape } from "./shape";
import { shardIncrement } from "./shard-writes";
import { pickShard, type Random } from "../model/shards";

export interface IncrementResult {
  counterId: string;
  shard: number;
  applied: boolean;
  /**
   * Commit time of the write that applied the delta (for a replay: the first call's). Compared with the
   * parent's `rollup.readTime`, it tells a client whether `total` already contains this increment.
   */
  writeTime: Time;
}

export interface IncrementOptions {
  requestId?: string | undefined;
  requestTtlMs: number;
  random?: Random;
  now?: () => number;
  /** AUTO_CREATE: how a missing counter creates itself (auto-create.ts); asked only when it is missing. */
  autoCreate?: AutoCreateLookup | undefined;
}

/** Attempts before giving up when shards keep vanishing under us (reshards racing the increment). */
const INCREMENT_ATTEMPTS = 4;

/**
 * Adds `delta` to one random shard. With a `requestId`, the idempotency record and the shard update are
 * one batch: the record exists if and only if the delta was applied, and a second call with the same key
 * finds the record (`create()` fails) and applies nothing.
 */
export async function addToRandomShard(
  db: Firestore,
  counterId: string,
  delta: number,
  options: IncrementOptions,
): Promise<IncrementResult> {
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  for (let attempt = 0; attempt < INCREMENT_ATTEMPTS; attempt++) {
    const refuse = refuseUnique(counterId);
    const { numShards, unique, windowed } = await shapeOrCreate(db, counterId, attempt > 0, options.autoCreate, refuse);
    const refusal = refuse({ numShards, unique, windowed });
    if (refusal !== undefined) throw refusal;
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
    // The day is read from the clock right before the commit (model/windows.ts: DAY_CLOSES_AFTER_MS).
    batch.update(shardRef(db, counterId, shard), shardIncrement(delta, windowed ? dayOf(now()) : null));
    try {
      const [result] = await batch.commit(); // every write of a batch carries the batch's commit time
      return { counterId, shard, applied: true, writeTime: timeOf(result!.writeTime) };
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.ALREADY_EXISTS && options.requestId !== undefined) {
        const replay = await replayRequest(db, counterId, options.requestId, delta, { numShards, unique, windowed }, options, now);
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

/** incrementCounter's refusal of a unique counter (only setMember moves its total), also before one is auto-created. */
function refuseUnique(counterId: string): (shape: CounterShape) => CounterError | undefined {
  return (shape) => (shape.unique ? notForUnique(counterId, "incrementCounter", "only setMember moves its total") : undefined);
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
  shape: CounterShape,
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
    const fresh = pickShard(shape.numShards, random);
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
    batch.update(shardRef(db, counterId, fresh), shardIncrement(delta, shape.windowed ? dayOf(now()) : null));
    try {
      const [result] = await batch.commit();
      return { counterId, shard: fresh, applied: true, writeTime: timeOf(result!.writeTime) };
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
          writeTime: timeOf(renewed.updateTime!),
        };
      }
      if (code === GRPC.NOT_FOUND) return "expired";
      throw error;
    }
  }
  return { counterId, shard, applied: false, writeTime: timeOf(snap.updateTime!) };
}
