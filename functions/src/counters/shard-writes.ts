// What every write of a shard document looks like, as Firestore updates: a delta moves `count` and adds 1 to
// `writes` in the same write (model/shards.ts, shardDelta, the data of it), and a new shard starts with both
// at 0 (so one aggregation query can sum both: rollup/sum.ts).
import { FieldValue } from "firebase-admin/firestore";
import { shardDelta } from "../model/shards";

/**
 * The update that applies `delta` to a shard (model/shards.ts, shardDelta, says what it changes and why):
 * its count, one more applied write and, on a windowed counter, the day's count and the deletion of days
 * long gone.
 */
export function shardIncrement(delta: number, day: string | null = null, dayDelta = delta): Record<string, FieldValue> {
  const { increments, deletes } = shardDelta(delta, day, dayDelta);
  const update: Record<string, FieldValue> = {};
  for (const [field, amount] of Object.entries(increments)) update[field] = FieldValue.increment(amount);
  for (const field of deletes) update[field] = FieldValue.delete();
  return update;
}

/** A new shard, written with set(): nothing counted, nothing applied. */
export const NEW_SHARD = { count: 0, writes: 0 } as const;

/**
 * A new shard written with set(..., { merge: true }) where a shard might, against every invariant, exist
 * already: it creates a missing one at 0 and leaves an existing one as it is, so nothing counted is lost.
 */
export function newShardMerge(): { count: FieldValue; writes: FieldValue } {
  return { count: FieldValue.increment(0), writes: FieldValue.increment(0) };
}
