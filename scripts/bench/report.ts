// The report's shared formatting: the tables every workload's rows are in (the main table, the deliveries
// the benchmark made itself), the emulator's delivery capacity and the machine stated next to them, and the
// report put together: those, each workload's own section (its file), the cost tables (costs.ts, allin.ts)
// and the targets (targets.ts). What the terminal shows and the results page holds.
import { allInLines } from "./allin";
import { costTable, parentMemoLines, pricesLine } from "./costs";
import { fixed, int, markdownTable, ms } from "./format";
import type { PhaseResult } from "./recorder";
import type { BenchResults, Machine } from "./results";
import { ran } from "./workloads";
import { targetsTable } from "./targets";
import type { CapacityResult } from "./workloads/capacity";

/** A phase's row of the main table. */
export function phaseRow(p: PhaseResult): string[] {
  return [
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
  ];
}

/** The main table: one row per phase (phaseRow), and the rows a workload adds that are no phase. */
export function resultsTable(rows: string[][]): string {
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
      : [[p.workload, p.rollup, p.delivery, int(p.events ?? p.increments), int(p.deliveries.deliveries), int(p.deliveries.duplicates), int(p.deliveries.retries), int(p.deliveries.maxInFlight)]],
  );
  return markdownTable(["workload", "rollup", "delivery", "events", "deliveries", "duplicates", "retried", "most in flight"], rows, 3);
}

/** Everything the run prints after its phases, in order, and where it wrote its files. */
export function renderReport(r: BenchResults, files: string): string {
  return `${reportBody(r)}\n\n${files}; ${r.seconds.toFixed(0)} s in all`;
}

/** The run's tables and findings: what the terminal shows and the results page holds. */
export function reportBody(r: BenchResults): string {
  const workloads = ran(r.workloads);
  const rows = workloads.flatMap(({ workload, result }) => [...(workload.phases?.(result) ?? []).map(phaseRow), ...(workload.tableRows?.(result) ?? [])]);
  return [
    capacityLine(r.capacity),
    "",
    `Production-like rows: ${r.productionLike}.`,
    "",
    resultsTable(rows),
    "",
    statesNote(r.phases),
    "",
    "Deliveries made by the benchmark itself (a retried delivery counts again):",
    "",
    deliveriesTable(r.phases),
    "",
    ...workloads.flatMap(({ workload, result }) => {
      const section = workload.section?.(result, r);
      return section === undefined ? [] : [...section, ""];
    }),
    "Operations and cost per 1,000,000 increments (the rollup side; counted from the functions' logs):",
    "",
    costTable(r.costs),
    "",
    pricesLine(r.rollupSize),
    "",
    ...allInLines(r.costs),
    ...parentMemoLines(r.costs),
    ...workloads.flatMap(({ workload, result }) => workload.afterCosts?.(result, r) ?? []),
    targetsTable(r.targets, r.capacity.eventsPerSecond),
  ].join("\n");
}
