// A per-caller token bucket kept in this instance's memory: best-effort abuse limiting at no Firestore
// cost per call. It is per instance, not global: a caller whose calls land on N instances gets up to N
// times the rate (MAX_INSTANCES bounds N), and an instance that starts fresh starts with full buckets.
// What it buys is a cap on what one caller can do through one instance, which is how a single script
// mostly arrives (2nd-gen instances take up to 80 concurrent requests each). Pure: the clock is injected.

export interface RateLimit {
  /** Tokens added per minute; 0 turns the limit off. */
  perMinute: number;
  /** Bucket size: how many calls a caller may make at once after being idle. */
  burst: number;
}

export interface Limiter {
  /** Takes one token from `key`'s bucket; false when it is empty (the call is refused). */
  take(key: string, nowMs: number): boolean;
}

/** Callers remembered per limiter; beyond this the least recently seen is forgotten (memory bound). */
const MAX_TRACKED_CALLERS = 10_000;

interface Bucket {
  tokens: number;
  atMs: number;
}

export function createLimiter({ perMinute, burst }: RateLimit, maxTracked = MAX_TRACKED_CALLERS): Limiter {
  // Map iteration order is insertion order: re-inserting on every take keeps the least recently seen
  // caller first, so evicting it is O(1). A forgotten caller comes back with a full bucket, which only
  // ever errs on the side of letting a call through.
  const buckets = new Map<string, Bucket>();
  const perMs = perMinute / 60_000;
  return {
    take(key, nowMs) {
      if (perMinute <= 0) return true;
      const previous = buckets.get(key);
      const elapsed = previous === undefined ? 0 : Math.max(0, nowMs - previous.atMs);
      const tokens = previous === undefined ? burst : Math.min(burst, previous.tokens + elapsed * perMs);
      const allowed = tokens >= 1;
      buckets.delete(key);
      buckets.set(key, { tokens: allowed ? tokens - 1 : tokens, atMs: nowMs });
      if (buckets.size > maxTracked) buckets.delete(buckets.keys().next().value!);
      return allowed;
    },
  };
}
