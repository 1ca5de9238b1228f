// Workload 9's tables, plot and targets: one row per counter, the busiest document per second side by
// side, the growing counter's steps; the busiest document's writes per second over time; and the growing
// counter's calm within 30 s, with the lag of a saturated machine reported beside it.
import type { TopLevelSpec } from "vega-lite";
import { fixed, int, markdownTable, ms } from "../format";
import { ROLLUP_NAMES } from "../counters";
import { lagBoundMs, type Target } from "../targets";
import { lastWindow, SUSTAINED_WINDOW_S, type HotResult } from "./hot-seconds";

/** Workload 9: one row per counter, then the hottest document per second side by side. */
export function hotLines(h: HotResult): string[] {
  const limit = 2 * h.shardWritesPerSecond;
  const peak = (run: HotResult["runs"][number]) => Math.max(0, ...run.seconds.map((s) => s.hottest));
  const summary = markdownTable(
    [
      "counter",
      "rollup",
      "shards",
      "increments",
      "incr./s",
      "parent writes",
      "drift",
      "hottest doc, peak /s",
      `hottest doc, last ${SUSTAINED_WINDOW_S} s /s`,
      `sustained ≤ ${limit}/s from second`,
      "latency p50 / p99 ms",
      `last ${SUSTAINED_WINDOW_S} s: p50 / p99 ms`,
    ],
    h.runs.map((run) => [
      run.phase.workload,
      run.rollup,
      run.startShards === run.endShards ? int(run.startShards) : `${int(run.startShards)} → ${int(run.endShards)}`,
      int(run.phase.increments),
      fixed(run.phase.incrementsPerSecond),
      int(run.phase.parentWrites),
      int(run.phase.drift),
      int(peak(run)),
      fixed(lastWindow(run)),
      run.calmFromSecond === null ? "never" : int(run.calmFromSecond),
      `${ms(run.latencyMs.p50)} / ${ms(run.latencyMs.p99)}`,
      `${ms(run.lateLatencyMs.p50)} / ${ms(run.lateLatencyMs.p99)}`,
    ]),
    2,
  );
  const grows = h.runs.find((run) => run.variant === "ours, grows");
  const steps = grows === undefined || grows.growth.length === 0
    ? "it did not grow"
    : `numShards ${int(grows.startShards)} → ${grows.growth.map(([at, n]) => `${int(n)} at ${fixed(at)} s`).join(" → ")}`;
  // Every second when the load is short, every 5th otherwise (and always the last).
  const every = h.seconds <= 20 ? 1 : 5;
  const rows = h.runs[0]?.seconds.filter((s) => s.second % every === 0 || s.second === h.seconds - 1) ?? [];
  const perSecond = markdownTable(
    ["second", ...h.runs.flatMap((run) => [`${run.phase.workload} (${run.rollup}): shards`, "hottest /s", `sustained /s`])],
    rows.map((row) => [
      int(row.second),
      ...h.runs.flatMap((run) => {
        const s = run.seconds[row.second];
        return s === undefined ? ["–", "–", "–"] : [int(s.numShards), `${int(s.hottest)} (${s.hottestDoc})`, fixed(s.sustained)];
      }),
    ]),
    1,
  );
  return [
    `Workload 9, a hot counter: ${int(h.rate)} increments/s for ${h.seconds} s on one counter, production-like delivery, SHARD_WRITES_PER_SECOND=${h.shardWritesPerSecond}; the hottest document is the one of the counter (a shard or the parent) that took the most writes; "sustained" is the busiest document's writes per second over ${SUSTAINED_WINDOW_S} s:`,
    "",
    summary,
    "",
    `The growing counter: ${steps}.`,
    "",
    `Per second (${every === 1 ? "every second" : `every ${every}th second`}); hottest: that second's busiest document and its writes; sustained: the busiest document's writes per second over the ${SUSTAINED_WINDOW_S} s from that second (– where they pass the end of the load):`,
    "",
    perSecond,
  ];
}

/**
 * Workload 9: the hottest document's writes in each second, one line per counter, on a log scale, the
 * growing counter's sustained rate (SUSTAINED_WINDOW_S) beside it, and the 2 × SHARD_WRITES_PER_SECOND line.
 */
