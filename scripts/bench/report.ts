// The report: Markdown tables (ready for the docs) of every phase, labelled with its delivery, the
// emulator's delivery capacity next to them, the targets (targets.ts), and the JSON written next to the plot.
import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { dollars, fixed, int, markdownTable, ms } from "./format";
import type { BenchOptions } from "./options";
import { PRICES, ROLLUP_SIZE, type CostPerMillion } from "./ops";
import type { DeliveryLabel, PhaseResult } from "./recorder";
import { targetsTable, type Target } from "./targets";
import type { CapacityResult } from "./workloads/capacity";
import type { ColdStartResult } from "./workloads/coldStart";
import type { EndToEndResult } from "./workloads/endToEnd";
import type { LikesResult } from "./workloads/likes";
import type { MirrorResult } from "./workloads/mirrored";
import type { ResetsResult } from "./workloads/resets";
import type { TimelinePoint } from "./workloads/sustained";

export interface Machine {
  cores: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  java: string;
  functionsEmulatorParallel: string;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  seconds: number;
  machine: Machine;
  options: BenchOptions;
  intervalMs: number;
  /** The emulator's delivery capacity: what every "emulator" row depends on. */
  capacity: CapacityResult;
  /** The production-like delivery's model, stated (delivery/direct.ts describeModel). */
  productionLike: string;
  phases: PhaseResult[];
  endToEnd: EndToEndResult;
  /** Workload 5: mirrors on. */
  mirrors: MirrorResult;
  /** Workload 6: likes on unique counters. */
  likes: LikesResult;
  /** Workload 7: a cold rollupTotal against a warm one. */
  coldStart: ColdStartResult;
  /** Workload 8: resets of a hot counter, the product's against the transactional one it replaced. */
  resets: ResetsResult;
  targets: Target[];
  sustainedTimeline: TimelinePoint[];
  /** Operations and list-price cost per 1,000,000 increments, per workload, delivery and rollup (ops.ts). */
  costs: CostRow[];
}

