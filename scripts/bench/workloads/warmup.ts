// Before anything is measured: the functions emulator boots a worker process per concurrent event and a
// boot takes seconds here (docs/development.md). Warm-up writes, on counters of their own, make it boot
// the workers the workloads will need: a steady stream like workload 1, then a burst over many counters
// like workload 2 (one rollup waiting for its slot per counter, each holding a worker).
import { createBenchCounter, incrementShard, ROLLUPS } from "../counters";
import { sharedSizes, sizeOf } from "../options";
import { paced } from "../pace";
import { withConcurrency } from "../../lib/concurrency";
import { counterIdFor, createBenchCounters, type BenchContext } from "./context";
import { drainFunctionsQueue } from "./phase";

const BURST_COUNTERS = 16;

export async function warmUp(ctx: BenchContext): Promise<void> {
  const { warmupSeconds } = sharedSizes(ctx.options);
  // Workload 1's rate and workload 2's writes in flight: the workers they will need.
  const sustainedRate = sizeOf(ctx.options, "sustainedRate");
  const burstConcurrency = sizeOf(ctx.options, "burstConcurrency");
  if (warmupSeconds === 0) return;
  for (const rollup of ROLLUPS) {
    const steady = await createBenchCounter(ctx.app, rollup, counterIdFor(ctx, "warmup", rollup), 10);
    await paced(sustainedRate * warmupSeconds, sustainedRate, 32, () => incrementShard(ctx.db, steady));
    const many = await createBenchCounters(ctx, "warmup", rollup, BURST_COUNTERS, 10, { first: 1 });
    await withConcurrency(
      burstConcurrency,
      Array.from({ length: BURST_COUNTERS * 3 }, (_, i) => () => incrementShard(ctx.db, many[i % BURST_COUNTERS]!)),
    );
  }
  await drainFunctionsQueue(ctx);
}
