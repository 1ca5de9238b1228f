// The benchmark's all-in cost table (scripts/bench/allin.ts): the calls' counted operations plus the
// rollup's total per 1,000,000 increments, the ratio to the naive row of the same workload and delivery,
// what the parent writes cost each listener, and the workloads' cost targets judged on those rows. Also
// the idle lag target's margin (scripts/bench/workloads/sparse.ts), judged on workload 0's rows of a made-up run.
import { allInLines, allInRows, naiveRowOf, type AllInInput, type AllInRow } from "../bench/allin";
import type { CostPerMillion } from "../bench/ops";
import { WORKLOADS } from "../bench/workloads";
import { IDLE_LAG_MARGIN_MS, sparse } from "../bench/workloads/sparse";
import { workloadResults } from "../../test/helpers/bench-results";

/** Every workload's cost targets, judged on `rows`. */
const allInTargets = (rows: readonly AllInRow[]) => WORKLOADS.flatMap((w) => w.costTargets?.(rows) ?? []);

/** A cost row whose rollup side totals `rollupDollars` per million. */
function row(workload: string, rollup: string, rollupDollars: number, more: Partial<AllInInput> = {}): AllInInput {
  const perMillion: CostPerMillion = {
    invocations: 0,
    reads: 0,
    writes: 0,
    aggregations: 0,
    waitSeconds: 0,
    instanceSeconds: 0,
    dollars: { firestore: 0, invocations: 0, instances: 0, total: rollupDollars },
  };
  const naive = rollup === "naive";
  return {
    workload,
    rollup,
    delivery: "emulator",
    increments: 1000,
    perMillion,
    parentWrites: 1000,
    // Ours read the parent on every call (every one a shape-cache miss); naive reads nothing. One write each.
    callable: { calls: 1000, reads: naive ? 0 : 1000, writes: 1000 },
    ...more,
  };
}

/** Cents, so float sums compare exactly. */
const cents = (value: number | null) => (value === null ? null : Math.round(value * 100));

describe("the all-in cost table", () => {
  it("adds the calls' reads and writes at list prices to the rollup's total, and divides by the naive row's (the idle example of issue 41)", () => {
    const [ours, naive] = allInRows([row("0 sparse", "ours", 3.97), row("0 sparse", "naive", 2.36)]);
    // A parent read ($0.60 per million) and a shard write ($1.80 per million) against the shard write alone.
    expect(cents(ours!.callableDollars)).toBe(240);
    expect(cents(naive!.callableDollars)).toBe(180);
    expect(cents(ours!.allIn)).toBe(637);
    expect(cents(naive!.allIn)).toBe(416);
    expect(ours!.vsNaive!.toFixed(2)).toBe("1.53");
    expect(naive!.vsNaive).toBe(1);
  });

  it("counts the callable side per call made, not per increment assumed: cache hits read nothing", () => {
    const [ours] = allInRows([row("2 burst", "ours", 4, { callable: { calls: 1000, reads: 30, writes: 1000 } })]);
    expect(Math.round(ours!.callableReads)).toBe(30_000);
    expect(Math.round(ours!.callableWrites)).toBe(1_000_000);
    expect(cents(ours!.callableDollars)).toBe(182);
  });

  it("prices every parent write as one read per snapshot listener, for ours and for naive alike", () => {
    const [ours, naive] = allInRows([
      row("1 sustained 100/s", "ours", 1.3, { increments: 3000, parentWrites: 33 }),
      row("1 sustained 100/s", "naive", 2.3, { increments: 3000, parentWrites: 3000 }),
    ]);
    expect(Math.round(ours!.parentWrites!)).toBe(11_000);
    expect(Math.round(naive!.parentWrites!)).toBe(1_000_000);
    expect(cents(naive!.perListener)).toBe(60);
    // Not part of "all in": it depends on how many listeners a counter has.
    expect(cents(naive!.allIn)).toBe(410);
  });

  it("leaves out rows whose calls were not counted (workload 4's callables ran in the emulator)", () => {
    const rows = allInRows([row("4 end to end", "ours", 1.7, { callable: { calls: 0, reads: 0, writes: 0 } }), row("4 end to end", "naive", 2.3, { callable: undefined })]);
    expect(rows).toEqual([]);
    expect(allInLines([row("4 end to end", "ours", 1.7, { callable: null })])).toEqual([]);
  });

  it("compares with the naive row of the same workload and delivery, or the one naive row of the same workload number", () => {
    const rows = [
      row("1 sustained 100/s", "naive", 2),
      row("1 sustained 300/s", "naive", 2),
      row("1 sustained 300/s", "naive", 2, { delivery: "production-like" }),
      row("9 hot, 10 shards", "naive", 2, { delivery: "production-like" }),
      row("10 windows, naive", "naive", 2, { delivery: "production-like" }),
    ];
    const find = (workload: string, delivery = "emulator") => naiveRowOf(row(workload, "ours", 0, { delivery }), rows);
    expect(find("1 sustained 300/s")).toBe(rows[1]);
    expect(find("1 sustained 300/s", "production-like")).toBe(rows[2]);
    expect(find("9 hot, grows", "production-like")).toBe(rows[3]);
    expect(find("10 windows, windowed", "production-like")).toBe(rows[4]);
    // Two naive rows of workload 1 under the emulator's delivery: no way to tell which; none under a third delivery.
    expect(find("1 sustained 200/s")).toBeUndefined();
    expect(find("10 windows, plain")).toBeUndefined();
    const [ours] = allInRows([row("5 mirrors", "ours", 2.6)]);
    expect(ours!.vsNaive).toBeNull();
  });

  it("prints one table row per counted row, with the ratio and the listener's price", () => {
    const text = allInLines([row("0 sparse", "ours", 3.97), row("0 sparse", "naive", 2.36)]).join("\n");
    expect(text).toContain("| 0 sparse | ours | emulator | 1,000,000 | 1,000,000 | $2.40 | $3.97 | $6.37 | 1.53× | 1,000,000 | $0.60 |");
    expect(text).toContain("| 0 sparse | naive | emulator | 0 | 1,000,000 | $1.80 | $2.36 | $4.16 | 1.00× | 1,000,000 | $0.60 |");
  });
});

