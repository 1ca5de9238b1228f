// Workload 3: at-least-once delivery, pushed to the limit. The increments are recorded first (events.ts),
// then every event is delivered twice, all in one shuffled order, straight to the exported handlers on
// one instance, `redeliveryConcurrency` at a time (deliverer.ts; a delivery that throws is retried).
import { ROLLUPS } from "../counters";
import { directPhase } from "../delivery/direct";
import { createDeliverer } from "../delivery/deliverer";
import { eventRecorder } from "../delivery/events";
import type { WrappedFunctions } from "../delivery/wrapped";
import { withConcurrency } from "../../lib/concurrency";
import { seededRandom, shuffled } from "../pace";
import type { PhaseResult } from "../recorder";
import { createBenchCounters, type BenchContext } from "./context";

const SHUFFLE_SEED = 20261122;
/** 10 shards, ours and naive alike (the product's DEFAULT_SHARDS is 1 now that counters grow; at this load a counter would not). */
const SHARDS = 10;

export async function redelivery(ctx: BenchContext, wrapped: WrappedFunctions): Promise<PhaseResult[]> {
  const { redeliveryIncrements: increments, redeliveryCounters: count, redeliveryConcurrency: concurrency } = ctx.options;
  const results: PhaseResult[] = [];
  for (const rollup of ROLLUPS) {
    const counters = await createBenchCounters(ctx, "redelivery", rollup, count, SHARDS, { app: wrapped.app });
    const record = await eventRecorder(counters);
    const events = await withConcurrency(concurrency, Array.from({ length: increments }, (_, i) => () => record(counters[i % count]!)));
    // No delay and no duplicates drawn: the order is the shuffle, the duplicates are every event.
    const model = { maxDelayMs: 0, duplicateFraction: 0, concurrency };
    const deliverer = createDeliverer(wrapped.instances(rollup, 1), model, seededRandom(SHUFFLE_SEED));
    const run = await directPhase("3 redelivery", "all twice, shuffled", counters, deliverer, async () => {
      const startedAtMs = Date.now();
      for (const index of shuffled([...events.keys(), ...events.keys()], SHUFFLE_SEED)) deliverer.deliver(events[index]!, 0);
      await deliverer.settled();
      return {
        writes: events.map((e) => e.record),
        loadSeconds: (Date.now() - startedAtMs) / 1000,
        lagOriginsUs: events.map((e) => deliverer.firstDeliveryMs(e)! * 1000),
        settleOriginUs: startedAtMs * 1000,
        startedAtMs,
      };
    });
    results.push({ ...run.result, deliveries: { ...run.result.deliveries!, duplicates: events.length } });
  }
  return results;
}
