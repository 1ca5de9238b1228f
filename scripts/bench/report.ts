// The report: Markdown tables (ready for the docs) of every phase, labelled with its delivery, the
// emulator's delivery capacity next to them, the targets (targets.ts), and the JSON written next to the plot.
import { execFileSync } from "node:child_process";
import { allInLines } from "./allin";
import { costTable, outcomeLines, parentMemoLines, pricesLine, type CostRow } from "./costs";
import { cpus, totalmem } from "node:os";
import { dollars, fixed, int, markdownTable, ms, smallDollars } from "./format";
import type { BenchOptions } from "./options";
import { priced, PRICES } from "./ops";
import type { InstanceSize } from "./product";
import type { PhaseResult } from "./recorder";
import { targetsTable, type Target } from "./targets";
import type { CapacityResult } from "./workloads/capacity";
import type { ColdStartResult } from "./workloads/coldStart";
import type { EndToEndResult } from "./workloads/endToEnd";
import { lastWindow, SUSTAINED_WINDOW_S, type HotResult } from "./workloads/hot";
import type { LikesResult } from "./workloads/likes";
import type { MirrorResult } from "./workloads/mirrored";
import type { ResetsResult } from "./workloads/resets";
import type { TimelinePoint } from "./workloads/sustained";
import { IDLE_SHARDS } from "./workloads/sparse";
import type { MidnightRun, WindowsResult } from "./workloads/windows";

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
  /** The instance size the cost tables price an instance-second at (rollupTotal's: product.ts). */
  rollupSize: InstanceSize;
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
  /** Workload 9: one hot counter, growing against fixed shapes. */
  hot: HotResult;
  /** Workload 10: windowed counters against plain ones, and the midnight commit. */
  windows: WindowsResult;
  targets: Target[];
  sustainedTimeline: TimelinePoint[];
  /** Operations and list-price cost per 1,000,000 increments, per workload, delivery and rollup (ops.ts). */
  costs: CostRow[];
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
    ...hotLines(r.hot),
    "",
    ...windowsLines(r),
    "",
    `Workload 4, latency per call at ${r.endToEnd.concurrency} in flight:`,
    "",
    endToEndTable(r.endToEnd),
    "",
    "Operations and cost per 1,000,000 increments (the rollup side; counted from the functions' logs):",
    "",
    costTable(r.costs),
    "",
    pricesLine(r.rollupSize),
    "",
    ...allInLines(r.costs),
    ...parentMemoLines(r.costs),
    ...outcomeLines(r.costs.find((c) => c.workload === "2 burst" && c.rollup === "ours" && c.delivery === "production-like")),
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
    row.reset === "ours" ? "ours (snapshot, then a transaction over the parent: no shard lock)" : "one transaction (before)",
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
 * Workload 10: the same idle load on plain and windowed counters (what windows add per million increments,
 * from the two rows of the cost table), then the midnight commit's runs, scaled to 1,000 counters.
 */
