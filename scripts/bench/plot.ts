// The sustained workload's plot: the true sum (Σ shards, from every shard write's commit) and the total on
// the parent (every state the listener saw), over time, one panel per rollup and delivery. Vega-Lite compiles the spec,
// Vega renders SVG without a browser or canvas, resvg turns it into a PNG with the system's fonts.
import { Resvg } from "@resvg/resvg-js";
import * as vega from "vega";
import type { TopLevelSpec } from "vega-lite";
import { compile } from "vega-lite";
import { ROLLUPS, type Rollup } from "./counters";
import type { DeliveryLabel } from "./recorder";
import { SUSTAINED_WINDOW_S, type HotResult } from "./workloads/hot";
import type { TimelinePoint } from "./workloads/sustained";

export interface PlotTitle {
  rate: number;
  seconds: number;
  intervalMs: number;
  /** Parent writes each rollup made during the workload under a delivery, shown in its panel's label. */
  parentWrites: (rollup: Rollup, delivery: DeliveryLabel) => number;
}

const ROLLUP_NAMES: Record<Rollup, string> = { ours: "ours (rollupTotal)", naive: "naive (+= after − before)" };

export function sustainedSpec(points: readonly TimelinePoint[], title: PlotTitle): TopLevelSpec {
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

/** Renders a Vega-Lite spec to PNG bytes (2× scale). */
export async function renderPng(spec: TopLevelSpec): Promise<Buffer> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  const png = new Resvg(svg, {
    background: "white",
    fitTo: { mode: "zoom", value: 2 },
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
  }).render();
  return png.asPng();
}
