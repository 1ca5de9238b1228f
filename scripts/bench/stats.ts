// Percentiles of measured samples (nearest-rank: the reported value is one that was measured).

export interface Summary {
  count: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? null : sorted[sorted.length - 1]!,
  };
}

/** A few samples told honestly: how many, the median (nearest rank) and the whole range. */
export interface Spread {
  count: number;
  min: number | null;
  p50: number | null;
  max: number | null;
}

export function spread(samples: readonly number[]): Spread {
  const sorted = [...samples].sort((a, b) => a - b);
  return { count: sorted.length, min: sorted[0] ?? null, p50: percentile(sorted, 50), max: sorted.at(-1) ?? null };
}