export function windowsLines(r: BenchResults): string[] {
  const w = r.windows;
  const o = r.options;
  const kinds = [w.phases.plain, w.phases.windowed];
  const label = (p: PhaseResult) => (p === w.phases.plain ? "plain" : p === w.phases.windowed ? "windowed" : "naive (plain)");
  const costOf = (p: PhaseResult) => r.costs.find((c) => c.workload === p.workload && c.rollup === p.rollup && c.delivery === p.delivery);
  const load = markdownTable(
    ["counters", "delivery", "increments", "deliveries (duplicates)", "parent writes", "drift", "windows − total", "aggregations per commit", "lag p50 / p99 ms", "total $ per 1M increments"],
    [...kinds, ...(w.naive === undefined ? [] : [w.naive])].map((p) => {
      const cost = costOf(p);
      const aggregations = cost === undefined ? null : (cost.perMillion.aggregations * p.increments) / 1_000_000;
      return [
        label(p),
        p.delivery,
        int(p.increments),
        p.deliveries === null ? "–" : `${int(p.deliveries.deliveries)} (${int(p.deliveries.duplicates)})`,
        int(p.parentWrites),
        int(p.drift),
        p === w.phases.windowed ? int(w.windowsDrift) : "–",
        aggregations === null || p.parentWrites === 0 ? "–" : fixed(aggregations / p.parentWrites, 2),
        `${ms(p.lagMs.p50)} / ${ms(p.lagMs.p99)}`,
        cost === undefined ? "–" : dollars(cost.perMillion.dollars.total),
      ];
    }),
    2,
  );
  const [plain, windowed] = kinds.map((p) => costOf(p)?.perMillion);
  const duplicates = kinds.map((p) => p.deliveries?.duplicates ?? 0);
  // The delivery model duplicates its own choice of events per phase: a difference in duplicates is not windows'.
  const duplicatesNote =
    duplicates[0] === duplicates[1] ? "" : ` The model delivered ${int(duplicates[0]!)} of the plain row's events twice and ${int(duplicates[1]!)} of the windowed row's: a duplicate costs an invocation and a read or two, windowed or not.`;
  const added =
    plain === undefined || windowed === undefined
      ? []
      : [
          `Per 1,000,000 increments on idle counters: plain ${dollars(plain.dollars.total)}, windowed ${dollars(windowed.dollars.total)}: windows add ${dollars(windowed.dollars.total - plain.dollars.total)} ` +
            `(${int(Math.round(windowed.aggregations - plain.aggregations))} aggregations, ${int(Math.round(windowed.reads - plain.reads))} reads, ${int(Math.round(windowed.writes - plain.writes))} writes, ${int(Math.round(windowed.instanceSeconds - plain.instanceSeconds))} instance-s; rows "${w.phases.plain.workload}" and "${w.phases.windowed.workload}" of the cost table). The shard write of an increment is one write either way.${duplicatesNote}`,
          "",
        ];
  const m = w.midnight;
  // A scaled row keeps a decimal: the run's one read of its last (empty) page is scaled with the rest.
  const count = (value: number) => value.toLocaleString("en-US", { maximumFractionDigits: 1 });
  const row = (label: string, run: MidnightRun, scale: number) => {
    const cost = priced(run.ops, run.ops.durationMs, scale, r.rollupSize);
    return [
      label,
      count(run.found * scale),
      scale !== 1 ? "(the row above, scaled)" : Object.entries(run.outcomes).map(([outcome, n]) => `${outcome} ${int(n)}`).join(", ") || "–",
      count(cost.reads),
      count(cost.writes),
      count(cost.aggregations),
      ms(run.ops.durationMs * scale),
      smallDollars(cost.dollars.firestore),
      smallDollars(cost.dollars.invocations + cost.dollars.instances),
      smallDollars(cost.dollars.total),
    ];
  };
  const midnight = markdownTable(
    ["midnight commit", "counters found", "outcomes", "doc reads", "doc writes", "aggregations", "ms", "Firestore $", "invocation + instance $", "total $"],
    [
      row(`after midnight, ${int(m.counters)} counters`, m.first, 1),
      row("the same, per 1,000 counters", m.first, 1000 / m.counters),
      row("again right after (nothing to move)", m.second, 1),
    ],
    3,
  );
  const per = (value: number) => fixed(value / m.counters, 3);
  return [
    `Workload 10, windowed counters: workload 0's load (${int(o.windowsCounters)} idle counters of ${int(IDLE_SHARDS)} shard(s), DEFAULT_SHARDS, ${int(o.windowsIncrements)} increments each, ${fixed(o.windowsGapMs / 1000)} s apart), ours on plain counters and then on windowed ones, then the naive trigger's (the all-in table compares with it); "windows − total": Σ over the windowed counters of |windows.last7Days − total| + |windows.last30Days − total| once settled:`,
    "",
    load,
    "",
    ...added,
    `The midnight commit (the scheduled rollupWindows' commitMovedWindows, run directly) on ${int(m.counters)} windowed counters of ${int(m.shards)} shard${m.shards === 1 ? "" : "s"}, each with one increment of ${m.fromDay} rolled up, its day clock a day ahead: the windows move to ${m.toDay}. ` +
      `${int(m.moved)} of ${int(m.counters)} counters moved (today 0, the increment still in the week and the month); per counter ${per(m.first.ops.reads)} reads, ${per(m.first.ops.writes)} writes, ${per(m.first.ops.aggregations)} aggregations. ` +
      `Instance time: the run's duration in this process, one invocation, priced as the cost table prices an instance-second:`,
    "",
    midnight,
  ];
}