export interface CostRow {
  workload: string;
  rollup: string;
  delivery: DeliveryLabel;
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

export function resultsTable(phases: readonly PhaseResult[]): string {
  const rows = phases.map((p) => [
    p.workload,
    p.rollup,
    p.delivery,
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
  rows.push(["4 end to end", "naive", "emulator", "–", "–", "–", "–", "–", "–", "–", "–", "–", "n/a: see the latency table"]);
  return markdownTable(
    [
      "workload",
      "rollup",
      "delivery",
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
    3,
  );
}

/** Whether the listeners saw every parent write as its own state (then every lag is measured exactly). */
export function statesNote(phases: readonly PhaseResult[]): string {
  const skipped = phases.filter((p) => p.statesSeen < p.parentWrites);
  const seen = phases.reduce((n, p) => n + p.statesSeen, 0);
  const writes = phases.reduce((n, p) => n + p.parentWrites, 0);
  return skipped.length === 0
    ? `The parent listeners saw every parent write as its own state (${int(seen)} of ${int(writes)}): each lag is measured against the first covering state itself.`
    : `The parent listeners missed states in ${skipped.map((p) => `${p.workload}/${p.rollup}/${p.delivery} (${p.statesSeen} of ${p.parentWrites})`).join(", ")}: lags there are upper bounds.`;
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

/** Operations and dollars per 1,000,000 increments, per workload, rollup and delivery. */
export function costTable(rows: readonly CostRow[]): string {
  const round = (value: number) => int(Math.round(value));
  return markdownTable(
    [
      "workload",
      "rollup",
      "delivery",
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
        r.delivery,
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
    3,
  );
}

export function pricesLine(): string {
  return `Prices (USD, list, looked up 2026-11-23): Firestore nam5 $${(PRICES.read * 100_000).toFixed(2)}/100K reads (aggregations: 1 read each), $${(PRICES.write * 100_000).toFixed(2)}/100K writes; Cloud Run functions Tier 1 $${(PRICES.invocation * 1e6).toFixed(2)}/M invocations, $${PRICES.vcpuSecond}/vCPU-s, $${PRICES.gibSecond}/GiB-s (waiting priced as ${ROLLUP_SIZE.vcpu} vCPU + ${ROLLUP_SIZE.gib} GiB per instance-second, an upper bound). The shard write of each increment itself (1 write, $0.18/100K) is the same for both and not in these rows.`;
}

export function machineLine(m: Machine): string {
  return `${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.java}, FUNCTIONS_EMULATOR_PARALLEL=${m.functionsEmulatorParallel}`;
}

/** The emulator's delivery capacity, stated next to the rows that depend on it. */
export function capacityLine(c: CapacityResult): string {
  // Writes only a little faster than deliveries may have left the queue empty at times.
  const bound = c.writesPerSecond < 1.5 * c.eventsPerSecond ? " (a lower bound: the events were not written much faster)" : "";
  return (
    `Emulator delivery capacity: ${fixed(c.eventsPerSecond, 0)} events/s to a no-op trigger${bound}: ` +
    `${int(c.events)} events written at ${fixed(c.writesPerSecond, 0)}/s, delivered one at a time in ${fixed(c.seconds)} s. ` +
    `Every "emulator" row's events went through that one queue.`
  );
}

/** What the benchmark's own deliveries did, per phase that had them. */
export function deliveriesTable(phases: readonly PhaseResult[]): string {
  const rows = phases.flatMap((p) =>
    p.deliveries === null
      ? []
      : [[p.workload, p.rollup, p.delivery, int(p.increments), int(p.deliveries.deliveries), int(p.deliveries.duplicates), int(p.deliveries.retries), int(p.deliveries.maxInFlight)]],
  );
  return markdownTable(["workload", "rollup", "delivery", "events", "deliveries", "duplicates", "retried", "most in flight"], rows, 3);
}

/** Everything the run prints after its phases, in order, and where it wrote its files. */
export function renderReport(r: BenchResults, files: string): string {
  return `${reportBody(r)}\n\n${files}; ${r.seconds.toFixed(0)} s in all`;
}

/** The run's tables and findings: what the terminal shows and the results page holds. */
export function reportBody(r: BenchResults): string {
  const failures = r.endToEnd.paths.filter((p) => p.failures > 0).map((p) => `Workload 4, ${p.path}: ${p.failures} calls failed, first: ${p.firstError}`);
  return [
    capacityLine(r.capacity),
    "",
    `Production-like rows: ${r.productionLike}.`,
    "",
    resultsTable(r.phases),
    "",
    statesNote(r.phases),
    "",
    "Deliveries made by the benchmark itself (a retried delivery counts again):",
    "",
    deliveriesTable(r.phases),
    ...(failures.length > 0 ? ["", ...failures] : []),
    "",
    `Workload 5, mirrors on (MIRRORS=${r.mirrors.rule}), the mirrored field on each post:`,
    "",
    mirrorTable(r.mirrors),
    "",
    likesLines(r),
    "",
    `Workload 7, cold start: the first increment after rollupTotal's worker was replaced (a functions reload), then the same counter again after ${fixed(r.coldStart.idleMs / 1000)} s idle; lag from the increment's commit to the total covering it:`,
    "",
    coldStartTable(r.coldStart),
    "",
    coldStartLine(r.coldStart),
    "",
    `Workload 8, resets under load: ${r.resets.rate} increments/s for ${r.resets.seconds} s on one counter of ${r.resets.rows[0]?.shards ?? 0} shards, a reset every ${fixed(r.resets.resetEveryMs / 1000)} s; increment latency while a reset runs and otherwise:`,
    "",
    resetsTable(r.resets),
    "",
    `Workload 4, latency per call at ${r.endToEnd.concurrency} in flight:`,
    "",
    endToEndTable(r.endToEnd),
    "",
    "Operations and cost per 1,000,000 increments (the rollup side; counted from the functions' logs):",
    "",
    costTable(r.costs),
    "",
    pricesLine(),
    "",
    targetsTable(r.targets, r.capacity.eventsPerSecond),
  ].join("\n");
}

/** Workload 5: the parent and the mirrored field side by side. */
export function mirrorTable(m: MirrorResult): string {
  const p = m.phase;
  return markdownTable(
    ["delivery", "counters", "increments", "parent writes", "field states seen", "field lag p50", "field lag p99", "drift total − Σ shards", "drift field − total"],
    [[p.delivery, int(p.counters), int(p.increments), int(p.parentWrites), int(m.targetStatesSeen), ms(m.targetLagMs.p50), ms(m.targetLagMs.p99), int(p.drift), int(m.mirrorDrift)]],
    2,
  );
}

/**
 * Workload 6: what a million setMember calls (likes and unlikes) cost: the calls themselves (reads and
 * writes counted on the calls made) plus the rollup side (the workload's row of the cost table).
 */
export function likesLines(r: BenchResults): string {
  const l = r.likes;
  const rollup = r.costs.find((c) => c.workload === l.phase.workload && c.rollup === "ours");
  const callDollars = (l.callReadsPerCall * PRICES.read + l.callWritesPerCall * PRICES.write) * 1_000_000;
  const rollupDollars = rollup?.perMillion.dollars.total;
  return [
    `Workload 6, likes on unique counters (${int(l.likes)} likes and ${int(l.unlikes)} unlikes through setMember, ${l.phase.delivery} delivery): ` +
      `settled at ${int(l.totals)} in the totals for ${int(l.members)} member documents; lag p50 ${ms(l.phase.lagMs.p50)} ms, p99 ${ms(l.phase.lagMs.p99)} ms.`,
    `Per 1,000,000 setMember calls: the calls ${int(l.callReadsPerCall * 1_000_000)} reads + ${int(l.callWritesPerCall * 1_000_000)} writes = ${dollars(callDollars)}` +
      (rollupDollars === undefined ? "" : `, the rollup ${dollars(rollupDollars)} (row "${l.phase.workload}" of the cost table), ${dollars(callDollars + rollupDollars)} in all`) +
      ` (an incrementCounter call: 1 write = ${dollars(PRICES.write * 1_000_000)}).`,
  ].join("\n");
}

/** Workload 8: the product's reset against the transactional one it replaced. */
export function resetsTable(r: ResetsResult): string {
  const rows = r.rows.map((row) => [
    row.reset === "ours" ? "ours (snapshot + batch, no lock)" : "one transaction (before)",
    `${int(row.resets)} (${int(row.failedResets)} failed)`,
    `${ms(row.resetMs.p50)} / ${ms(row.resetMs.max)}`,
    `${int(row.increments)} (${int(row.failedIncrements)} failed)`,
    `${ms(row.outsideMs.p50)} / ${ms(row.outsideMs.p99)}`,
    `${ms(row.duringMs.p50)} / ${ms(row.duringMs.p99)} / ${ms(row.duringMs.max)}`,
    int(row.drift),
  ]);
  return markdownTable(
    ["reset", "resets", "reset p50 / max ms", "increments", "no reset: p50 / p99 ms", "during a reset: p50 / p99 / max ms", "drift"],
    rows,
    1,
  );
}

/** Workload 7: the cold and the warm increments side by side, each with its median and range. */
export function coldStartTable(c: ColdStartResult): string {
  const row = (label: string, m: ColdStartResult["cold"]) => [
    label,
    int(m.lagMs.count),
    ms(m.lagMs.p50),
    ms(m.lagMs.min),
    ms(m.lagMs.max),
    ms(m.handlerMs.p50),
    `${ms(m.handlerMs.min)}–${ms(m.handlerMs.max)}`,
  ];
  return markdownTable(
    ["rollupTotal", "samples", "lag p50 ms", "lag min ms", "lag max ms", "handler p50 ms", "handler range ms"],
    [row("cold (no worker: a new process starts)", c.cold), row(`warm (after ${fixed(c.idleMs / 1000)} s idle)`, c.warm)],
    1,
  );
}

/** What the cold start added to the first increment: the per-sample difference, and where it went. */
export function coldStartLine(c: ColdStartResult): string {
  const start = c.addedMs.p50 === null || c.cold.handlerMs.p50 === null || c.warm.handlerMs.p50 === null
    ? ""
    : `; the handler itself took ${ms(c.cold.handlerMs.p50)} ms cold against ${ms(c.warm.handlerMs.p50)} ms warm (its first Firestore call loads the client and connects), ` +
      `so about ${ms(c.addedMs.p50 - (c.cold.handlerMs.p50 - c.warm.handlerMs.p50))} ms went to starting the worker`;
  return (
    `A cold rollupTotal added ${ms(c.addedMs.p50)} ms to the first increment's lag (median of ${c.addedMs.count} paired samples, ` +
    `range ${ms(c.addedMs.min)}–${ms(c.addedMs.max)} ms)${start}.`
  );
}
