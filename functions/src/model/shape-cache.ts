// The per-instance cache of counters' shapes that lets an increment skip the parent read
// (counters/shape.ts: what it caches, and what staleness that allows). Pure: the clock is passed in. The
// benchmark keeps one of its own to count an increment's parent reads as a callable instance would.

/** How long an instance keeps a counter's shape (rollup/growth.ts, SPREAD_MS, follows it). */
export const SHAPE_CACHE_TTL_MS = 5_000;
/** Shapes kept at most; the cache starts empty again beyond it. */
const SHAPE_CACHE_MAX_ENTRIES = 10_000;

export interface ShapeCache<S> {
  /** The shape remembered for `counterId` and not expired at `nowMs`; undefined otherwise (a read is due). */
  get(counterId: string, nowMs: number): S | undefined;
  remember(counterId: string, shape: S, nowMs: number): void;
  forget(counterId: string): void;
}

export function shapeCache<S>(ttlMs: number = SHAPE_CACHE_TTL_MS, maxEntries: number = SHAPE_CACHE_MAX_ENTRIES): ShapeCache<S> {
  const entries = new Map<string, { shape: S; expiresAt: number }>();
  return {
    get(counterId, nowMs) {
      const entry = entries.get(counterId);
      return entry !== undefined && entry.expiresAt > nowMs ? entry.shape : undefined;
    },
    remember(counterId, shape, nowMs) {
      if (entries.size >= maxEntries) entries.clear();
      entries.set(counterId, { shape, expiresAt: nowMs + ttlMs });
    },
    forget(counterId) {
      entries.delete(counterId);
    },
  };
}
