// Workload 1: one counter per rollup, increments at a steady rate under a given delivery, shard writes
// made as incrementCounter makes them, under both deliveries (and at a high rate under production-like
// delivery only: the emulator delivers fewer events per second than that, so it could only queue them).
// The rollups run one after the other on the same emulator, so neither competes with the other's events.
// Its plot: the true sum and the total over time at the base rate, one panel per rollup and delivery.
import type { TopLevelSpec } from "vega-lite";
import { HARD_MAX_SHARDS } from "../../../functions/src/model/param-rules";
import { ROLLUP_NAMES, ROLLUPS, type Rollup } from "../counters";
import { int } from "../format";
import { paced } from "../pace";
import type { DeliveryLabel, PhaseResult } from "../recorder";
import { judged, labelOf, naivePerEvent, parentWriteBudgets, type Target } from "../targets";
import { ratioTarget } from "../allin";
import { step } from "./context";
import type { PhaseRun } from "./phase";
import { sizes } from "../options";
import { deliveryOf, type Workload } from "./workload";

/**
 * Increments in flight at most: a write (or a recorded one: three requests) takes about 10–30 ms here,
 * so 32 allow well over 300/s, and are few enough not to swamp a stalled emulator.
 */
const MAX_IN_FLIGHT = 32;

export interface TimelinePoint {
  rollup: Rollup;
  delivery: DeliveryLabel;
  series: "true sum (Σ shards)" | "total on the parent";
  seconds: number;
  value: number;
}

/** Its rows, and the plot's time series (the base rate's, per delivery). */
export interface SustainedResult {
  phases: PhaseResult[];
  timeline: TimelinePoint[];
}

const FLAGS = [
  { key: "sustainedRate", flag: "--sustained-rate", full: 100, quick: 20, min: 1, help: "workload 1: increments per second" },
  { key: "sustainedHighRate", flag: "--sustained-high-rate", full: 300, quick: 0, min: 0, help: "workload 1 again at this rate, production-like delivery only (0: not run)" },
  { key: "sustainedSeconds", flag: "--sustained-seconds", full: 30, quick: 3, min: 1, help: "workload 1: duration" },
  { key: "sustainedShards", flag: "--sustained-shards", full: 50, quick: 10, min: 1, max: HARD_MAX_SHARDS, help: "workload 1: shards of the counter" },
] as const;

export const PLOT_FILE = "bench-sustained.png";

export const sustained: Workload<SustainedResult> = {
  id: "sustained",
  flags: FLAGS,
  stages: ["emulator", "production-like"],
  async run(ctx, on) {
    const { sustainedRate, sustainedHighRate, sustainedSeconds: seconds, sustainedShards: shards } = sizes(ctx.options, FLAGS);
    const delivery = deliveryOf(on);
    const rates = [sustainedRate, ...(on.stage === "production-like" && sustainedHighRate > 0 ? [sustainedHighRate] : [])];
    const out: SustainedResult = { phases: [], timeline: [] };
    for (const [i, rate] of rates.entries()) {
      await step(`workload 1, sustained, ${delivery.label} delivery: ${rate}/s for ${seconds} s on one counter of ${shards} shards, ours then naive`, async () => {
        for (const rollup of ROLLUPS) {
          const counter = (await delivery.createCounters(`sustained${rate}`, rollup, 1, shards))[0]!;
          const run = await delivery.run(`1 sustained ${rate}/s`, [counter], async (increment) => ({
            writes: await paced(rate * seconds, rate, MAX_IN_FLIGHT, () => increment(counter)),
          }));
          out.phases.push(run.result);
          // The plot shows the base rate.
          if (i === 0) out.timeline.push(...timelineOf(rollup, delivery.label, run, counter.id));
        }
      });
    }
    return out;
  },
  collect: (parts) => ({ phases: parts.flatMap((p) => p.phases), timeline: parts.flatMap((p) => p.timeline) }),
  phases: (r) => r.phases,
  costTargets: (rows) =>
    ratioTarget("workload 1, production-like: sustained 100/s, ours all in ≤ 0.65× naive all in", rows, (w) => w === "1 sustained 100/s", 0.65, "production-like"),
  targets: (r, { intervalMs }) => [
    ...parentWriteBudgets(r.phases.filter((p) => p.rollup === "ours"), intervalMs),
    ...loadSecondsTargets(r.phases.filter((p) => p.rollup === "ours"), intervalMs),
    ...naivePerEvent(r.phases.filter((p) => p.rollup === "naive")),
  ],
  plot(r, results) {
    const base = r.phases[0]?.workload;
    const plotted = r.phases.filter((p) => p.workload === base);
    const o = sizes(results.options, FLAGS);
    return {
      file: PLOT_FILE,
      alt: "Workload 1: true sum and total over time, ours and naive, under both deliveries",
      spec: sustainedSpec(r.timeline, {
        rate: o.sustainedRate,
        seconds: o.sustainedSeconds,
        intervalMs: results.intervalMs,
        parentWrites: (rollup, delivery) => plotted.find((p) => p.rollup === rollup && p.delivery === delivery)?.parentWrites ?? 0,
      }),
    };
  },
};

