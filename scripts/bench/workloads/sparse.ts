// Workload 0: the common case of a likes/views app. Many counters, each idle most of the time: every
// counter gets an increment only every `sparseGapMs`, so each one lands on a counter whose rollup has
// been quiet for longer than an interval, and whose shape the callable no longer holds in its cache
// (options.ts, IDLE_GAP_MS). One rollup after the other, as in the other workloads.
import { PARAMS } from "../../../functions/src/model/params";
import { ROLLUPS } from "../counters";
import { paced } from "../pace";
import type { PhaseResult } from "../recorder";
import type { BenchContext } from "./context";
import type { Delivery } from "./phase";

/**
 * The product's DEFAULT_SHARDS (1), ours and naive alike: counters start with it and grow only under load,
 * so a real app's idle counters have that many shards.
 */
export const IDLE_SHARDS = PARAMS.DEFAULT_SHARDS.default;
/** Increments in flight at most; far above what the paced rate needs. */
const MAX_IN_FLIGHT = 8;

export async function sparse(ctx: BenchContext, delivery: Delivery): Promise<PhaseResult[]> {
  const { sparseCounters: count, sparseIncrements: perCounter, sparseGapMs: gapMs } = ctx.options;
  const results: PhaseResult[] = [];
  for (const rollup of ROLLUPS) {
    const counters = await delivery.createCounters("sparse", rollup, count, IDLE_SHARDS);
    // Round robin at count / gap increments per second: counter i gets increments i, i + count, … one
    // gap apart.
    const run = await delivery.run("0 sparse", counters, async (increment) => ({
      writes: await paced(count * perCounter, (count * 1000) / gapMs, MAX_IN_FLIGHT, (i) => increment(counters[i % count]!)),
    }));
    results.push(run.result);
  }
  return results;
}
