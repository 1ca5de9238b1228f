// The plots: each workload that has one writes its Vega-Lite spec (workloads/sustained.ts, hot-report.ts);
// Vega-Lite compiles the spec, Vega renders SVG without a browser or canvas, resvg turns it into a PNG with
// the system's fonts.
import { Resvg } from "@resvg/resvg-js";
import * as vega from "vega";
import type { TopLevelSpec } from "vega-lite";
import { compile } from "vega-lite";

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
