// Pure shard arithmetic: which shard an increment lands on, which shard ids a counter has, and how a
// stored `count` is read. No Firebase import, so unit tests can pin every case.

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
