// The report: Markdown tables (ready for the README), the targets of the issue with what was measured,
// and the JSON written next to the plot.
import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import type { BenchOptions } from "./options";
import { PRICES, type CostPerMillion } from "./ops";
import type { PhaseResult } from "./recorder";
import type { EndToEndResult } from "./workloads/endToEnd";
import type { RedeliveryResult } from "./workloads/redelivery";
import type { TimelinePoint } from "./workloads/sustained";

export interface Machine {
  cores: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  java: string;
  functionsEmulatorParallel: string;
}

export interface Target {
  target: string;
  measured: string;
  met: boolean;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  seconds: number;
  machine: Machine;
  options: BenchOptions;
  intervalMs: number;
  phases: (PhaseResult | RedeliveryResult)[];
  endToEnd: EndToEndResult;
  targets: Target[];
  sustainedTimeline: TimelinePoint[];
  /** Operations and list-price cost per 1,000,000 increments, per workload and rollup (ops.ts). */
  costs: CostRow[];
}

export interface CostRow {
  workload: string;
  rollup: string;
  increments: number;
  perMillion: CostPerMillion;
}

export function machine(): Machine {
  let java = "unknown";
  try {
    // `java -version` prints to stderr; execFileSync returns stdout, so merge them.
    java = execFileSync("sh", ["-c", "java -version 2>&1"], { encoding: "utf8" }).split("\n")[0]!.trim();
  } catch {
    // Reported as unknown: the emulators would not have started without Java anyway.
  }
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    java,
    functionsEmulatorParallel: process.env.FUNCTIONS_EMULATOR_PARALLEL ?? "50 (firebase-tools default)",
  };
}

const ms = (value: number | null) => (value === null ? "–" : Math.round(value).toLocaleString("en-US"));
const int = (value: number) => value.toLocaleString("en-US");
const fixed = (value: number | null, digits = 1) => (value === null || !Number.isFinite(value) ? "–" : value.toFixed(digits));

/** A Markdown table; the first `textColumns` columns are left-aligned, the (numeric) rest right-aligned. */
function markdownTable(header: string[], rows: string[][], textColumns: number): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map((_, i) => (i < textColumns ? "---" : "---:"))), ...rows.map(line)].join("\n");
}

export function resultsTable(phases: readonly (PhaseResult | RedeliveryResult)[]): string {
  const rows = phases.map((p) => [
    p.workload,
    p.rollup,
    int(p.counters),
    int(p.increments),
    int(p.parentWrites),
    fixed(p.parentWrites / p.increments, 3),
    int(p.drift),
    ms(p.lagMs.p50),
    ms(p.lagMs.p99),
    ms(p.lagMs.max),
    fixed(p.incrementsPerSecond),
    p.settleMs === null ? "never" : fixed(p.settleMs / 1000),
  ]);
  rows.push(["4 end to end", "naive", "–", "–", "–", "–", "–", "–", "–", "–", "–", "n/a: see the latency table"]);
  return markdownTable(
    [
      "workload",
      "rollup",
      "counters",
      "increments",
      "parent writes",
      "writes/incr.",
      "drift",
      "lag p50 ms",
      "lag p99 ms",
      "lag max ms",
      "incr./s",
      "settle s",
    ],
    rows,
    2,
  );
}

/** Whether the listeners saw every parent write as its own state (then every lag is measured exactly). */
export function statesNote(phases: readonly PhaseResult[]): string {
  const skipped = phases.filter((p) => p.statesSeen < p.parentWrites);
  const seen = phases.reduce((n, p) => n + p.statesSeen, 0);
  const writes = phases.reduce((n, p) => n + p.parentWrites, 0);
  return skipped.length === 0
    ? `The parent listeners saw every parent write as its own state (${int(seen)} of ${int(writes)}): each lag is measured against the first covering state itself.`
    : `The parent listeners missed states in ${skipped.map((p) => `${p.workload}/${p.rollup} (${p.statesSeen} of ${p.parentWrites})`).join(", ")}: lags there are upper bounds.`;
}

