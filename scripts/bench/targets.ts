// The benchmark's targets, each with what was measured and whether it was met. The lag and parent-write
// targets of the load workloads (1 and 2) are judged under production-like delivery only: under the
// emulator's own delivery every event waits for the one before it, across every trigger (docs/benchmark.md),
// so those rows measure the emulator's queue, not the rollup; they are reported, not judged.
import { fixed, int, markdownTable, ms } from "./format";
import type { PhaseResult } from "./recorder";
import type { EndToEndResult } from "./workloads/endToEnd";
import { lastWindow, SUSTAINED_WINDOW_S, type HotResult } from "./workloads/hot";
import type { MirrorResult } from "./workloads/mirrored";
import type { WindowsResult } from "./workloads/windows";

export interface Target {
  target: string;
  measured: string;
  /** null: reported only (measured under the emulator's delivery; see the header). */
  met: boolean | null;
}

/** Workload 0: what an idle counter's lag p50 may exceed the naive trigger's by (issue 41). */
export const IDLE_LAG_MARGIN_MS = 10;

/** Judged under production-like delivery; reported only under the emulator's. */
const judged = (p: PhaseResult, met: boolean): boolean | null => (p.delivery === "emulator" ? null : met);

/** "1 sustained 100/s, production-like" */
const labelOf = (p: PhaseResult) => `${p.workload}, ${p.delivery}`;

/** Intervals a counter was active in: from the first write to the first exact parent state, rounded up, +1. */
function intervalsSpanned(p: PhaseResult, intervalMs: number): number {
  return Math.ceil((p.loadSeconds * 1000 + (p.settleMs ?? 0)) / intervalMs) + 1;
}

export function targets(
  phases: readonly PhaseResult[],
  e2e: EndToEndResult,
  intervalMs: number,
  mirrors?: MirrorResult,
  hot?: HotResult,
  windows?: WindowsResult,
): Target[] {
  const out: Target[] = [];
  const all = [...phases, ...(mirrors === undefined ? [] : [mirrors.phase]), e2e.rollup];
  // By the workload's number: "1" is "1 sustained …", not "10 windows, …".
  const of = (rollup: string, prefix?: string) => phases.filter((p) => p.rollup === rollup && (prefix === undefined || p.workload.startsWith(`${prefix} `)));
  const sparseOurs = of("ours", "0")[0];
  const sparseNaive = of("naive", "0")[0];
  if (sparseOurs !== undefined && sparseNaive !== undefined) {
    const bound = (sparseNaive.lagMs.p50 ?? Infinity) + IDLE_LAG_MARGIN_MS;
    out.push({
      target: `workload 0: lag p50 on idle counters, ours ≤ naive + ${IDLE_LAG_MARGIN_MS} ms`,
      measured: `ours ${ms(sparseOurs.lagMs.p50)} ms (p99 ${ms(sparseOurs.lagMs.p99)}), naive ${ms(sparseNaive.lagMs.p50)} ms (p99 ${ms(sparseNaive.lagMs.p99)})`,
      met: (sparseOurs.lagMs.p50 ?? Infinity) <= bound && sparseOurs.lagMs.uncovered === 0,
    });
    out.push({
      target: "workload 0: an increment on an idle counter is in the total p50 ≤ 100 ms after its commit",
      measured: `${ms(sparseOurs.lagMs.p50)} ms`,
      met: (sparseOurs.lagMs.p50 ?? Infinity) <= 100,
    });
  }
  const loads = [...of("ours", "1"), ...of("ours", "2"), ...of("ours", "9")];
  for (const ours of loads) {
    const spanned = intervalsSpanned(ours, intervalMs);
    const budget = ours.counters * spanned;
    out.push({
      target: `${labelOf(ours)}: parent writes, ours ≤ 1 per interval per counter`,
      measured: `${int(ours.parentWrites)} for ${int(ours.increments)} increments; budget ${int(budget)} (${ours.counters} counter(s) × ${spanned} intervals of ${intervalMs} ms from first write to exact)`,
      met: judged(ours, ours.parentWrites <= budget),
    });
  }
  for (const ours of of("ours", "1")) {
    // 30 s of load is 30 intervals; 10 more leave room for the leading edge and the last slot.
    const limit = Math.ceil((ours.loadSeconds * 1000) / intervalMs) + 10;
    out.push({
      target: `${labelOf(ours)}: parent writes, ours ≤ load seconds + 10 (${limit})`,
      measured: int(ours.parentWrites),
      met: judged(ours, ours.parentWrites <= limit),
    });
  }
  for (const naive of [...of("naive", "1"), ...of("naive", "2"), ...of("naive", "9")]) {
    // One parent write per delivery: per increment, plus one per duplicate the model delivered.
    const deliveries = naive.increments + (naive.deliveries?.duplicates ?? 0);
    out.push({
      target: `${labelOf(naive)}: parent writes, naive = 1 per delivered event`,
      measured: `${int(naive.parentWrites)} for ${int(deliveries)} delivered events`,
      met: naive.parentWrites === deliveries,
    });
  }
  const ours = all.filter((p) => p.rollup === "ours");
  out.push({
    target: "drift, ours = 0 in every workload and delivery",
    measured: ours.every((p) => p.drift === 0) ? `0 in all ${ours.length} phases` : ours.filter((p) => p.drift !== 0).map((p) => `${labelOf(p)}: ${p.drift}`).join("; "),
    met: ours.every((p) => p.drift === 0),
  });
  for (const naive of phases.filter((p) => p.rollup === "naive" && p.deliveries !== null)) {
    out.push({
      target: `${labelOf(naive)}: drift, naive = number of duplicate deliveries`,
      measured: `drift ${int(naive.drift)}, duplicates ${int(naive.deliveries!.duplicates)}`,
      met: naive.drift === naive.deliveries!.duplicates,
    });
  }
  const lagBound = intervalMs + 1000;
  // Workload 9 offers more than this machine can do (its table says what rate it reached): its lag is that
  // of a saturated process's timers and Firestore calls, reported in its own row, not judged.
  const saturated = (p: PhaseResult) => p.workload.startsWith("9");
  for (const delivery of ["production-like", "emulator"] as const) {
    const lagged = ours.filter((p) => p.delivery === delivery && p.lagFrom === "commit" && !saturated(p));
    if (lagged.length === 0) continue;
    const met = lagged.every((p) => p.lagMs.p99 !== null && p.lagMs.p99 <= lagBound && p.lagMs.uncovered === 0);
    out.push({
      target: `lag p99, ours ≤ interval + 1 s = ${int(lagBound)} ms, ${delivery} delivery`,
      measured: lagged.map((p) => `${p.workload}: ${ms(p.lagMs.p99)} ms${p.lagMs.uncovered > 0 ? ` (${p.lagMs.uncovered} never covered)` : ""}`).join("; "),
      met: delivery === "emulator" ? null : met,
    });
  }
  const hotLagged = ours.filter(saturated);
  if (hotLagged.length > 0) {
    out.push({
      target: `lag p99, ours ≤ interval + 1 s = ${int(lagBound)} ms, workload 9 (the machine saturated: more offered than it can do)`,
      measured: hotLagged.map((p) => `${p.workload}: ${ms(p.lagMs.p99)} ms (max ${ms(p.lagMs.max)}) at ${fixed(p.incrementsPerSecond, 0)}/s`).join("; "),
      met: null,
    });
  }
  if (mirrors !== undefined) {
    const lag = mirrors.targetLagMs;
    out.push({
      target: "workload 5: mirrored field = total once settled, field lag p99 ≤ interval + 1 s",
      measured: `drift field − total ${int(mirrors.mirrorDrift)} over ${mirrors.phase.counters} counters; field lag p50 ${ms(lag.p50)} ms, p99 ${ms(lag.p99)} ms${lag.uncovered > 0 ? ` (${lag.uncovered} never shown)` : ""}`,
      met: mirrors.mirrorDrift === 0 && lag.uncovered === 0 && lag.p99 !== null && lag.p99 <= lagBound,
    });
  }
  if (hot !== undefined) out.push(...hotTargets(hot));
  if (windows !== undefined) out.push(...windowsTargets(windows));
  out.push({
    target: "workload 4: incrementCounter p50 ≤ 1.3× a callable doing one raw increment",
    measured: `latency p50 ×${fixed(e2e.ratio.p50, 2)}, p99 ×${fixed(e2e.ratio.p99, 2)}, mean ×${fixed(e2e.ratio.mean, 2)} (interleaved calls)`,
    met: (e2e.ratio.p50 ?? Infinity) <= 1.3,
  });
  return out;
}