export function hotSpec(hot: HotResult, intervalMs: number): TopLevelSpec {
  const label = (run: HotResult["runs"][number]) =>
    run.variant === "ours, grows"
      ? `ours, grows from ${run.startShards} shard${run.startShards === 1 ? "" : "s"} (to ${run.endShards}): busiest document each second`
      : `${ROLLUP_NAMES[run.rollup]}, fixed ${run.startShards} shards: busiest document each second`;
  const values = hot.runs.flatMap((run) => run.seconds.map((s) => ({ series: label(run), second: s.second, writes: Math.max(s.hottest, 1) })));
  const grows = hot.runs.find((run) => run.variant === "ours, grows");
  const sustainedLabel = `ours, grows: busiest document over the ${SUSTAINED_WINDOW_S} s from each second, per second`;
  if (grows !== undefined) {
    for (const s of grows.seconds) if (s.sustained !== null) values.push({ series: sustainedLabel, second: s.second, writes: Math.max(s.sustained, 1) });
  }
  const order = [...hot.runs.map(label), ...(grows === undefined ? [] : [sustainedLabel])];
  const colors: Record<string, string> = {};
  hot.runs.forEach((run) => (colors[label(run)] = run.variant === "ours, grows" ? "#d62728" : run.rollup === "ours" ? "#1f77b4" : "#9aa5b1"));
  colors[sustainedLabel] = "#d62728";
  const limit = 2 * hot.shardWritesPerSecond;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: {
      text: `Workload 9: ${hot.rate.toLocaleString("en-US")} increments/s offered on one counter for ${hot.seconds} s`,
      subtitle: [
        "writes to the counter's busiest document (a shard or the parent), log scale",
        `dashed black: 2 × SHARD_WRITES_PER_SECOND = ${limit}/s; our rollup interval ${intervalMs} ms`,
      ],
    },
    width: 760,
    height: 320,
    layer: [
      {
        data: { values },
        mark: { type: "line", interpolate: "step-after", strokeWidth: 1.8 },
        encoding: {
          x: { field: "second", type: "quantitative", title: "seconds since the load started" },
          y: { field: "writes", type: "quantitative", title: "writes/s to the busiest document", scale: { type: "log", domainMin: 1 } },
          color: { field: "series", type: "nominal", title: null, sort: order, scale: { domain: order, range: order.map((o) => colors[o]!) } },
          strokeDash: {
            field: "series",
            type: "nominal",
            title: null,
            sort: order,
            scale: { domain: order, range: order.map((o) => (o === sustainedLabel ? [2, 2] : [1, 0])) },
          },
        },
      },
      {
        data: { values: [{ limit }] },
        mark: { type: "rule", strokeDash: [6, 4], color: "#222" },
        encoding: { y: { field: "limit", type: "quantitative" } },
      },
    ],
    config: {
      font: "DejaVu Sans",
      legend: { orient: "bottom", direction: "vertical", labelFontSize: 12, labelLimit: 700 },
    },
  };
}

/** Seconds from the start of the load within which a growing counter must have spread its writes. */
const CALM_WITHIN_S = 30;

/**
 * Workload 9: the growing counter's hottest document comes down to 2 × SHARD_WRITES_PER_SECOND (sustained,
 * over the workload's window) within 30 s and stays there; the fixed counters are reported beside it.
 */
export function hotTargets(hot: HotResult): Target[] {
  const limit = 2 * hot.shardWritesPerSecond;
  const grows = hot.runs.find((r) => r.variant === "ours, grows");
  if (grows === undefined) return [];
  const late = (run: HotResult["runs"][number]) => fixed(lastWindow(run));
  const others = hot.runs.filter((r) => r !== grows).map((r) => `${r.rollup} on ${r.startShards} shards ${late(r)}/s`);
  return [
    {
      target: `workload 9: the growing counter's hottest document ≤ 2 × SHARD_WRITES_PER_SECOND = ${limit} writes/s (over every ${SUSTAINED_WINDOW_S} s) from within ${CALM_WITHIN_S} s of the start to the end of the load`,
      measured:
        `${grows.calmFromSecond === null ? "never" : `from second ${grows.calmFromSecond}`}; ${grows.startShards} → ${grows.endShards} shards; over the last ${SUSTAINED_WINDOW_S} s ${late(grows)}/s; ` +
        `beside it ${others.join(", ")}`,
      met: grows.calmFromSecond !== null && grows.calmFromSecond <= CALM_WITHIN_S,
    },
  ];
}

/**
 * Workload 9 offers more than this machine can do (its table says what rate it reached): its lag is that
 * of a saturated process's timers and Firestore calls, reported, not judged.
 */
export function saturatedLagTarget(h: HotResult, intervalMs: number): Target[] {
  const ours = h.runs.filter((r) => r.rollup === "ours").map((r) => r.phase);
  if (ours.length === 0) return [];
  return [
    {
      target: `lag p99, ours ≤ interval + 1 s = ${int(lagBoundMs(intervalMs))} ms, workload 9 (the machine saturated: more offered than it can do)`,
      measured: ours.map((p) => `${p.workload}: ${ms(p.lagMs.p99)} ms (max ${ms(p.lagMs.max)}) at ${fixed(p.incrementsPerSecond, 0)}/s`).join("; "),
      met: null,
    },
  ];
}
