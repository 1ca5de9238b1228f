// Workload 0: the common case of a likes/views app. Many counters, each idle most of the time: every
// counter gets an increment only every `sparseGapMs`, so each one lands on a counter whose rollup has
// been quiet for longer than an interval, and whose shape the callable no longer holds in its cache
// (IDLE_GAP_MS). One rollup after the other, as in the other workloads, under the emulator's delivery (this
// load is far below its capacity, so its lag is judged there).
import { PARAMS } from "../../../functions/src/model/params";
import { numberOf, ratioTarget } from "../allin";
import { SHAPE_CACHE_TTL_MS } from "../callable";
import { ROLLUPS } from "../counters";
import { ms } from "../format";
import { paced } from "../pace";
import type { PhaseResult } from "../recorder";
import type { Target } from "../targets";
import { step } from "./context";
import { sizes } from "../options";
import { deliveryOf, type Workload } from "./workload";

/**
 * The product's DEFAULT_SHARDS (1), ours and naive alike: counters start with it and grow only under load,
 * so a real app's idle counters have that many shards.
 */
export const IDLE_SHARDS = PARAMS.DEFAULT_SHARDS.default;

/**
 * Workloads 0 and 10: ms between two increments of one idle counter, longer than the callable's shape
 * cache keeps a shape (callable.ts), so that each of them reads the parent as an increment on a real app's
 * idle counter (a like every few minutes) does.
 */
export const IDLE_GAP_MS = SHAPE_CACHE_TTL_MS + 1000;

/** Increments in flight at most; far above what the paced rate needs. */
const MAX_IN_FLIGHT = 8;

/** What an idle counter's lag p50 may exceed the naive trigger's by (issue 41). */
export const IDLE_LAG_MARGIN_MS = 10;

const FLAGS = [
  { key: "sparseCounters", flag: "--sparse-counters", full: 40, quick: 6, min: 1, help: "workload 0: idle counters (1 shard each, DEFAULT_SHARDS)" },
  { key: "sparseIncrements", flag: "--sparse-increments", full: 5, quick: 2, min: 1, help: "workload 0: isolated increments per counter" },
  { key: "sparseGapMs", flag: "--sparse-gap-ms", full: IDLE_GAP_MS, quick: IDLE_GAP_MS, min: 1, help: "workload 0: ms between two increments of one counter (above the callable's shape cache TTL: each call reads the parent)" },
] as const;

export const sparse: Workload<PhaseResult[]> = {
  id: "sparse",
  flags: FLAGS,
  stages: ["emulator"],
  async run(ctx, on) {
    const { sparseCounters: count, sparseIncrements: perCounter, sparseGapMs: gapMs } = sizes(ctx.options, FLAGS);
    const delivery = deliveryOf(on);
    return await step(`workload 0, sparse: ${count} idle counters, ${perCounter} increments each, ${gapMs} ms apart, ours then naive`, async () => {
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
    });
  },
  phases: (r) => r,
  targets: (r) => idleTargets(r),
  costTargets: (rows) => ratioTarget("workload 0: idle plain counters, ours all in ≤ 1.20× naive all in", rows, (w) => numberOf(w) === "0", 1.2),
};

/** An idle counter's increment is in the total about as soon as the naive trigger's, and within 100 ms. */
export function idleTargets(phases: readonly PhaseResult[]): Target[] {
  const ours = phases.find((p) => p.rollup === "ours");
  const naive = phases.find((p) => p.rollup === "naive");
  if (ours === undefined || naive === undefined) return [];
  const bound = (naive.lagMs.p50 ?? Infinity) + IDLE_LAG_MARGIN_MS;
  return [
    {
      target: `workload 0: lag p50 on idle counters, ours ≤ naive + ${IDLE_LAG_MARGIN_MS} ms`,
      measured: `ours ${ms(ours.lagMs.p50)} ms (p99 ${ms(ours.lagMs.p99)}), naive ${ms(naive.lagMs.p50)} ms (p99 ${ms(naive.lagMs.p99)})`,
      met: (ours.lagMs.p50 ?? Infinity) <= bound && ours.lagMs.uncovered === 0,
    },
    {
      target: "workload 0: an increment on an idle counter is in the total p50 ≤ 100 ms after its commit",
      measured: `${ms(ours.lagMs.p50)} ms`,
      met: (ours.lagMs.p50 ?? Infinity) <= 100,
    },
  ];
}
