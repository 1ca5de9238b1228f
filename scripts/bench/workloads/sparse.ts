// Workload 0: the common case of a likes/views app. Many counters, each idle most of the time: every
// counter gets an increment only every `sparseGapMs`, so each one lands on a counter whose rollup has
// been quiet for longer than an interval. One rollup after the other, as in the other workloads.
import { ROLLUPS } from "../counters";
import { paced } from "../pace";
import type { PhaseResult } from "../recorder";
import type { BenchContext } from "./context";
import type { Delivery } from "./phase";

/** 10 shards, ours and naive alike (the product's DEFAULT_SHARDS is 1 now that counters grow; at this load a counter would not). */
const SHARDS = 10;
/** Increments in flight at most; far above what the paced rate needs. */
const MAX_IN_FLIGHT = 8;

export async function sparse(ctx: BenchContext, delivery: Delivery): Promise<PhaseResult[]> {
  const { sparseCounters: count, sparseIncrements: perCounter, sparseGapMs: gapMs } = ctx.options;
  const results: PhaseResult[] = [];
  for (const rollup of ROLLUPS) {
    const counters = await delivery.createCounters("sparse", rollup, count, SHARDS);
    // Round robin at count / gap increments per second: counter i gets increments i, i + count, … one
    // gap apart.
    const run = await delivery.run("0 sparse", counters, async (increment) => ({
      writes: await paced(count * perCounter, (count * 1000) / gapMs, MAX_IN_FLIGHT, (i) => increment(counters[i % count]!)),
    }));
    results.push(run.result);
  }
  return results;
}
