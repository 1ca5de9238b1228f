// The cost tables of the report: operations and dollars per 1,000,000 increments per workload, rollup and
// delivery (the rollup side, from the functions' "rollup ops" lines: ops.ts), the prices they are at, and
// where one row's operations went by outcome. The all-in table, which adds the calls, is allin.ts.
import type { AllInInput } from "./allin";
import { dollars, fixed, int, markdownTable } from "./format";
import type { CallableOps } from "./callable";
import { perMillion, PRICES, REMEMBERED, type CostPerMillion, type Ops } from "./ops";
import type { InstanceSize } from "./product";
import type { DeliveryLabel, PhaseResult } from "./recorder";

export interface CostRow extends Pick<AllInInput, "parentWrites" | "callable"> {
  workload: string;
  rollup: string;
  delivery: DeliveryLabel;
  increments: number;
  perMillion: CostPerMillion;
  /** The same operations by the invocations' outcome (the rollup's "rollup ops" lines), not scaled. */
  byOutcome: { outcome: string; ops: Ops }[];
}

/** The phases of a row of the cost tables: a phase's, or one counted on its own (workload 4's naive callable). */
export type CostPhase = Pick<PhaseResult, "workload" | "rollup" | "delivery" | "opsPrefix" | "increments" | "deliveries" | "parentWrites">;

/**
 * A phase's row: what its invocations did (`ops`, its "rollup ops" lines summed; `byOutcome`, the same by
 * outcome) per 1,000,000 of its increments, at `size`, and what its calls did.
 */
export function costRow(p: CostPhase, ops: Ops, byOutcome: CostRow["byOutcome"], callable: CallableOps, size: InstanceSize): CostRow {
  return {
    workload: p.workload,
    rollup: p.rollup,
    delivery: p.delivery,
    increments: p.increments,
    // The benchmark's own deliveries measured their instances' billed time; the emulator's ran one at a time.
    perMillion: perMillion(ops, p.increments, p.deliveries?.busyMs ?? ops.durationMs, size),
    byOutcome,
    parentWrites: p.parentWrites,
    callable,
  };
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
      "instance-s",
      "of it waiting",
      "Firestore $",
      "invocations $",
      "instances $",
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
        round(c.instanceSeconds),
        round(c.waitSeconds),
        dollars(c.dollars.firestore),
        dollars(c.dollars.invocations),
        dollars(c.dollars.instances),
        dollars(c.dollars.total),
      ];
    }),
    3,
  );
}

export function pricesLine(size: InstanceSize): string {
  return `Prices (USD, list, looked up 2026-11-23): Firestore nam5 $${(PRICES.read * 100_000).toFixed(2)}/100K reads (aggregations: 1 read each), $${(PRICES.write * 100_000).toFixed(2)}/100K writes; Cloud Run functions Tier 1 $${(PRICES.invocation * 1e6).toFixed(2)}/M invocations, $${PRICES.vcpuSecond}/vCPU-s, $${PRICES.gibSecond}/GiB-s (an instance-second priced as ${size.vcpu} vCPU + ${size.gib} GiB: rollupTotal's size). Instance-seconds: where the benchmark delivers events itself, the time its instances had at least one invocation running, shared by the invocations running together as Cloud Run bills it; under the emulator's delivery (one event at a time) the sum of the invocations' durations, an upper bound. "Of it waiting": invocations' time waiting for their slot to end, summed per invocation (overlapping waits share an instance's time). The increments' own Firestore operations are not in these rows: the all-in table below adds them.`;
}

/** Where one row's operations went, by what each invocation did, per 1,000 increments. */
export function outcomeLines(row: CostRow | undefined): string[] {
  if (row === undefined || row.byOutcome === undefined || row.byOutcome.length === 0) return [];
  const per = (value: number) => fixed((value * 1000) / row.increments, 0);
  const table = markdownTable(
    ["outcome", "invocations", "doc reads", "doc writes", "aggregations", "s waiting", "s running"],
    row.byOutcome.map(({ outcome, ops }: { outcome: string; ops: Ops }) => [
      outcome,
      per(ops.invocations),
      per(ops.reads),
      per(ops.writes),
      per(ops.aggregations),
      fixed(((ops.waitMs / 1000) * 1000) / row.increments, 1),
      fixed(((ops.durationMs / 1000) * 1000) / row.increments, 1),
    ]),
    1,
  );
  return [
    `Where the rollup's operations went in "${row.workload}", ${row.delivery} delivery, per 1,000 increments, by what each invocation did (each outcome is a path of [operations per increment](rollup.md#operations-per-increment)):`,
    "",
    table,
    "",
  ];
}

/**
 * How often a leading edge started from the parent its instance's last commit left (ParentMemo in
 * functions/src/rollup/types.ts) and found it still the parent: per row of ours with leading edges.
 */
export function parentMemoLines(rows: readonly CostRow[]): string[] {
  const lines: string[] = [];
  for (const row of rows) {
    if (row.rollup !== "ours" || row.byOutcome === undefined) continue;
    const count = (test: (outcome: string) => boolean) => row.byOutcome.filter((o) => test(o.outcome)).reduce((n, o) => n + o.ops.invocations, 0);
    const leads = count((o) => o.startsWith("committed-lead") || o.startsWith("joined"));
    if (leads === 0) continue;
    const hits = count((o) => o.endsWith(REMEMBERED.hit));
    const missed = count((o) => o.endsWith(REMEMBERED.missed));
    lines.push(`- ${row.workload}, ${row.delivery}: ${int(hits)} of ${int(leads)} leading edges (${fixed((100 * hits) / leads, 0)} %) started from the remembered parent and committed without reading it; ${int(missed)} found it changed and read it.`);
  }
  if (lines.length === 0) return [];
  return ["The parent an instance remembers (its last commit's), by leading edges of ours (each hit saves the parent's read):", "", ...lines, ""];
}
