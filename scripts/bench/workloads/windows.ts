// Workload 10: what windowed counters cost (docs/windows.md). Two parts:
// - The same idle-counter load as workload 0 (1-shard counters, DEFAULT_SHARDS, as a real app's idle
//   counters are; every increment lands on a counter whose rollup has been quiet, so each one is its own
//   commit: where a window's extra aggregation weighs the most per increment), under the given delivery,
//   on plain counters, then on windowed ones, then on the naive trigger's (which has no windows: the row
//   "vs naive" compares both of ours with, under the same delivery). The plain and windowed rows of the
//   cost table differ by what windows cost; besides drift, each windowed counter's windows must hold its
//   total once settled.
// - The midnight commit on windowed counters of their own, run directly with its day clock a day ahead
//   (midnight.ts), and once more right after.
// The run fails unless its targets are met (windows equal to the total, every counter moved at midnight,
// nothing found right after).
import { ratioTarget } from "../allin";
import type { Counter } from "../counters";
import { dollars, fixed, int, markdownTable, ms, smallDollars } from "../format";
import { priced } from "../ops";
import { paced } from "../pace";
import type { PhaseResult } from "../recorder";
import type { BenchResults } from "../results";
import { say } from "../say";
import type { Target } from "../targets";
import { step, type BenchContext } from "./context";
import { midnight, type MidnightResult, type MidnightRun } from "./midnight";
import type { Delivery } from "./phase";
import { IDLE_GAP_MS, IDLE_SHARDS } from "./sparse";
import { sizes } from "../options";
import { deliveryOf, type Workload } from "./workload";

/** Increments in flight at most; far above what the paced rate needs. */
const MAX_IN_FLIGHT = 8;

export type CounterKind = "plain" | "windowed";
/** The load's three phases: ours on plain and on windowed counters, and the naive trigger's (plain: it has no windows). */
type LoadKind = CounterKind | "naive";

export interface WindowsResult {
  /** The load on plain counters, then on windowed ones (rows "10 windows, plain" / "10 windows, windowed"). */
  phases: Record<CounterKind, PhaseResult>;
  /** The same load on the naive trigger's counters (row "10 windows, naive"); absent from runs before it was measured. */
  naive?: PhaseResult;
  /** Σ over the windowed counters of |windows.last7Days − total| + |windows.last30Days − total| once settled. */
  windowsDrift: number;
  midnight: MidnightResult;
}

const FLAGS = [
  { key: "windowsCounters", flag: "--windows-counters", full: 40, quick: 6, min: 1, help: "workload 10: idle counters (1 shard each, DEFAULT_SHARDS), plain, windowed and naive" },
  { key: "windowsIncrements", flag: "--windows-increments", full: 5, quick: 2, min: 1, help: "workload 10: isolated increments per counter" },
  { key: "windowsGapMs", flag: "--windows-gap-ms", full: IDLE_GAP_MS, quick: IDLE_GAP_MS, min: 1, help: "workload 10: ms between two increments of one counter (as workload 0's)" },
  { key: "midnightCounters", flag: "--midnight-counters", full: 1000, quick: 100, min: 1, help: "workload 10: windowed counters with a window to move, committed by the midnight commit" },
] as const;

