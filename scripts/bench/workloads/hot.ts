// Workload 9: one hot counter. The same load (a steady rate of increments on one counter, production-like
// delivery) on three counters: ours created with the default shape (DEFAULT_SHARDS), free to grow; ours
// with a fixed 10 shards (MAX_GROWN_SHARDS=10 for the phase, so it cannot grow); and the naive trigger on
// 10 shards. What it measures is where the writes land: per second, the most writes any one document of
// the counter took (a shard or the parent), and how the counter's numShards followed the load.
//
// Increments pick their shard as incrementCounter does, from a numShards that may be stale: the callable
// caches each counter's shape for up to SHAPE_CACHE_TTL_MS per instance, so at any moment the instances
// serving a hot counter know numShards as of 0 to SHAPE_CACHE_TTL_MS ago. Each increment here uses the
// parent's numShards as of a uniform random moment in that past (a listener on the parent records every
// value). Its tables, plot and targets are in hot-report.ts, the per-second measure in hot-seconds.ts.
import { HARD_MAX_SHARDS } from "../../../functions/src/model/param-rules";
import { PARAMS } from "../../../functions/src/model/params";
import { SHAPE_CACHE_TTL_MS } from "../callable";
import type { Counter, Rollup, ShardWriteRecord } from "../counters";
import { paced } from "../pace";
import { summarize } from "../stats";
import { naivePerEvent, parentWriteBudgets } from "../targets";
import { ratioTarget } from "../allin";
import { step } from "./context";
import { hotLines, hotSpec, hotTargets, saturatedLagTarget } from "./hot-report";
import { calmFrom, growthOf, hotSeconds, SUSTAINED_WINDOW_S, type HotResult, type HotRun, type HotVariant } from "./hot-seconds";
import type { Delivery } from "./phase";
import { sizes } from "../options";
import { deliveryOf, type Workload } from "./workload";

/** Increments in flight at most: enough for the rate once the counter has shards to spread them over. */
const MAX_IN_FLIGHT = 64;

const FLAGS = [
  { key: "hotRate", flag: "--hot-rate", full: 1000, quick: 60, min: 1, help: "workload 9: increments per second on one hot counter" },
  { key: "hotSeconds", flag: "--hot-seconds", full: 60, quick: 20, min: 1, help: "workload 9: duration, per counter" },
  { key: "hotFixedShards", flag: "--hot-fixed-shards", full: 10, quick: 10, min: 1, max: HARD_MAX_SHARDS, help: "workload 9: shards of the fixed counters (ours that cannot grow, and naive)" },
] as const;

export const HOT_PLOT_FILE = "bench-hot.png";

export const hot: Workload<HotResult> = {
  id: "hot",
  flags: FLAGS,
  stages: ["production-like"],
  run(ctx, on) {
    const { hotRate: rate, hotSeconds: seconds, hotFixedShards: fixedShards } = sizes(ctx.options, FLAGS);
    return step(
      `workload 9, a hot counter, production-like delivery: ${rate}/s for ${seconds} s on one counter: ours from the default shape (it grows), ours fixed at ${fixedShards} shards, naive on ${fixedShards} shards`,
      () => hotCounters(deliveryOf(on), rate, seconds, fixedShards),
    );
  },
  phases: (h) => h.runs.map((r) => r.phase),
  // The hot counter's cost at most what it was with the lease (0.72×, the run of 2026-11-26: docs/benchmark-results.md).
  costTargets: (rows) =>
    ratioTarget("workload 9, production-like: a hot counter on 10 shards, ours all in ≤ 0.72× naive all in", rows, (w) => w === "9 hot, 10 shards", 0.72, "production-like"),
  // Its lag is that of a saturated machine: reported by its own target, not judged with the others'.
  judged: "all but lag",
  section: (h) => hotLines(h),
  targets(h, { intervalMs }) {
    const phases = h.runs.map((r) => r.phase);
    return [
      ...parentWriteBudgets(phases.filter((p) => p.rollup === "ours"), intervalMs),
      ...naivePerEvent(phases.filter((p) => p.rollup === "naive")),
      ...saturatedLagTarget(h, intervalMs),
      ...hotTargets(h),
    ];
  },
  plot: (h, results) => ({
    file: HOT_PLOT_FILE,
    alt: "Workload 9: the hottest document's writes per second over time, the growing counter against the fixed ones",
    spec: hotSpec(h, results.intervalMs),
  }),
};

