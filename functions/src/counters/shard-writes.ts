// What every write of a shard document looks like, in one place: a delta moves `count` and adds 1 to
// `writes` in the same write (the load the rollup measures to grow a counter: rollup/growth.ts), and a new
// shard starts with both at 0 (so one aggregation query can sum both: rollup/sum.ts).
import { FieldValue } from "firebase-admin/firestore";

/** The update that applies `delta` to a shard: its count, and one more applied write. */
export function shardIncrement(delta: number): { count: FieldValue; writes: FieldValue } {
  return { count: FieldValue.increment(delta), writes: FieldValue.increment(1) };
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
