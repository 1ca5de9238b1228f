// When reconcile calls a lagging counter stuck: a write missing from its total for longer than the rollup,
// its retries and the sweep that finishes a stranded claim can take (docs/operations.md, "Reconcile").
// Pure: reconcile (reconcile/run.ts) and the CLI's help and options share it.

/** Rollup intervals a write may stay out of the total before it counts as stuck (plus the margin below). */
export const STUCK_INTERVALS = 10;
/**
 * The margin: the sweep runs every 5 minutes (entry/rollupSweep.ts) and finishes a claim whose retries ran
 * out; one more minute for its run and for clock differences between this machine and Firestore.
 */
export const STUCK_MARGIN_MS = 6 * 60_000;

/** How old a missing write may be before it is stuck: STUCK_INTERVALS intervals plus STUCK_MARGIN_MS. */
export function stuckAfterMsFor(intervalMs: number): number {
  return STUCK_INTERVALS * intervalMs + STUCK_MARGIN_MS;
}
