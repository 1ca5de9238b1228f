// The all-in cost table: what an increment costs in all, per 1,000,000 increments, per workload, rollup and
// delivery. The callable side is what the calls themselves did in Firestore (callable.ts: ours reads the
// parent on a shape-cache miss and writes a shard; the naive callable writes a shard), the rollup side the
// cost table's total (ops.ts, counted from the functions' "rollup ops" lines). Beside them, what the
// parent writes cost the counter's listeners: every parent write is one document read for each snapshot
// listener of the counter. And how a workload's cost target (issue 41) is judged on these rows.
import type { CallableOps } from "./callable";
import { dollars, fixed, int, markdownTable } from "./format";
import { PRICES, type CostPerMillion } from "./ops";
import type { Target } from "./targets";

/** What one row of the all-in table is made of (a row of the cost table, with its phase's parent writes and calls). */
export interface AllInInput {
  workload: string;
  rollup: string;
  delivery: string;
  increments: number;
  perMillion: CostPerMillion;
  /** Parent writes the phase's listeners saw (PhaseResult.parentWrites). */
  parentWrites?: number;
  /** What the phase's calls did; absent or with no calls where they were not counted (workload 4's callables ran in the emulator). */
  callable?: CallableOps | null;
}

export interface AllInRow {
  workload: string;
  rollup: string;
  delivery: string;
  /** The calls' document reads and writes per 1,000,000 increments, and their price. */
  callableReads: number;
  callableWrites: number;
  callableDollars: number;
  /** The cost table's total. */
  rollupDollars: number;
  allIn: number;
  /** allIn over the all-in of the naive row of the same workload and delivery; null where there is none. */
  vsNaive: number | null;
  /** Parent writes per 1,000,000 increments, and what they cost one snapshot listener of the counter. */
  parentWrites: number | null;
  perListener: number | null;
}

const MILLION = 1_000_000;

/** The number a workload label starts with: "10" of "10 windows, plain". */
export const numberOf = (workload: string) => workload.split(" ")[0]!;

/**
 * The naive row `row` compares with: the naive row of the same workload and delivery, or else the naive row
 * whose workload is the start of the row's before a comma (workload 11's "11 documents, records", ours only,
 * against "11 documents"), or else the one naive row of the same workload number and delivery (workload 9's
 * "9 hot, grows" against "9 hot, 10 shards"; workload 10's "10 windows, windowed" against "10 windows, naive").
 * None if that is ambiguous.
 */
export function naiveRowOf<R extends Pick<AllInInput, "workload" | "rollup" | "delivery">>(row: R, rows: readonly R[]): R | undefined {
  const naive = rows.filter((r) => r.rollup === "naive" && r.delivery === row.delivery);
  const same = naive.find((r) => r.workload === row.workload);
  if (same !== undefined) return same;
  const variant = naive.find((r) => row.workload.startsWith(`${r.workload}, `));
  if (variant !== undefined) return variant;
  const sameNumber = naive.filter((r) => numberOf(r.workload) === numberOf(row.workload));
  return sameNumber.length === 1 ? sameNumber[0] : undefined;
}

/** The all-in rows of the cost rows whose calls were counted, in their order. */
export function allInRows(rows: readonly AllInInput[]): AllInRow[] {
  const priced = rows.flatMap((r) => {
    const calls = r.callable?.calls ?? 0;
    if (r.callable == null || calls === 0) return [];
    const callableReads = (r.callable.reads / calls) * MILLION;
    const callableWrites = (r.callable.writes / calls) * MILLION;
    const callableDollars = callableReads * PRICES.read + callableWrites * PRICES.write;
    const parentWrites = r.parentWrites === undefined || r.increments === 0 ? null : (r.parentWrites / r.increments) * MILLION;
    return [
      {
        workload: r.workload,
        rollup: r.rollup,
        delivery: r.delivery,
        callableReads,
        callableWrites,
        callableDollars,
        rollupDollars: r.perMillion.dollars.total,
        allIn: callableDollars + r.perMillion.dollars.total,
        vsNaive: null as number | null,
        parentWrites,
        perListener: parentWrites === null ? null : parentWrites * PRICES.read,
      },
    ];
  });
  for (const row of priced) {
    const naive = naiveRowOf(row, priced);
    row.vsNaive = naive === undefined || naive.allIn === 0 ? null : row.allIn / naive.allIn;
  }
  return priced;
}

const times = (ratio: number | null) => (ratio === null ? "–" : `${fixed(ratio, 2)}×`);

export function allInTable(rows: readonly AllInRow[]): string {
  const round = (value: number) => int(Math.round(value));
  return markdownTable(
    ["workload", "rollup", "delivery", "callable reads", "callable writes", "callable $", "rollup $", "all in $", "vs naive", "parent writes", "$ per listener"],
    rows.map((r) => [
      r.workload,
      r.rollup,
      r.delivery,
      round(r.callableReads),
      round(r.callableWrites),
      dollars(r.callableDollars),
      dollars(r.rollupDollars),
      dollars(r.allIn),
      times(r.vsNaive),
      r.parentWrites === null ? "–" : round(r.parentWrites),
      r.perListener === null ? "–" : dollars(r.perListener),
    ]),
    3,
  );
}

/** What the all-in table's columns are, printed under it. */
export function allInNote(): string {
  return (
    `Callable: the increments' own document reads and writes, counted on the calls the benchmark made (ours asks the product's shape cache first, as incrementCounter does: a miss reads the parent; this process is one callable instance, and a phase's counters start out of its cache), at $${(PRICES.read * 100_000).toFixed(2)}/100K reads and $${(PRICES.write * 100_000).toFixed(2)}/100K writes; ` +
    `the callables' invocations and instance time are left out (ours and naive are both a callable: workload 4 compares them). Rollup: the cost table's total. "vs naive": all in over the naive row's of the same workload and delivery. ` +
    `Parent writes per 1,000,000 increments: each is one document read for every snapshot listener of the counter, so "$ per listener" is what each listener adds (not in "all in"). ` +
    `Workload 4 is left out: its calls ran in the functions emulator, where the benchmark cannot count their reads.`
  );
}

/**
 * A cost target: the all-in row of ours for `workload` (and `delivery`, if named) at most `limit` × its
 * naive row's. No row: nothing to judge (a run without that workload); no naive row: not met.
 */
export function ratioTarget(target: string, rows: readonly AllInRow[], workload: (label: string) => boolean, limit: number, delivery?: string): Target[] {
  const row = rows.find((r) => r.rollup === "ours" && workload(r.workload) && (delivery === undefined || r.delivery === delivery));
  if (row === undefined) return [];
  return [
    {
      target,
      measured: row.vsNaive === null ? "no naive row to compare with" : `${times(row.vsNaive)}: ${dollars(row.allIn)} (callable ${dollars(row.callableDollars)} + rollup ${dollars(row.rollupDollars)}) per 1,000,000 increments`,
      met: row.vsNaive !== null && row.vsNaive <= limit,
    },
  ];
}

/** The all-in section of the report: a heading line, the table and what its columns are (nothing for a run without counted calls). */
export function allInLines(rows: readonly AllInInput[]): string[] {
  const table = allInRows(rows);
  if (table.length === 0) return [];
  return ["All in, per 1,000,000 increments: the calls themselves (callable) and the rollup, against the naive trigger:", "", allInTable(table), "", allInNote(), ""];
}
