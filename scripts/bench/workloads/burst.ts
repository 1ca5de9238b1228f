// Workload 2: many increments spread evenly over many counters, as fast as Firestore takes them with a
// bounded number in flight. One rollup after the other, as in workload 1, under both deliveries. After the
// cost tables it shows where our rollup's operations went in the production-like burst, by outcome.
import { numberOf, ratioTarget } from "../allin";
import { outcomeLines } from "../costs";
import { ROLLUPS } from "../counters";
import type { PhaseResult } from "../recorder";
import { naivePerEvent, parentWriteBudgets } from "../targets";
import { withConcurrency } from "../../lib/concurrency";
import { step } from "./context";
import { sizes } from "../options";
import { deliveryOf, type Workload } from "./workload";

/** 10 shards, ours and naive alike (the product's DEFAULT_SHARDS is 1 now that counters grow; at this load a counter would not). */
const SHARDS = 10;

const FLAGS = [
  { key: "burstIncrements", flag: "--burst-increments", full: 1000, quick: 60, min: 1, help: "workload 2: increments" },
  { key: "burstCounters", flag: "--burst-counters", full: 100, quick: 6, min: 1, help: "workload 2: counters (10 shards each)" },
  { key: "burstConcurrency", flag: "--burst-concurrency", full: 16, quick: 8, min: 1, help: "workload 2: increments in flight" },
] as const;

export const burst: Workload<PhaseResult[]> = {
  id: "burst",
  flags: FLAGS,
  stages: ["emulator", "production-like"],
  async run(ctx, on) {
    const { burstIncrements: increments, burstCounters: count, burstConcurrency: concurrency } = sizes(ctx.options, FLAGS);
    const delivery = deliveryOf(on);
    return await step(`workload 2, burst, ${delivery.label} delivery: ${increments} increments over ${count} counters, ${concurrency} writes in flight, ours then naive`, async () => {
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
    });
  },
  collect: (parts) => parts.flat(),
  phases: (r) => r,
  targets: (r, { intervalMs }) => [...parentWriteBudgets(r.filter((p) => p.rollup === "ours"), intervalMs), ...naivePerEvent(r.filter((p) => p.rollup === "naive"))],
  afterCosts: (_, results) => outcomeLines(results.costs.find((c) => c.workload === "2 burst" && c.rollup === "ours" && c.delivery === "production-like")),
  costTargets: (rows) => ratioTarget("workload 2, production-like: a burst, ours all in ≤ 1.15× naive all in", rows, (w) => numberOf(w) === "2", 1.15, "production-like"),
};