export const windows: Workload<WindowsResult> = {
  id: "windows",
  flags: FLAGS,
  stages: ["production-like"],
  async run(ctx, on) {
    const o = sizes(ctx.options, FLAGS);
    const delivery = deliveryOf(on);
    const result = await step(
      `workload 10, windowed counters, production-like delivery: ${o.windowsCounters} idle counters, ${o.windowsIncrements} increments each, ${o.windowsGapMs} ms apart, ours plain, ours windowed, then naive; then the midnight commit on ${o.midnightCounters} windowed counters, and once more`,
      async (): Promise<WindowsResult> => {
        const plain = await idleLoad(ctx, delivery, "plain");
        const windowed = await idleLoad(ctx, delivery, "windowed");
        const naive = await idleLoad(ctx, delivery, "naive");
        return {
          phases: { plain: plain.phase, windowed: windowed.phase },
          naive: naive.phase,
          windowsDrift: await windowsDriftOf(windowed.counters),
          midnight: await midnight(ctx, o.midnightCounters),
        };
      },
    );
    const m = result.midnight;
    say(`  midnight commit: ${m.moved} of ${m.counters} counters moved in ${(m.first.ops.durationMs / 1000).toFixed(1)} s; again right after: ${m.second.found} found, ${m.second.ops.reads} read(s)`);
    return result;
  },
  phases: (w) => [w.phases.plain, w.phases.windowed, ...(w.naive === undefined ? [] : [w.naive])],
  section: (w, results) => windowsLines(w, results),
  targets: (w) => windowsTargets(w),
  costTargets: (rows) => ratioTarget("workload 10: idle windowed counters, ours all in ≤ 1.4× naive all in", rows, (w) => w === "10 windows, windowed", 1.4),
  failures(w) {
    const unmet = windowsTargets(w).filter((t) => t.met === false);
    return unmet.length === 0 ? [] : [unmet.map((t) => `${t.target} (${t.measured})`).join("; ")];
  },
};

const KEYS: Record<LoadKind, string> = { plain: "winplain", windowed: "windowed", naive: "winnaive" };

/** Workload 0's load, under `delivery`, on counters of one kind. */
async function idleLoad(ctx: BenchContext, delivery: Delivery, kind: LoadKind): Promise<{ phase: PhaseResult; counters: Counter[] }> {
  const { windowsCounters: count, windowsIncrements: perCounter, windowsGapMs: gapMs } = sizes(ctx.options, FLAGS);
  const rollup = kind === "naive" ? "naive" : "ours";
  const counters = await delivery.createCounters(KEYS[kind], rollup, count, IDLE_SHARDS, { windowed: kind === "windowed" });
  const run = await delivery.run(`10 windows, ${kind}`, counters, async (increment) => ({
    writes: await paced(count * perCounter, (count * 1000) / gapMs, MAX_IN_FLIGHT, (i) => increment(counters[i % count]!)),
  }));
  return { phase: run.result, counters };
}

/** Every increment here is today's, or yesterday's across a midnight: the week and the month hold all of them. */
async function windowsDriftOf(counters: readonly Counter[]): Promise<number> {
  let drift = 0;
  for (const counter of counters) {
    const parent = await counter.parent.get();
    const total = parent.get("total") as unknown;
    const week = parent.get("windows.last7Days") as unknown;
    const month = parent.get("windows.last30Days") as unknown;
    if (typeof total !== "number" || typeof week !== "number" || typeof month !== "number") return Number.POSITIVE_INFINITY;
    drift += Math.abs(week - total) + Math.abs(month - total);
  }
  return drift;
}

/**
 * Workload 10: the same idle load on plain and windowed counters (what windows add per million increments,
 * from the two rows of the cost table), then the midnight commit's runs, scaled to 1,000 counters.
 */
function windowsLines(w: WindowsResult, r: BenchResults): string[] {
  const o = sizes(r.options, FLAGS);
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
    `The midnight commit (the scheduled rollupWindows' commitMidnight, run directly) on ${int(m.counters)} windowed counters of ${int(m.shards)} shard${m.shards === 1 ? "" : "s"}, each with one increment of ${m.fromDay} rolled up, its day clock a day ahead: the windows move to ${m.toDay}. ` +
      `${int(m.moved)} of ${int(m.counters)} counters moved (today 0, the increment still in the week and the month); per counter ${per(m.first.ops.reads)} reads, ${per(m.first.ops.writes)} writes, ${per(m.first.ops.aggregations)} aggregations. ` +
      `Instance time: the run's duration in this process, one invocation, priced as the cost table prices an instance-second:`,
    "",
    midnight,
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
