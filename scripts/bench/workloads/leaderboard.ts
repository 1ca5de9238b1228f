// Workload 12, leaderboards (docs/leaderboards.md): the same increments spread over N counters twice under
// the emulator's delivery, on counters on no board, then on counters on the board `bench` (functions/.env's
// LEADERBOARDS names `leaderboard-ours-{id}`), so the cost tables show what a board adds per 1,000,000
// increments (its entries in the counters' commits, and rollupBoard's own line, named by the board). While
// the second runs, listeners on the board's summary and entries time each entry write until a summary holds
// it (a rank's lag) and count the writes of each board document per second. Then every counter's rank is
// read as the client reads it (the counter, the summary, one count()), checked against the rank counted from
// the totals, and its cost compared with a count() of every counter above (leaderboard-reads.ts).
import { paced, seededRandom } from "../pace";
import type { CostPhase } from "../costs";
import type { PhaseResult } from "../recorder";
import type { Target } from "../targets";
import { sizes } from "../options";
import { fixed, int, markdownTable, ms } from "../format";
import { step } from "./context";
import { deliveryOf, type Workload } from "./workload";
import { IDLE_SHARDS } from "./sparse";
import { rankReads, watchBoard, type BoardWatch, type RankReads } from "./leaderboard-reads";

/** The board of the on-board phase, as functions/.env's LEADERBOARDS names it (`bench=leaderboard-ours-{id}`). */
export const BENCH_BOARD = "bench";
/** The phases' keys: the counter ids of the second are those the board's rule names. */
const OFF_BOARD = "leaderboard0";
const ON_BOARD = "leaderboard";
const MAX_IN_FLIGHT = 8;

const FLAGS = [
  { key: "boardCounters", flag: "--board-counters", full: 200, quick: 10, min: 2, help: "workload 12: counters, on no board and then on a board" },
  { key: "boardIncrements", flag: "--board-increments", full: 2000, quick: 50, min: 1, help: "workload 12: increments per phase, spread over the counters" },
  { key: "boardRate", flag: "--board-rate", full: 40, quick: 20, min: 1, help: "workload 12: increments per second" },
] as const;

export interface LeaderboardResult {
  phases: PhaseResult[];
  /** rollupBoard's row of the cost tables: its "rollup ops" lines, named by the board, per the on-board phase's increments. */
  boardCost: CostPhase;
  /** From each entry write that moved a total to the first summary that held it, ms. */
  lagMs: { p50: number | null; p99: number | null; max: number | null; writes: number; uncovered: number };
  /** The most writes one document of the board took in any second: the summary, and any entry. */
  maxWritesPerSecond: { summary: number; entry: number };
  summaryWrites: number;
  buckets: number;
  reads: RankReads;
}

export const leaderboard: Workload<LeaderboardResult> = {
  id: "leaderboard",
  flags: FLAGS,
  stages: ["emulator"],
  async run(ctx, on) {
    const { boardCounters: count, boardIncrements: total, boardRate: rate } = sizes(ctx.options, FLAGS);
    const delivery = deliveryOf(on);
    return await step(`workload 12, leaderboards: ${total} increments at ${rate}/s over ${count} counters, on no board, then on board ${BENCH_BOARD}`, async () => {
      const load = async (key: string, label: string, board?: BoardWatch) => {
        const counters = await delivery.createCounters(key, "ours", count, IDLE_SHARDS);
        const random = seededRandom(12);
        const run = await delivery.run(label, counters, async (increment) => ({
          writes: await paced(total, rate, MAX_IN_FLIGHT, () => increment(counters[Math.floor(random() * random() * count)]!)),
        }));
        await board?.settled(ctx.intervalMs);
        return { run, counters };
      };
      const off = await load(OFF_BOARD, "12 leaderboard, on no board");
      const watch = watchBoard(ctx.db, BENCH_BOARD);
      let on: Awaited<ReturnType<typeof load>>;
      try {
        on = await load(ON_BOARD, "12 leaderboard, on a board", watch);
      } finally {
        watch.stop();
      }
      const seen = watch.result();
      const reads = await rankReads(ctx.app, ctx.db, on.counters.map((c) => c.id));
      return {
        phases: [off.run.result, on.run.result],
        boardCost: { workload: "12 leaderboard, the board's rollup", rollup: "ours", delivery: "emulator", opsPrefix: BENCH_BOARD, increments: on.run.result.increments, deliveries: null, parentWrites: seen.summaryWrites },
        lagMs: seen.lagMs,
        maxWritesPerSecond: seen.maxWritesPerSecond,
        summaryWrites: seen.summaryWrites,
        buckets: seen.buckets,
        reads,
      };
    });
  },
  phases: (r) => r.phases,
  costPhases: (r) => [...r.phases, r.boardCost],
  section: (r) => section(r),
  targets: (r, judge) => targets(r, judge.intervalMs),
  failures: (r) => (r.reads.wrong.length === 0 ? [] : [`workload 12: ranks that are not the rank counted from the totals: ${r.reads.wrong.slice(0, 5).join(", ")}`]),
};

