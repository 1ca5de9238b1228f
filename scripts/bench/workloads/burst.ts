// Workload 2: many increments spread evenly over many counters, as fast as the emulator takes them with
// a bounded number in flight. One rollup after the other, as in workload 1.
import { incrementShard, ROLLUPS } from "../counters";
import type { PhaseResult } from "../recorder";
import { withConcurrency } from "../../../functions/test/helpers/client";
import { createBenchCounters, type BenchContext } from "./context";
import { emulatorPhase } from "./phase";

/** The product's default numShards. */
const SHARDS = 10;

export async function burst(ctx: BenchContext): Promise<PhaseResult[]> {
  const { burstIncrements: increments, burstCounters: count, burstConcurrency: concurrency } = ctx.options;
  const results: PhaseResult[] = [];
  for (const rollup of ROLLUPS) {
    const counters = await createBenchCounters(ctx, "burst", rollup, count, SHARDS);
    const run = await emulatorPhase(ctx, "2 burst", counters, async () => ({
      writes: await withConcurrency(
        concurrency,
        Array.from({ length: increments }, (_, i) => () => incrementShard(ctx.db, counters[i % count]!)),
      ),
    }));
    results.push(run.result);
  }
  return results;
}
