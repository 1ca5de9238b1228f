// Workload 3: at-least-once delivery, pushed to the limit. The increments are recorded first (events.ts),
// then every event is delivered twice, all in one shuffled order, straight to the exported handlers on
// one instance, `redeliveryConcurrency` at a time (deliverer.ts; a delivery that throws is retried).
import { ROLLUPS } from "../counters";
import { directPhase } from "../delivery/direct";
import { createDeliverer } from "../delivery/deliverer";
import { eventRecorder } from "../delivery/events";
import { withConcurrency } from "../../lib/concurrency";
import { seededRandom, shuffled } from "../pace";
import type { PhaseResult } from "../recorder";
import { createBenchCounters, step } from "./context";
import { sizes } from "../options";
import { wrappedOf, type Workload } from "./workload";

const SHUFFLE_SEED = 20261122;
/** 10 shards, ours and naive alike (the product's DEFAULT_SHARDS is 1 now that counters grow; at this load a counter would not). */
const SHARDS = 10;

const FLAGS = [
  { key: "redeliveryIncrements", flag: "--redelivery-increments", full: 10000, quick: 60, min: 1, help: "workload 3: increments (each event delivered twice)" },
  { key: "redeliveryCounters", flag: "--redelivery-counters", full: 100, quick: 6, min: 1, help: "workload 3: counters" },
  { key: "redeliveryConcurrency", flag: "--redelivery-concurrency", full: 16, quick: 8, min: 1, help: "workload 3: deliveries in flight" },
] as const;

export const redelivery: Workload<PhaseResult[]> = {
  id: "redelivery",
  flags: FLAGS,
  stages: ["production-like"],
  async run(ctx, on) {
    const { redeliveryIncrements: increments, redeliveryCounters: count, redeliveryConcurrency: concurrency } = sizes(ctx.options, FLAGS);
    const wrapped = wrappedOf(on);
    return await step(`workload 3, redelivery: ${increments} increments over ${count} counters, every event delivered twice, shuffled`, async () => {
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
    });
  },
  phases: (r) => r,
};