export function endToEndTable(e2e: EndToEndResult): string {
  const rows = e2e.paths.map((p) => [
    p.path,
    int(p.calls),
    int(p.failures),
    fixed(p.latencyMs.p50),
    fixed(p.latencyMs.p99),
    fixed(p.latencyMs.max),
    fixed(p.callsPerSecond),
  ]);
  return markdownTable(["path", "calls", "failures", "p50 ms", "p99 ms", "max ms", "calls/s"], rows, 1);
}

function find(phases: readonly PhaseResult[], workload: string, rollup: string): PhaseResult | undefined {
  return phases.find((p) => p.workload.startsWith(workload) && p.rollup === rollup);
}

/** Intervals a counter was active in: from the first write to the first exact parent state, rounded up, +1. */
function intervalsSpanned(p: PhaseResult, intervalMs: number): number {
  return Math.ceil((p.loadSeconds * 1000 + (p.settleMs ?? 0)) / intervalMs) + 1;
}

export function targets(phases: readonly (PhaseResult | RedeliveryResult)[], e2e: EndToEndResult, intervalMs: number): Target[] {
  const out: Target[] = [];
  const all = [...phases, e2e.rollup];
  const sparseOurs = find(phases, "0", "ours");
  const sparseNaive = find(phases, "0", "naive");
  if (sparseOurs !== undefined && sparseNaive !== undefined) {
    const bound = (sparseNaive.lagMs.p50 ?? Infinity) + 50;
    out.push({
      target: "workload 0: lag p50 on idle counters, ours ≤ naive + 50 ms",
      measured: `ours ${ms(sparseOurs.lagMs.p50)} ms (p99 ${ms(sparseOurs.lagMs.p99)}), naive ${ms(sparseNaive.lagMs.p50)} ms (p99 ${ms(sparseNaive.lagMs.p99)})`,
      met: (sparseOurs.lagMs.p50 ?? Infinity) <= bound && sparseOurs.lagMs.uncovered === 0,
    });
    out.push({
      target: "workload 0: an increment on an idle counter is in the total p50 ≤ 100 ms after its commit",
      measured: `${ms(sparseOurs.lagMs.p50)} ms`,
      met: (sparseOurs.lagMs.p50 ?? Infinity) <= 100,
    });
  }
  for (const workload of ["1", "2"]) {
    const ours = find(phases, workload, "ours");
    if (ours === undefined) continue;
    const budget = ours.counters * intervalsSpanned(ours, intervalMs);
    out.push({
      target: `workload ${workload}: parent writes, ours ≤ 1 per interval per counter`,
      measured: `${ours.parentWrites} writes for ${ours.increments} increments; budget ${budget} (${ours.counters} counter(s) × ${intervalsSpanned(ours, intervalMs)} intervals of ${intervalMs} ms from first write to exact)`,
      met: ours.parentWrites <= budget,
    });
    const naive = find(phases, workload, "naive");
    if (naive !== undefined) {
      const ratio = naive.parentWrites / naive.increments;
      out.push({
        target: `workload ${workload}: parent writes, naive ≈ 1 per increment`,
        measured: `${naive.parentWrites} writes for ${naive.increments} increments (${ratio.toFixed(3)} per increment)`,
        met: Math.abs(ratio - 1) <= 0.05,
      });
    }
  }
  const sustainedOurs = find(phases, "1", "ours");
  if (sustainedOurs !== undefined) {
    // 30 s of load is 30 intervals; 40 leaves room for the leading edge and the last slot.
    const limit = Math.ceil((sustainedOurs.loadSeconds * 1000) / intervalMs) + 10;
    out.push({
      target: `workload 1: parent writes, ours ≤ load seconds + 10 (${limit})`,
      measured: `${sustainedOurs.parentWrites}`,
      met: sustainedOurs.parentWrites <= limit,
    });
  }
  const oursDrift = all.filter((p) => p.rollup === "ours");
  out.push({
    target: "drift, ours = 0 in every workload",
    measured: oursDrift.map((p) => `${p.workload.split(" ")[0]}: ${p.drift}`).join(", "),
    met: oursDrift.every((p) => p.drift === 0),
  });
  const redelivered = phases.find((p): p is RedeliveryResult => "duplicates" in p && p.rollup === "naive");
  if (redelivered !== undefined) {
    out.push({
      target: "workload 3: drift, naive = number of duplicate deliveries",
      measured: `drift ${int(redelivered.drift)}, duplicates ${int(redelivered.duplicates)}`,
      met: redelivered.drift === redelivered.duplicates,
    });
  }
  const lagBound = intervalMs + 1000;
  const lagged = all.filter((p) => p.rollup === "ours" && p.lagFrom === "commit");
  out.push({
    target: `lag p99, ours ≤ interval + 1 s = ${lagBound} ms`,
    measured: lagged.map((p) => `${p.workload.split(" ")[0]}: ${ms(p.lagMs.p99)} ms`).join(", "),
    met: lagged.every((p) => p.lagMs.p99 !== null && p.lagMs.p99 <= lagBound && p.lagMs.uncovered === 0),
  });
  out.push({
    target: "workload 4: incrementCounter p50 ≤ 1.3× a callable doing one raw increment",
    measured: `latency p50 ×${fixed(e2e.ratio.p50, 2)}, p99 ×${fixed(e2e.ratio.p99, 2)}, mean ×${fixed(e2e.ratio.mean, 2)} (interleaved calls)`,
    met: (e2e.ratio.p50 ?? Infinity) <= 1.3,
  });
  return out;
}

