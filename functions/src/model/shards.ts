// Pure shard arithmetic: which shard an increment lands on, which shard ids a counter has, how a stored
// `count` is read, and what a write of a delta changes on a shard. No Firebase import, so unit tests can pin
// every case.
import { addDays } from "./windows";

/** A source of numbers in [0, 1), injected so tests can choose the shard. */
export type Random = () => number;

/** Picks the shard an increment goes to: uniform over "0" … String(numShards - 1). */
export function pickShard(numShards: number, random: Random = Math.random): number {
  if (!Number.isSafeInteger(numShards) || numShards < 1) {
    throw new RangeError(`numShards must be a positive integer, got ${String(numShards)}`);
  }
  const r = random();
  if (!(r >= 0 && r < 1)) {
    throw new RangeError(`random() must return a number in [0, 1), got ${String(r)}`);
  }
  return Math.floor(r * numShards);
}

/** The shard ids of a counter with `numShards` shards, in order. */
export function shardIds(numShards: number): string[] {
  return Array.from({ length: numShards }, (_, i) => String(i));
}

/** Shard ids that exist with `from` shards but not with `to` (a reshard down); empty otherwise. */
export function removedShardIds(from: number, to: number): string[] {
  return shardIds(from).slice(to);
}

/** The outcome of reading a shard's `count`: malformed values count as 0 and are reported. */
export type ShardCount = { value: number; malformed: false } | { value: 0; malformed: true };

/**
 * Reads a stored `count`. A missing document counts 0. A present document must hold a safe integer;
 * anything else (missing field, string, float, beyond 2^53) is malformed and counts as 0, because only
 * the functions write shards and a corrupt value must never leak into a total.
 */
export function readCount(data: Record<string, unknown> | undefined): ShardCount {
  if (data === undefined) return { value: 0, malformed: false };
  const count = data.count;
  if (typeof count === "number" && Number.isSafeInteger(count)) return { value: count, malformed: false };
  return { value: 0, malformed: true };
}

/**
 * A shard document as a write event carries it, read once where the event becomes a shard write
 * (entry/rollupTotal.ts): its count, and what the rollup takes from it when it stands for the sum of a
 * counter of one shard (rollup/plan.ts, the single-shard snapshot sum).
 */
export interface ShardState {
  /** `count`, read by readCount: a malformed one counts as 0. */
  count: ShardCount;
  /** `count` as stored, for the log of a malformed one. */
  storedCount: unknown;
  /** `writes` when it is a safe integer; null otherwise (the sum then cannot measure the load from it). */
  writes: number | null;
  /** `days` as stored (a windowed counter's counts per day); {} when absent or not a map. */
  days: Record<string, unknown>;
}

/** The shard state of a document's data; undefined where the document does not exist. */
export function shardStateOf(data: Record<string, unknown> | undefined): ShardState | undefined {
  if (data === undefined) return undefined;
  const { writes, days } = data;
  return {
    count: readCount(data),
    storedCount: data.count,
    writes: typeof writes === "number" && Number.isSafeInteger(writes) ? writes : null,
    days: typeof days === "object" && days !== null ? (days as Record<string, unknown>) : {},
  };
}

/** A shard's `writes` (applied increments, rollup/growth.ts); 0 when absent or not a safe non-negative integer. */
export function readWrites(data: Record<string, unknown> | undefined): number {
  const writes = data?.writes;
  return typeof writes === "number" && Number.isSafeInteger(writes) && writes >= 0 ? writes : 0;
}

/**
 * Spreads `amount` over the kept shards `0 … keep-1` as evenly as integers allow, so that folding removed
 * shards into kept ones keeps the sum exact. Returns one addend per kept shard (zeros included).
 */
export function spread(amount: number, keep: number): number[] {
  if (!Number.isSafeInteger(amount)) throw new RangeError("amount must be a safe integer");
  if (!Number.isSafeInteger(keep) || keep < 1) throw new RangeError("keep must be a positive integer");
  const sign = amount < 0 ? -1 : 1;
  const abs = Math.abs(amount);
  const base = Math.floor(abs / keep);
  const extra = abs % keep;
  return Array.from({ length: keep }, (_, i) => sign * (base + (i < extra ? 1 : 0)) || 0);
}

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
 * What one write of a delta does to a shard, as data: the fields it adds an amount to, and the fields it
 * deletes. counters/shard-writes.ts makes the Firestore update of it (incrementCounter, setMember, a fold);
 * the benchmark, which makes its increments' shard writes itself, makes the same one.
 */
export interface ShardDelta {
  increments: Record<string, number>;
  deletes: string[];
}

/**
 * The delta `delta` on a shard: its count, and one more applied write (the load the rollup measures to grow
 * a counter: rollup/growth.ts); on a windowed counter (`day`: the UTC day of the applying clock) the day's
 * count too, and the deletion of days long gone. A shard that took no increment for those whole 7 days
 * keeps an older day, which no window reads. `dayDelta` is the part of `delta` that counts for `day` (all
 * of it for an increment; a fold of an extension counter's history counts in the total only).
 */
export function shardDelta(delta: number, day: string | null = null, dayDelta = delta): ShardDelta {
  const increments: Record<string, number> = { count: delta, writes: 1 };
  const deletes: string[] = [];
  if (day !== null) {
    if (dayDelta !== 0) increments[dayField(day)] = dayDelta;
    for (let back = PRUNED_DAYS.from; back <= PRUNED_DAYS.to; back++) deletes.push(dayField(addDays(day, -back)));
  }
  return { increments, deletes };
}
