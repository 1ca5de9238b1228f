// A board's recount (model/board-buckets.ts) over boards held in memory: every bucket's count is the
// number of totals in its range, every bucket holds at most the cap unless it holds one total only, small
// neighbours merge, and each recount of a changed board is exact whatever the buckets were before. Seeded
// (BUCKETS_SEED replays one; a failure prints its seed).
import { BUCKET_CAP, MERGE_AT_MOST, recountBuckets, type BucketLimits, type Buckets, type EntryCounter } from "../src/model/board-buckets";
import { rankFrom, rankQuery } from "../src/model/board";
import { rngOf } from "../../test/helpers/model/sim";

function counterOf(totals: readonly number[]): EntryCounter & { queries: number } {
  const inRange = (t: number, lo: number | null, hi: number | null) => (lo === null || t >= lo) && (hi === null || t < hi);
  const counter = {
    queries: 0,
    count: (lo: number | null, hi: number | null) => {
      counter.queries++;
      return Promise.resolve(totals.filter((t) => inRange(t, lo, hi)).length);
    },
    extreme: (lo: number | null, hi: number | null, which: "min" | "max") => {
      counter.queries++;
      const inside = totals.filter((t) => inRange(t, lo, hi));
      if (inside.length === 0) return Promise.resolve(null);
      return Promise.resolve(which === "min" ? Math.min(...inside) : Math.max(...inside));
    },
  };
  return counter;
}

/** What a summary must be, for the totals: every count right, each bucket within the cap or one total only. */
function problems(buckets: Buckets, totals: readonly number[], cap: number): string[] {
  const found: string[] = [];
  if (buckets.counts.length !== buckets.bounds.length + 1) found.push("counts and bounds do not fit");
  for (let i = 1; i < buckets.bounds.length; i++) if (buckets.bounds[i]! <= buckets.bounds[i - 1]!) found.push(`bounds not ascending at ${i}`);
  buckets.counts.forEach((n, i) => {
    const lo = i === 0 ? -Infinity : buckets.bounds[i - 1]!;
    const hi = i < buckets.bounds.length ? buckets.bounds[i]! : Infinity;
    const inside = totals.filter((t) => t >= lo && t < hi);
    if (inside.length !== n) found.push(`bucket ${i} [${lo}, ${hi}) says ${n}, holds ${inside.length}`);
    if (n > cap && new Set(inside).size > 1) found.push(`bucket ${i} [${lo}, ${hi}) holds ${n} > ${cap} of ${new Set(inside).size} totals`);
  });
  return found;
}

const SMALL: BucketLimits = { cap: 8, mergeAtMost: 4, splits: 1000 };

describe("recountBuckets", () => {
  it("keeps one bucket while the board is small", async () => {
    const totals = [3, 1, 4, 1, 5];
    expect(await recountBuckets([], counterOf(totals))).toEqual({ bounds: [], counts: [5] });
    expect(await recountBuckets([], counterOf([]))).toEqual({ bounds: [], counts: [0] });
  });

  it("splits a bucket past the cap at the median of its totals, and again until each part fits", async () => {
    const totals = Array.from({ length: 2_500 }, (_, i) => i);
    const buckets = await recountBuckets([], counterOf(totals));
    expect(problems(buckets, totals, BUCKET_CAP)).toEqual([]);
    expect(buckets.counts.every((n) => n <= BUCKET_CAP && n >= MERGE_AT_MOST / 2)).toBe(true);
  });

  it("leaves a bucket of one total whole however many hold it, and splits the totals around it off", async () => {
    const totals = [...Array.from({ length: 20 }, () => 7), 1, 2, 9, 12];
    const buckets = await recountBuckets([], counterOf(totals), SMALL);
    expect(problems(buckets, totals, SMALL.cap)).toEqual([]);
    const seven = buckets.counts.find((n) => n >= 20);
    expect(seven).toBe(20);
  });

  it("merges neighbours that hold few, and never merges past the threshold", async () => {
    const before = { bounds: [10, 20, 30, 40], counts: [] };
    const totals = [1, 11, 12, 35, 36, 37, 38, 39];
    const buckets = await recountBuckets(before.bounds, counterOf(totals), SMALL);
    expect(problems(buckets, totals, SMALL.cap)).toEqual([]);
    for (let i = 1; i < buckets.counts.length; i++) expect(buckets.counts[i - 1]! + buckets.counts[i]!).toBeGreaterThan(SMALL.mergeAtMost);
  });

  it("ranks every total exactly from the summary and one count inside its bucket", async () => {
    const totals = [50, 40, 40, 30, 20, 20, 20, 10, 0, -5, 40, 41, 42, 43, 44, 45, 46, 47];
    const buckets = await recountBuckets([], counterOf(totals), SMALL);
    const summary = { of: totals.length, ...buckets };
    for (const t of totals) {
      const query = rankQuery(summary, t);
      const counted = query.count === null ? 0 : totals.filter((x) => x > query.count!.greaterThan && (query.count!.lessThan === null || x < query.count!.lessThan)).length;
      expect(rankFrom(query, counted)).toBe(1 + totals.filter((x) => x > t).length);
    }
  });

  it("stays exact over seeded random boards that change between recounts", async () => {
    const only = process.env.BUCKETS_SEED;
    const seeds = only !== undefined ? [Number(only)] : Array.from({ length: 200 }, (_, i) => i + 1);
    for (const seed of seeds) {
      const random = rngOf(seed);
      const spread = [3, 30, 3000, 2 ** 40][Math.floor(random() * 4)]!;
      let totals = Array.from({ length: Math.floor(random() * 120) }, () => Math.floor((random() - 0.3) * spread));
      let bounds: number[] = [];
      for (let round = 0; round < 6; round++) {
        const buckets = await recountBuckets(bounds, counterOf(totals), SMALL);
        const found = problems(buckets, totals, SMALL.cap);
        if (found.length > 0) throw new Error(`seed ${seed}, round ${round} (BUCKETS_SEED=${seed} to replay): ${found.join("; ")}`);
        bounds = buckets.bounds;
        // The board moves: totals change, counters leave and join.
        totals = totals.filter(() => random() > 0.1).map((t) => (random() < 0.3 ? t + Math.floor((random() - 0.2) * spread) : t));
        for (let i = Math.floor(random() * 40); i > 0; i--) totals.push(Math.floor(random() * spread));
      }
    }
  });

  it("splits at most the budget per recount, leaving the rest for the next", async () => {
    const totals = Array.from({ length: 200 }, (_, i) => i);
    const first = await recountBuckets([], counterOf(totals), { cap: 8, mergeAtMost: 4, splits: 2 });
    expect(first.counts.length).toBe(3);
    const second = await recountBuckets(first.bounds, counterOf(totals), { cap: 8, mergeAtMost: 4, splits: 2 });
    expect(second.counts.length).toBeGreaterThan(3);
    expect(problems(second, totals, 1_000_000)).toEqual([]);
  });
});
