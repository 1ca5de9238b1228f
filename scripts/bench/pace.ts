// Running increments at a target rate with a bound on how many are in flight, so a slow emulator makes
// the writer fall behind schedule (visible as a lower achieved rate) instead of piling up requests; and
// the seeded randomness that makes a run's delivery order replayable.

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts task(i) for i = 0 … count-1 at `ratePerSecond` (task i is due at start + i/rate), never more than
 * `maxInFlight` at once, and resolves with every result in order once all have finished.
 */
export async function paced<T>(
  count: number,
  ratePerSecond: number,
  maxInFlight: number,
  task: (i: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  const inFlight = new Set<Promise<void>>();
  const start = Date.now();
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / ratePerSecond;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    const run: Promise<void> = task(i).then((result) => {
      results[i] = result;
      inFlight.delete(run);
    });
    inFlight.add(run);
  }
  await Promise.all(inFlight);
  return results;
}

/**
 * A deterministic source of numbers in [0, 1) (mulberry32), so a run's delivery order, delays and
 * duplicates can be replayed from its seed.
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A deterministic shuffle (Fisher–Yates on seededRandom). */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const random = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
