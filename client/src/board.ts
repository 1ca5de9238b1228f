// Pure: a leaderboard's summary as its document holds it, and what a rank is made of (the buckets above a
// total, plus a count() of the entries above it within its own bucket). The client's own copy of the functions'
// functions/src/model/board.ts (the client is built and published on its own: docs/development.md, "One day
// module, two copies held together"); client/test/same-rank.test.ts runs both over one table.

/** A board's summary: how many counters each bucket of totals holds; `bounds` between the buckets, ascending. */
export interface BoardSummary {
  of: number;
  bounds: number[];
  counts: number[];
}

/** A board before its first summary: one bucket, empty. */
export const EMPTY_SUMMARY: BoardSummary = Object.freeze({ of: 0, bounds: [], counts: [0] });

/** The summary a board document holds; EMPTY_SUMMARY when it does not exist or cannot be read. */
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

/** The counters of the buckets above a total's own, and the entries to count (greaterThan < total < lessThan); count null: none. */
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

/** A rank: 1 + the counters above (the buckets above, and what the count found). */
export function rankFrom(query: RankQuery, counted: number): number {
  return 1 + query.above + counted;
}
