// Waiting: the pause between rounds after a lost race, and the sleep the rollup's deps take. Pure apart
// from the timer, no Firebase import.
import type { Random } from "./shards";

/** Resolves after `ms` milliseconds. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A short random pause before round n (1-based) after a lost race: callers racing each other would
 * otherwise read and collide in lockstep; spread out, one of them wins the next round. Grows from
 * `stepMs` × 2 by doubling, up to 200 ms, times a random factor in [0, 1).
 */
export function backoffMs(round: number, random: Random, stepMs: number): number {
  return random() * Math.min(200, stepMs * 2 ** round);
}