describe("the cost targets", () => {
  /** Ours at `ratio` × naive all in, naive at $4 all in. */
  const pair = (workload: string, ratio: number, delivery = "emulator"): AllInInput[] => [
    row(workload, "ours", 4 * ratio - 2.4, { delivery }),
    row(workload.startsWith("10 ") ? "10 windows, naive" : workload, "naive", 4 - 1.8, { delivery }),
  ];
  const judge = (rows: AllInInput[]) => Object.fromEntries(allInTargets(allInRows(rows)).map((t) => [t.target.split(":")[0]!, t.met]));

  it("holds idle plain counters to 1.20×, idle windowed to 1.4×, the production-like burst to 1.15×, sustained 100/s to 0.65× and the hot counter to 0.72× naive, all in", () => {
    const at = (idle: number, windowed: number, burst: number, sustained: number, hot: number) => [
      ...pair("0 sparse", idle),
      ...pair("10 windows, windowed", windowed, "production-like"),
      ...pair("2 burst", burst, "production-like"),
      ...pair("1 sustained 100/s", sustained, "production-like"),
      ...pair("9 hot, 10 shards", hot, "production-like"),
    ];
    expect(judge(at(1.2, 1.4, 1.15, 0.65, 0.72))).toEqual({
      "workload 0": true,
      "workload 10": true,
      "workload 2, production-like": true,
      "workload 1, production-like": true,
      "workload 9, production-like": true,
    });
    expect(judge(at(1.21, 1.41, 1.16, 0.66, 0.73))).toEqual({
      "workload 0": false,
      "workload 10": false,
      "workload 2, production-like": false,
      "workload 1, production-like": false,
      "workload 9, production-like": false,
    });
  });

  it("judges the burst under production-like delivery only, and fails a target with no naive row to compare with", () => {
    expect(judge(pair("2 burst", 1.0))).toEqual({});
    const [alone] = allInTargets(allInRows([row("0 sparse", "ours", 1)]));
    expect(alone!.target).toMatch(/^workload 0/);
    expect(alone!.measured).toBe("no naive row to compare with");
    expect(alone!.met).toBe(false);
  });
});

describe("the idle lag target", () => {
  const rows = workloadResults().sparse;

  it(`holds workload 0's lag p50 to the naive trigger's + ${IDLE_LAG_MARGIN_MS} ms`, () => {
    expect(IDLE_LAG_MARGIN_MS).toBe(10);
    const judged = (oursP50: number) => {
      const phases = rows.map((p) => ({ ...p, lagMs: { ...p.lagMs, uncovered: 0, p50: p.rollup === "naive" ? 40 : oursP50 } }));
      return sparse.targets!(phases, { intervalMs: 1000 }).find((t) => t.target.startsWith("workload 0: lag p50"))!;
    };
    expect(judged(50).met).toBe(true);
    expect(judged(51).met).toBe(false);
    expect(judged(51).target).toBe("workload 0: lag p50 on idle counters, ours ≤ naive + 10 ms");
  });
});
