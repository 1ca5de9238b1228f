// The growth decision (rollup/growth.ts): when a counter's measured load grows its shards, and by how much.
import { SHAPE_CACHE_TTL_MS } from "../src/model/shape-cache";
import { GROW_CHUNK, growthStep, HOT_FOR_MS, SPREAD_MS, type GrowthSettings, type Load } from "../src/rollup/growth";

const SETTINGS: GrowthSettings = { shardWritesPerSecond: 1, maxShards: 1000, hotForMs: HOT_FOR_MS };
const T0 = 1_800_000_000_000_000; // microseconds
/** The jitter test's seed: fresh each run, printed in its name; GROWTH_SEED=<seed> replays one. */
const SEED = Number(process.env.GROWTH_SEED ?? Date.now() % 1_000_000);

/**
 * Commits once per `everyMs` for `seconds` at `rate` writes/s (writes counted exactly up to each read time);
 * `rate` may depend on the counter's numShards (a counter too small to apply all that is sent to it).
 */
function drive(
  start: { numShards: number; load: Load | null; writes: number; atUs: number },
  rate: number | ((numShards: number, atS: number, shardsAsOf: (atS: number) => number) => number),
  seconds: number,
  everyMs = 1000,
  settings = SETTINGS,
): { numShards: number; load: Load | null; writes: number; atUs: number; steps: { atS: number; from: number; to: number }[] } {
  let { numShards, load, writes, atUs } = start;
  const steps: { atS: number; from: number; to: number }[] = [];
  const endUs = atUs + seconds * 1e6;
  const t0 = atUs;
  let exact = writes;
  while (atUs + everyMs * 1000 <= endUs) {
    atUs += everyMs * 1000;
    const atS = (atUs - t0) / 1e6;
    const shardsAsOf = (s: number) => steps.filter((step) => step.atS <= s).at(-1)?.to ?? start.numShards;
    exact += ((typeof rate === "number" ? rate : rate(numShards, atS, shardsAsOf)) * everyMs) / 1000;
    writes = Math.floor(exact);
    const step = growthStep(load, numShards, atUs, writes, settings);
    if (step.numShards !== numShards) steps.push({ atS: (atUs - t0) / 1e6, from: numShards, to: step.numShards });
    numShards = step.numShards;
    load = step.load;
  }
  return { numShards, load, writes, atUs, steps };
}

