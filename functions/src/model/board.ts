// A leaderboard as data (docs/leaderboards.md): its summary (how many of its counters each bucket of totals
// holds, exact at the summary's read time), what a rank is made of (the summary's buckets above a total,
// plus a count() of the entries above it within its own bucket), and when a write that sets a counter's
// total must carry the counter's entry. Pure, no Firebase import: the functions (rankOf, the board's rollup,
// every writer of a total) and the model check share it; the client keeps its own copy of the rank's part
// (client/src/board.ts, held to this one by client/test/same-rank.test.ts).
//
// THE BUCKETS. `bounds` are ascending integers; bucket i holds the totals t with bounds[i-1] <= t < bounds[i]
// (bucket 0 from -infinity, the last to +infinity); `counts[i]` is how many counters of the board it holds.
// A rank of a counter whose total t lies in bucket i is
//   1 + (counts of the buckets after i) + (entries of the board with t < total < bounds[i]),
// the last a count() over the entries of one bucket only (board-buckets.ts keeps each at most BUCKET_CAP when
// the summary is written), and none at all when no integer lies strictly between t and bounds[i].
import { createHash } from "node:crypto";

/** A board's summary as its document holds it (paths.ts, boardRef); every rank read starts from it. */
export interface BoardSummary {
  /** The number of counters on the board: Σ counts. */
  of: number;
  bounds: number[];
  counts: number[];
}

/** A board before its first summary: one bucket, empty. */
export const EMPTY_SUMMARY: BoardSummary = Object.freeze({ of: 0, bounds: [], counts: [0] });

/**
 * The summary a board document holds; EMPTY_SUMMARY when it does not exist or cannot be read (only the
 * functions write it: a malformed one reads as a board before its first summary, whose rank counts every
 * entry above, and the next summary replaces it).
 */
export function summaryOf(data: unknown): BoardSummary {
  if (typeof data !== "object" || data === null) return EMPTY_SUMMARY;
  const { of, bounds, counts } = data as Record<string, unknown>;
  if (!Array.isArray(bounds) || !Array.isArray(counts) || counts.length !== bounds.length + 1) return EMPTY_SUMMARY;
  if (!bounds.every((b, i) => Number.isSafeInteger(b) && (i === 0 || (b as number) > (bounds[i - 1] as number)))) return EMPTY_SUMMARY;
  if (!counts.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) return EMPTY_SUMMARY;
  const sum = (counts as number[]).reduce((a, b) => a + b, 0);
  if (of !== sum) return EMPTY_SUMMARY;
  return { of: sum, bounds: bounds as number[], counts: counts as number[] };
}

/** The bucket a total lies in: the number of bounds at or below it. */
export function bucketOf(bounds: readonly number[], total: number): number {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bounds[mid]! <= total) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * What a rank of `total` needs besides the summary: `above`, the counters of the buckets after its own, and
 * the entries to count, those with `greaterThan` < total < `lessThan` (null: no upper bound); `count` null
 * when no integer lies in that range (nothing to count: no query).
 */
export interface RankQuery {
  above: number;
  count: { greaterThan: number; lessThan: number | null } | null;
}

export function rankQuery(summary: BoardSummary, total: number): RankQuery {
  const i = bucketOf(summary.bounds, total);
  let above = 0;
  for (let j = i + 1; j < summary.counts.length; j++) above += summary.counts[j]!;
  const lessThan = i < summary.bounds.length ? summary.bounds[i]! : null;
  const empty = lessThan !== null && lessThan <= total + 1;
  return { above, count: empty ? null : { greaterThan: total, lessThan } };
}

/** A counter's rank: 1 + the counters above it (`query.above` and `counted`, what the count() found). */
export function rankFrom(query: RankQuery, counted: number): number {
  return 1 + query.above + counted;
}

/**
 * A counter's entry's id: a hash of its id, so that the entries, which clients may count (and so list),
 * name no counter and no user. 32 hex characters (128 bits of SHA-256).
 */
export function entryKey(counterId: string): string {
  return createHash("sha256").update(counterId).digest("hex").slice(0, 32);
}

/**
 * Whether a write that sets a counter's total from `before` to `after` must write the counter's entry too:
 * the counter is on a board (`board`), and its total changed or its parent does not say yet that its entry
 * is on that board (`parentBoard`: the parent's `board` as read; the entry is written with it, so a parent
 * that names its board has its entry at its total). Every writer of a total (the rollup's commit, a reset,
 * reconcile's repair) asks this, in the write it conditions on the parent it read.
 */
export function entryDue(board: string | undefined, parentBoard: string | null | undefined, before: number | null | undefined, after: number): board is string {
  return board !== undefined && (parentBoard !== board || before !== after);
}