const dollars = (value: number) => `$${value < 10 ? value.toFixed(2) : Math.round(value).toLocaleString("en-US")}`;

/** Operations and dollars per 1,000,000 increments, per workload and rollup. */
export function costTable(rows: readonly CostRow[]): string {
  const round = (value: number) => int(Math.round(value));
  return markdownTable(
    [
      "workload",
      "rollup",
      "invocations",
      "doc reads",
      "doc writes",
      "aggregations",
      "waiting instance-s",
      "Firestore $",
      "invocations $",
      "waiting $ (≤)",
      "total $",
    ],
    rows.map((r) => {
      const c = r.perMillion;
      return [
        r.workload,
        r.rollup,
        round(c.invocations),
        round(c.reads),
        round(c.writes),
        round(c.aggregations),
        round(c.waitSeconds),
        dollars(c.dollars.firestore),
        dollars(c.dollars.invocations),
        dollars(c.dollars.waiting),
        dollars(c.dollars.total),
      ];
    }),
    2,
  );
}

export function pricesLine(): string {
  return `Prices (USD, list, looked up 2026-11-23): Firestore nam5 $${(PRICES.read * 100_000).toFixed(2)}/100K reads (aggregations: 1 read each), $${(PRICES.write * 100_000).toFixed(2)}/100K writes; Cloud Run functions Tier 1 $${(PRICES.invocation * 1e6).toFixed(2)}/M invocations, $${PRICES.vcpuSecond}/vCPU-s, $${PRICES.gibSecond}/GiB-s (waiting priced as 1 vCPU + 0.25 GiB per instance-second, an upper bound). The shard write of each increment itself (1 write, $0.18/100K) is the same for both and not in these rows.`;
}

export function targetsTable(list: readonly Target[]): string {
  return markdownTable(
    ["target", "measured", "met"],
    list.map((t) => [t.target, t.measured, t.met ? "yes" : "**no**"]),
    3,
  );
}

export function machineLine(m: Machine): string {
  return `${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.java}, FUNCTIONS_EMULATOR_PARALLEL=${m.functionsEmulatorParallel}`;
}