const count = (value: number | null) => (value === null ? "–" : int(value));

function section(r: LeaderboardResult): string[] {
  const { reads } = r;
  return [
    "### Leaderboards (workload 12)",
    "",
    `Board \`${BENCH_BOARD}\`: ${reads.counters} counters, ${r.buckets} bucket(s) after the run, ${r.summaryWrites} summary writes. ` +
      `Rank lag (an entry write to the first summary that holds it): p50 ${ms(r.lagMs.p50)} ms, p99 ${ms(r.lagMs.p99)} ms, max ${ms(r.lagMs.max)} ms over ${int(r.lagMs.writes)} entry writes` +
      `${r.lagMs.uncovered > 0 ? ` (${r.lagMs.uncovered} in no summary)` : ""}. ` +
      `Most writes of one board document in a second: the summary ${r.maxWritesPerSecond.summary}, an entry ${r.maxWritesPerSecond.entry}.`,
    "",
    "What one look at a rank reads, for every counter of the board, against a `count()` of every counter above it (billed 1 read per 1,000 index entries, at least 1):",
    "",
    markdownTable(
      ["", "documents", "index entries counted (p50 / max)", "reads billed (p50 / max)"],
      [
        ["ours: the counter, the summary, one count() in its bucket", "2", `${count(reads.ours.entries.p50)} / ${count(reads.ours.entries.max)}`, `${fixed(reads.ours.billed.p50, 0)} / ${fixed(reads.ours.billed.max, 0)}`],
        ["count() of every counter above", "0", `${count(reads.countAbove.entries.p50)} / ${count(reads.countAbove.entries.max)}`, `${fixed(reads.countAbove.billed.p50, 0)} / ${fixed(reads.countAbove.billed.max, 0)}`],
      ],
      1,
    ),
    "",
    "By arithmetic, for a counter in the middle of a board (buckets of at most 1,000 counters):",
    "",
    markdownTable(
      ["counters on the board", "ours: reads per look", "count() of every counter above: reads per look"],
      [10_000, 100_000, 1_000_000].map((n) => [int(n), "3", int(Math.max(1, Math.ceil(n / 2 / 1000)))]),
      1,
    ),
    `All ${reads.counters} ranks read equal the ranks counted from the totals${reads.wrong.length === 0 ? "" : `, but ${reads.wrong.length}`}.`,
  ];
}

function targets(r: LeaderboardResult, intervalMs: number): Target[] {
  return [
    {
      target: "workload 12: a rank reads 2 documents and at most one page of index entries (≤ 3 reads billed)",
      measured: `max ${fixed(r.reads.ours.billed.max, 0)} reads`,
      met: (r.reads.ours.billed.max ?? Infinity) <= 3,
    },
    {
      target: `workload 12: no document of a board takes more than 2 writes in a second (interval ${intervalMs} ms)`,
      measured: `summary ${r.maxWritesPerSecond.summary}/s, entry ${r.maxWritesPerSecond.entry}/s`,
      met: r.maxWritesPerSecond.summary <= Math.max(2, Math.ceil(2000 / intervalMs)) && r.maxWritesPerSecond.entry <= Math.max(2, Math.ceil(2000 / intervalMs)),
    },
    {
      target: "workload 12: every entry write is in a summary",
      measured: `${int(r.lagMs.writes - r.lagMs.uncovered)} of ${int(r.lagMs.writes)}`,
      met: r.lagMs.uncovered === 0,
    },
    {
      // Under the emulator's delivery the lag is its queue's (targets.ts): reported, not judged.
      target: `workload 12: a rank's lag p99 ≤ 2 intervals + 1 s = ${int(2 * intervalMs + 1000)} ms, emulator delivery`,
      measured: `p50 ${ms(r.lagMs.p50)} ms, p99 ${ms(r.lagMs.p99)} ms`,
      met: null,
    },
  ];
}