/** 30 s of load is 30 intervals; 10 more leave room for the leading edge and the last slot. */
function loadSecondsTargets(ours: readonly PhaseResult[], intervalMs: number): Target[] {
  return ours.map((p) => {
    const limit = Math.ceil((p.loadSeconds * 1000) / intervalMs) + 10;
    return { target: `${labelOf(p)}: parent writes, ours ≤ load seconds + 10 (${limit})`, measured: int(p.parentWrites), met: judged(p, p.parentWrites <= limit) };
  });
}

/** The plot's two step lines for one rollup, in seconds since the phase's writer started. */
function timelineOf(rollup: Rollup, delivery: DeliveryLabel, run: PhaseRun, counterId: string): TimelinePoint[] {
  const originUs = run.startedAtMs * 1000;
  const at = (us: number) => Math.round((us - originUs) / 1000) / 1000;
  const truth: { seconds: number; value: number }[] = [{ seconds: 0, value: 0 }];
  for (const write of [...run.writes].sort((a, b) => a.writtenAtUs - b.writtenAtUs)) {
    truth.push({ seconds: at(write.writtenAtUs), value: truth[truth.length - 1]!.value + write.delta });
  }
  const totals: { seconds: number; value: number }[] = [{ seconds: 0, value: 0 }];
  for (const state of run.states.get(counterId) ?? []) {
    if (state.atUs >= originUs) totals.push({ seconds: at(state.atUs), value: state.total });
  }
  // Both lines run to the same end (the last state seen), so the final step of each is visible.
  const end = Math.max(truth[truth.length - 1]!.seconds, totals[totals.length - 1]!.seconds);
  truth.push({ seconds: end, value: truth[truth.length - 1]!.value });
  totals.push({ seconds: end, value: totals[totals.length - 1]!.value });
  return [
    ...truth.map((p) => ({ rollup, delivery, series: "true sum (Σ shards)" as const, ...p })),
    ...totals.map((p) => ({ rollup, delivery, series: "total on the parent" as const, ...p })),
  ];
}

interface PlotTitle {
  rate: number;
  seconds: number;
  intervalMs: number;
  /** Parent writes each rollup made during the workload under a delivery, shown in its panel's label. */
  parentWrites: (rollup: Rollup, delivery: DeliveryLabel) => number;
}

function sustainedSpec(points: readonly TimelinePoint[], title: PlotTitle): TopLevelSpec {
  const label = (rollup: Rollup, delivery: DeliveryLabel) =>
    `${ROLLUP_NAMES[rollup]}, ${delivery} delivery: ${title.parentWrites(rollup, delivery).toLocaleString("en-US")} parent writes`;
  const deliveries = [...new Set(points.map((p) => p.delivery))];
  const order = ROLLUPS.flatMap((rollup) => deliveries.map((delivery) => label(rollup, delivery)));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: {
      text: `Workload 1: ${title.rate} increments/s for ${title.seconds} s on one counter`,
      subtitle: `true sum of the shards vs the total apps read; our rollup interval ${title.intervalMs} ms`,
    },
    data: { values: points.map((p) => ({ ...p, panel: label(p.rollup, p.delivery) })) },
    facet: {
      row: {
        field: "panel",
        type: "nominal",
        title: null,
        sort: order,
        header: { labelAngle: 0, labelOrient: "top", labelAnchor: "start", labelFontWeight: "bold", labelLimit: 0 },
      },
    },
    spec: {
      width: 760,
      height: 160,
      mark: { type: "line", interpolate: "step-after", strokeWidth: 1.6 },
      encoding: {
        x: { field: "seconds", type: "quantitative", title: "seconds since the workload started" },
        y: { field: "value", type: "quantitative", title: "count" },
        color: {
          field: "series",
          type: "nominal",
          title: null,
          scale: { domain: ["true sum (Σ shards)", "total on the parent"], range: ["#9aa5b1", "#d62728"] },
        },
        strokeDash: {
          field: "series",
          type: "nominal",
          title: null,
          scale: { domain: ["true sum (Σ shards)", "total on the parent"], range: [[4, 3], [1, 0]] },
        },
      },
    },
    config: {
      font: "DejaVu Sans",
      legend: { orient: "top", labelFontSize: 12, labelLimit: 400 },
      header: { labelFontSize: 13, labelLimit: 600 },
    },
  };
}
