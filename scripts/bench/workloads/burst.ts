// Workload 2: many increments spread evenly over many counters, as fast as Firestore takes them with a
// bounded number in flight. One rollup after the other, as in workload 1, under a given delivery.
import { ROLLUPS } from "../counters";
import type { PhaseResult } from "../recorder";
import { withConcurrency } from "../../lib/concurrency";
import type { BenchContext } from "./context";
import type { Delivery } from "./phase";

/** 10 shards, ours and naive alike (the product's DEFAULT_SHARDS is 1 now that counters grow; at this load a counter would not). */
const SHARDS = 10;

export async function burst(ctx: BenchContext, delivery: Delivery): Promise<PhaseResult[]> {
  const { burstIncrements: increments, burstCounters: count, burstConcurrency: concurrency } = ctx.options;
  const results: PhaseResult[] = [];
  for (const rollup of ROLLUPS) {
    const counters = await delivery.createCounters("burst", rollup, count, SHARDS);
    const run = await delivery.run("2 burst", counters, async (increment) => ({
      writes: await withConcurrency(
        concurrency,
        Array.from({ length: increments }, (_, i) => () => increment(counters[i % count]!)),
      ),
    }));
    results.push(run.result);
  }
  return results;
}