/** Seconds from the start of the load within which a growing counter must have spread its writes. */
const CALM_WITHIN_S = 30;

/**
 * Workload 9: the growing counter's hottest document comes down to 2 × SHARD_WRITES_PER_SECOND (sustained,
 * over the workload's window) within 30 s and stays there; the fixed counters are reported beside it.
 */
function hotTargets(hot: HotResult): Target[] {
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
 * Workload 10: windowed counters as exact as plain ones (drift 0, windows = total); the midnight commit moves
 * every counter with a window to move, and a run right after finds none and costs one read.
 */
export function windowsTargets(w: WindowsResult): Target[] {
  const { plain, windowed } = w.phases;
  const m = w.midnight;
  const committed = m.first.outcomes.committed ?? 0;
  return [
    {
      target: "workload 10: drift 0 on plain and on windowed counters, and each windowed counter's week and month = its total",
      measured: `drift plain ${int(plain.drift)}, windowed ${int(windowed.drift)}; windows − total ${int(w.windowsDrift)} over ${windowed.counters} counters`,
      met: plain.drift === 0 && windowed.drift === 0 && w.windowsDrift === 0,
    },
    {
      target: `workload 10: the midnight commit moves every windowed counter (${int(m.counters)}): windows.day → ${m.toDay}, today 0`,
      measured: `found ${int(m.first.found)}, committed ${int(committed)}, moved ${int(m.moved)}`,
      met: m.first.found === m.counters && committed === m.counters && m.moved === m.counters,
    },
    {
      target: "workload 10: the midnight commit again right after finds none, and costs one read",
      measured: `found ${int(m.second.found)}; ${int(m.second.ops.reads)} read(s), ${int(m.second.ops.writes)} writes, ${int(m.second.ops.aggregations)} aggregations`,
      met: m.second.found === 0 && m.second.ops.reads === 1 && m.second.ops.writes === 0 && m.second.ops.aggregations === 0,
    },
  ];
}

/** The targets as a Markdown table, with why some are reported only. */
export function targetsTable(list: readonly Target[], capacityEventsPerSecond: number): string {
  const table = markdownTable(
    ["target", "measured", "met"],
    list.map((t) => [t.target, t.measured, t.met === null ? "reported only" : t.met ? "yes" : "**no**"]),
    3,
  );
  if (list.every((t) => t.met !== null)) return table;
  return `${table}\n\n"Reported only": measured under the emulator's own delivery, which runs one event at a time across every trigger (${Math.round(capacityEventsPerSecond)} events/s to a no-op trigger on this machine): under load it measures the emulator's queue, not the rollup; those targets are judged under production-like delivery. Or measured in workload 9, which offers more than this machine can do: its timings are those of a saturated process.`;
}
