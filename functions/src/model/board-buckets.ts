// A board's buckets counted again (model/board.ts says what they are): the "sum" of a board's rollup. Every
// bucket of the last summary is counted at one read time (the caller's counter reads every count of a
// recount at the same read time), then neighbours that together hold at most MERGE_AT_MOST counters are
// merged and a bucket that holds more than BUCKET_CAP is split at the median of its totals (found by
// binary search with counts), until each part holds at most BUCKET_CAP or holds one total only (which no
// split can divide, and no rank ever counts inside: model/board.ts, rankQuery). Pure: the counts come from
// an EntryCounter (Firestore in leaderboard/board-store.ts, memory in the model check).
//
// WHY IT IS EXACT. Nothing is accumulated: each count of the result is a count() of the entries in its range
// at the recount's read time, or a sum of such counts over disjoint ranges (a merge), or a count and its
// complement within a counted range (a split). So the summary is exactly the board's entries at that read
// time, whatever came before it, and a summary whose read time is at or after every entry write holds every
// counter's total as it is (the board's rollup sees to that: leaderboard/board-store.ts).

/** Most counters a bucket holds when a summary is written: a rank's count() then reads at most one page of 1,000 index entries. */
export const BUCKET_CAP = 1000;
/** Neighbours that together hold at most this many counters are merged (so a board of N counters has at most about 4N / BUCKET_CAP + 1 buckets). */
export const MERGE_AT_MOST = BUCKET_CAP / 2;
/** Buckets split per recount at most (each costs up to about 55 counts); the rest at the next. */
export const SPLITS_PER_RECOUNT = 8;

/** The entries of one board as one recount reads them: every answer at the same read time. */
export interface EntryCounter {
  /** The entries whose total t has lo <= t < hi (null: unbounded on that side). */
  count(lo: number | null, hi: number | null): Promise<number>;
  /** The smallest or largest total of the entries with lo <= t < hi; null when there is none. */
  extreme(lo: number | null, hi: number | null, which: "min" | "max"): Promise<number | null>;
}

export interface Buckets {
  bounds: number[];
  counts: number[];
}

export interface BucketLimits {
  cap: number;
  mergeAtMost: number;
  splits: number;
}

const LIMITS: BucketLimits = { cap: BUCKET_CAP, mergeAtMost: MERGE_AT_MOST, splits: SPLITS_PER_RECOUNT };

/** Counts `bounds`' buckets again through `counter`, then merges and splits them (see the header). */
export async function recountBuckets(bounds: readonly number[], counter: EntryCounter, limits: BucketLimits = LIMITS): Promise<Buckets> {
  const edges: (number | null)[] = [null, ...bounds, null];
  const counted = await Promise.all(Array.from({ length: bounds.length + 1 }, (_, i) => counter.count(edges[i] ?? null, edges[i + 1] ?? null)));
  const merged = merge({ bounds: [...bounds], counts: counted }, limits.mergeAtMost);
  const out: Buckets = { bounds: [], counts: [] };
  let splits = limits.splits;
  for (let i = 0; i < merged.counts.length; i++) {
    const lo = i === 0 ? null : merged.bounds[i - 1]!;
    const hi = i < merged.bounds.length ? merged.bounds[i]! : null;
    const parts = merged.counts[i]! > limits.cap && splits > 0 ? await split(counter, lo, hi, merged.counts[i]!, limits.cap, () => splits-- > 0) : [{ lo, n: merged.counts[i]! }];
    for (const [j, part] of parts.entries()) {
      if (i > 0 || j > 0) out.bounds.push(part.lo!);
      out.counts.push(part.n);
    }
  }
  return out;
}

/** Neighbours merged while together they hold at most `atMost` (the boundary between them goes). */
function merge(buckets: Buckets, atMost: number): Buckets {
  const out: Buckets = { bounds: [], counts: [buckets.counts[0]!] };
  for (let i = 1; i < buckets.counts.length; i++) {
    const last = out.counts.length - 1;
    if (out.counts[last]! + buckets.counts[i]! <= atMost) out.counts[last]! += buckets.counts[i]!;
    else {
      out.bounds.push(buckets.bounds[i - 1]!);
      out.counts.push(buckets.counts[i]!);
    }
  }
  return out;
}

/** One part of a split bucket: its lower bound (null: from -infinity) and how many entries it holds. */
interface Part {
  lo: number | null;
  n: number;
}

/**
 * [lo, hi), holding n > cap entries, split at the median of its totals: the least total m with at least half
 * of the entries below it (each side then holds at least one), each side split again while it holds more
 * than `cap` and more than one total, as long as `allowed()` grants another split.
 */
async function split(counter: EntryCounter, lo: number | null, hi: number | null, n: number, cap: number, allowed: () => boolean): Promise<Part[]> {
  if (n <= cap || !allowed()) return [{ lo, n }];
  const min = await counter.extreme(lo, hi, "min");
  const max = await counter.extreme(lo, hi, "max");
  if (min === null || max === null || min === max) return [{ lo, n }]; // one total: nothing divides it
  const m = await median(counter, lo, min, max, Math.ceil(n / 2));
  if (m === null) return [{ lo, n }];
  const below = await counter.count(lo, m);
  const left = await split(counter, lo, m, below, cap, allowed);
  const right = await split(counter, m, hi, n - below, cap, allowed);
  return [...left, ...right];
}

/** Steps a binary search over safe integers may take before it gives up (2^64 > any range of them). */
const SEARCH_STEPS = 64;

/**
 * The least m in (min, max] with at least `half` entries in [lo, m); max when there is none. min < max, so
 * both [lo, m) (which holds min) and [m, hi) (which holds max) are not empty. Null if the search does not
 * settle (totals near the ends of the safe integers, where the midpoint is not exact).
 */
async function median(counter: EntryCounter, lo: number | null, min: number, max: number, half: number): Promise<number | null> {
  let low = min + 1;
  let high = max;
  for (let step = 0; low < high; step++) {
    if (step >= SEARCH_STEPS) return null;
    const mid = Math.min(high - 1, Math.max(low, low + Math.floor((high - low) / 2)));
    if ((await counter.count(lo, mid)) >= half) high = mid;
    else low = mid + 1;
  }
  return low;
}