async function hotCounters(delivery: Delivery, rate: number, seconds: number, fixedShards: number): Promise<HotResult> {
  const shardWritesPerSecond = Number(process.env.SHARD_WRITES_PER_SECOND);
  const variants: { variant: HotVariant; rollup: Rollup; shards: number; maxGrownShards?: number }[] = [
    { variant: "ours, grows", rollup: "ours", shards: PARAMS.DEFAULT_SHARDS.default },
    { variant: "ours, fixed", rollup: "ours", shards: fixedShards, maxGrownShards: fixedShards },
    { variant: "naive, fixed", rollup: "naive", shards: fixedShards },
  ];
  const runs: HotRun[] = [];
  for (const v of variants) {
    const saved = process.env.MAX_GROWN_SHARDS;
    if (v.maxGrownShards !== undefined) process.env.MAX_GROWN_SHARDS = String(v.maxGrownShards);
    try {
      runs.push(await hotRun(delivery, v.variant, v.rollup, v.shards, rate, seconds, shardWritesPerSecond));
    } finally {
      process.env.MAX_GROWN_SHARDS = saved;
    }
  }
  return { rate, seconds, fixedShards, shardWritesPerSecond, runs };
}

async function hotRun(
  delivery: Delivery,
  variant: HotVariant,
  rollup: Rollup,
  shards: number,
  rate: number,
  seconds: number,
  shardWritesPerSecond: number,
): Promise<HotRun> {
  const key = variant === "ours, grows" ? "hotgrow" : "hotfixed";
  const counter = (await delivery.createCounters(key, rollup, 1, shards))[0]!;
  const known = shapeHistory(counter);
  const latencies: { atMs: number; ms: number }[] = [];
  try {
    const workload = variant === "ours, grows" ? "9 hot, grows" : `9 hot, ${shards} shards`;
    const run = await delivery.run(workload, [counter], async (increment) => {
      // The load is offered for `seconds`: increments not started by then are not sent (a machine that
      // cannot keep up shows a lower rate, not a longer load).
      const endMs = Date.now() + seconds * 1000;
      const made = await paced(rate * seconds, rate, MAX_IN_FLIGHT, async () => {
        const started = Date.now();
        if (started >= endMs) return undefined;
        const record = await increment({ ...counter, numShards: known.asOf(started - Math.random() * SHAPE_CACHE_TTL_MS) });
        latencies.push({ atMs: started, ms: Date.now() - started });
        return record;
      });
      return { writes: made.filter((w): w is ShardWriteRecord => w !== undefined) };
    });
    const startUs = run.startedAtMs * 1000;
    const states = run.states.get(counter.id) ?? [];
    const perSecond = hotSeconds(run.writes, states, startUs, seconds, shards);
    const limit = 2 * shardWritesPerSecond;
    const lateFromMs = run.startedAtMs + (seconds - SUSTAINED_WINDOW_S) * 1000;
    return {
      variant,
      rollup,
      startShards: shards,
      endShards: states.at(-1)?.numShards ?? shards,
      phase: run.result,
      seconds: perSecond,
      calmFromSecond: calmFrom(perSecond, limit),
      latencyMs: summarize(latencies.map((l) => l.ms)),
      lateLatencyMs: summarize(latencies.filter((l) => l.atMs >= lateFromMs).map((l) => l.ms)),
      growth: growthOf(states, startUs, shards),
    };
  } finally {
    known.stop();
  }
}

/** Every numShards the parent has had, with when it was seen, so an increment can use a stale one. */
function shapeHistory(counter: Counter): { asOf(ms: number): number; stop(): void } {
  const seen: { atMs: number; numShards: number }[] = [{ atMs: 0, numShards: counter.numShards }];
  const stop = counter.parent.onSnapshot((snap) => {
    const numShards = snap.get("numShards") as unknown;
    if (typeof numShards === "number" && numShards !== seen.at(-1)!.numShards) seen.push({ atMs: Date.now(), numShards });
  });
  return {
    asOf(ms) {
      let value = seen[0]!.numShards;
      for (const entry of seen) if (entry.atMs <= ms) value = entry.numShards;
      return value;
    },
    stop,
  };
}

