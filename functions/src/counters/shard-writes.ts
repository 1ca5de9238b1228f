// What every write of a shard document looks like, in one place: a delta moves `count` and adds 1 to
// `writes` in the same write (the load the rollup measures to grow a counter: rollup/growth.ts), and a new
// shard starts with both at 0 (so one aggregation query can sum both: rollup/sum.ts). On a windowed counter
// the same write adds the delta to `days.{day}` too, the net count of the day it was applied on
// (model/windows.ts), and drops the days that have left every window.
import { FieldValue } from "firebase-admin/firestore";
import { addDays } from "../model/windows";

/**
 * The days an increment drops from its shard: days 32 to 38 before its own. A sum reads back to the 30th
 * day before its rollup's day (KEPT_DAYS in windows.ts), and a writer's day is at most one day after a
 * rollup's (clocks a minute apart at midnight), so no sum ever reads a day an increment drops.
 */
export const PRUNED_DAYS = { from: 32, to: 38 } as const;

/** A shard's field for the net count of `day`. */
export function dayField(day: string): string {
  return `days.${day}`;
}

/**
 * The update that applies `delta` to a shard: its count, and one more applied write; on a windowed counter
 * (`day`: the UTC day of the applying clock) the day's count too, and the deletion of days long gone. A
 * shard that took no increment for those whole 7 days keeps an older day, which no window reads.
 * `dayDelta` is the part of `delta` that counts for `day` (all of it for an increment; a fold of an
 * extension counter's history counts in the total only: extension/fold.ts).
 */
export function shardIncrement(delta: number, day: string | null = null, dayDelta = delta): Record<string, FieldValue> {
  const update: Record<string, FieldValue> = { count: FieldValue.increment(delta), writes: FieldValue.increment(1) };
  if (day !== null) {
    if (dayDelta !== 0) update[dayField(day)] = FieldValue.increment(dayDelta);
    for (let back = PRUNED_DAYS.from; back <= PRUNED_DAYS.to; back++) update[dayField(addDays(day, -back))] = FieldValue.delete();
  }
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