describe("growthStep", () => {
  it("records the first measure and grows nothing", () => {
    expect(growthStep(null, 1, T0, 500, SETTINGS)).toEqual({ load: { readUs: T0, writes: 500, hot: null }, numShards: 1 });
  });

  it("keeps a counter at its capacity where it is, and ends a streak on an interval at or below capacity", () => {
    const before: Load = { readUs: T0, writes: 100, hot: { sinceUs: T0 - 5e6, writes: 60, step: null } };
    // 4 shards, 4 writes in 1 s: at capacity, not above it.
    expect(growthStep(before, 4, T0 + 1e6, 104, SETTINGS)).toEqual({ load: { readUs: T0 + 1e6, writes: 104, hot: null }, numShards: 4 });
  });

  it("starts a streak where the first hot interval starts, and does not grow before the streak is 10 s long", () => {
    const step = growthStep({ readUs: T0, writes: 0, hot: null }, 1, T0 + 1e6, 40, SETTINGS);
    expect(step).toEqual({ load: { readUs: T0 + 1e6, writes: 40, hot: { sinceUs: T0, writes: 0, step: null } }, numShards: 1 });
    const later = drive({ numShards: 1, load: step.load, writes: 40, atUs: T0 + 1e6 }, 40, 8);
    expect(later.steps).toEqual([]);
  });

  it("grows 1 shard at 40 writes/s to 4, 16, then 50 (40 with 25 % headroom) once the streak is 10 s long, one step a commit", () => {
    const run = drive({ numShards: 1, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 40, 30);
    expect(run.steps).toEqual([
      { atS: 10, from: 1, to: 4 },
      { atS: 11, from: 4, to: 16 },
      { atS: 12, from: 16, to: 50 },
    ]);
    expect(run.numShards).toBe(50);
  });

  it("sizes for the load that arrives as the counter grows, not the streak's average: 1,000/s sent, 20/s a shard applied", () => {
    // A counter too small applies fewer writes than are sent to it (contention): its streak's average
    // understates the load, and sizing by it alone left this counter near 600 shards after 30 s.
    const run = drive({ numShards: 1, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, (n) => Math.min(1000, 20 * n), 30);
    expect(run.numShards).toBe(1000);
    expect(run.steps.at(-1)!.atS).toBeLessThanOrEqual(16);
    for (const step of run.steps) expect(step.to).toBeLessThanOrEqual(step.from * 4);
  });

  it("keeps a streak through the spread after a step: 1,000/s sent, 20/s a shard applied, on shards known up to 5 s late", () => {
    // Increments pick from the numShards their instance cached up to 5 s ago: a step shows in the applied
    // rate only when caches expire. Judged against the new capacity at once, the interval after each step
    // ended the streak, and the next step waited for a new 10 s streak (40 s to 1000 shards).
    const run = drive({ numShards: 1, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, (_n, atS, shardsAsOf) => Math.min(1000, 20 * shardsAsOf(atS - 5)), 40);
    expect(run.numShards).toBe(1000);
    expect(run.steps.at(-1)!.atS).toBeLessThanOrEqual(30);
    expect(run.steps[0]!.atS).toBe(10);
  });

  it("judges an interval against the capacity before the last step for 5 s after it, then against the new one", () => {
    // A streak that stepped 4 → 16 shards; an interval of 10 writes/s: hot for 4 shards, not for 16.
    const stepped: Load = { readUs: T0 + 12e6, writes: 500, hot: { sinceUs: T0, writes: 0, step: { atUs: T0 + 11e6, from: 4 } } };
    expect(growthStep(stepped, 16, T0 + 13e6, 510, SETTINGS).load.hot).toMatchObject({ sinceUs: T0, writes: 0 });
    const later: Load = { ...stepped, readUs: T0 + 11e6 + SPREAD_MS * 1000 };
    expect(growthStep(later, 16, later.readUs + 1e6, 510, SETTINGS).load.hot).toBeNull();
  });

  it("spreads for as long as the callable caches a counter's shape", () => {
    expect(SPREAD_MS).toBe(SHAPE_CACHE_TTL_MS);
  });

  it("sizes a streak that grew by its last interval only when that is 500 ms or longer: a burst between two close commits is noise", () => {
    // A streak of 10 s at 60 writes/s that has grown the counter to 40 shards; then 50 writes within
    // 100 ms (500/s): sized by the streak's average (650 writes in 10.1 s), not by that interval.
    const grown: Load = { readUs: T0 + 10e6, writes: 600, hot: { sinceUs: T0, writes: 0, step: { atUs: T0 + 9e6, from: 10 } } };
    expect(growthStep(grown, 40, T0 + 10.1e6, 650, SETTINGS).numShards).toBe(Math.ceil((1.25 * 650) / 10.1));
    // The same writes over 600 ms: the last interval's rate (83/s) sizes it.
    expect(growthStep(grown, 40, T0 + 10.6e6, 650, SETTINGS).numShards).toBe(Math.ceil((1.25 * 50) / 0.6));
  });

  it("steps a streak that has not grown yet on its average alone, however hot its last interval", () => {
    // 10 s at 12 writes/s on 10 shards (hot, but below 1.25 x capacity), then one interval of 30 writes/s.
    const warm = drive({ numShards: 10, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 12, 10);
    expect(warm.numShards).toBe(10);
    expect(warm.load!.hot).toMatchObject({ step: null });
    const step = growthStep(warm.load, 10, warm.atUs + 1e6, warm.writes + 30, SETTINGS);
    expect(step.numShards).toBe(Math.ceil((1.25 * (warm.writes + 30)) / 11));
    expect(step.load.hot!.step).toEqual({ atUs: warm.atUs + 1e6, from: 10 });
  });

  it("reaches 1000 shards from 1 within 30 s at 1,000 writes/s, never more than x4 a step", () => {
    const run = drive({ numShards: 1, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 1000, 30);
    expect(run.numShards).toBe(1000);
    expect(run.steps.at(-1)!.atS).toBeLessThanOrEqual(30);
    for (const step of run.steps) expect(step.to).toBeLessThanOrEqual(step.from * 4);
  });

  it(`adds at most ${GROW_CHUNK} shards in one commit and never passes MAX_GROWN_SHARDS`, () => {
    const run = drive({ numShards: 300, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 5000, 20, 1000, { ...SETTINGS, maxShards: 2000 });
    expect(run.steps.map((s) => s.to - s.from).every((added) => added <= GROW_CHUNK)).toBe(true);
    expect(run.numShards).toBe(2000);
    const capped = drive({ numShards: 10, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 5000, 30, 1000, { ...SETTINGS, maxShards: 64 });
    expect(capped.numShards).toBe(64);
  });

  it("never lowers numShards, also above MAX_GROWN_SHARDS", () => {
    const run = drive({ numShards: 50, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 5000, 30, 1000, { ...SETTINGS, maxShards: 20 });
    expect(run.numShards).toBe(50);
  });

  it("uses SHARD_WRITES_PER_SECOND: 40 writes/s on 5 shards of 10 writes/s each stays, on 2 grows to 5", () => {
    const settings = { ...SETTINGS, shardWritesPerSecond: 10 };
    expect(drive({ numShards: 5, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 40, 60, 1000, settings).numShards).toBe(5);
    expect(drive({ numShards: 2, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 40, 60, 1000, settings).numShards).toBe(5);
  });

  it(`never grows a counter at 1 write/s or less, whatever the commits' jitter (seed ${SEED})`, () => {
    const seed = SEED;
    let a = seed;
    const rng = () => ((a = (a * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (const rate of [1, 0.5]) {
      // Writes exactly every 1/rate s; commits at read times that wander +-300 ms around each second.
      let load: Load | null = null;
      let numShards = 1;
      for (let i = 1; i <= 3600; i++) {
        const readUs = T0 + Math.round((i + (rng() - 0.5) * 0.6) * 1e6);
        const writes = Math.floor(((readUs - T0) / 1e6) * rate);
        const step = growthStep(load, numShards, readUs, writes, SETTINGS);
        if (step.numShards !== numShards) throw new Error(`seed ${seed}: a counter at ${rate}/s grew to ${step.numShards} after ${i} s`);
        load = step.load;
        numShards = step.numShards;
      }
    }
  });

  it("never grows a counter at exactly 1 write/s whose commits come a little faster than its writes", () => {
    // Every interval holds one write in 0.999 s: each is (just) above capacity, so the streak never ends;
    // its average is a hair above 1/s, which must not be taken for load.
    const run = drive({ numShards: 1, load: { readUs: T0, writes: 0, hot: null }, writes: 0, atUs: T0 }, 1, 600, 999);
    expect(run.load!.hot).not.toBeNull();
    expect(run.steps).toEqual([]);
  });

    it("does not grow after a short burst followed by silence", () => {
    let step = growthStep({ readUs: T0, writes: 0, hot: null }, 1, T0 + 1e6, 300, SETTINGS); // 300 at once
    expect(step.load.hot).not.toBeNull();
    step = growthStep(step.load, 1, T0 + 60e6, 301, SETTINGS); // the next commit, a minute later
    expect(step).toEqual({ load: { readUs: T0 + 60e6, writes: 301, hot: null }, numShards: 1 });
  });

  it("takes a measure that went backwards (writes or read time) as a fresh start", () => {
    const before: Load = { readUs: T0, writes: 500, hot: { sinceUs: T0 - 20e6, writes: 0, step: null } };
    expect(growthStep(before, 1, T0 + 1e6, 400, SETTINGS)).toEqual({ load: { readUs: T0 + 1e6, writes: 400, hot: null }, numShards: 1 });
    expect(growthStep(before, 1, T0, 900, SETTINGS)).toEqual({ load: { readUs: T0, writes: 900, hot: null }, numShards: 1 });
  });
});
