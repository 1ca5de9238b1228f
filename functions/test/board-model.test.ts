// The leaderboards' model check (docs/leaderboards.md, "Why it is exact"): the real rollup code, over the
// counters of a board and over the board's summary (test/helpers/model/board-schedule.ts), under seeded random
// schedules of increments, resets, deletes and creations again, reshards and growth, with events delayed,
// reordered, duplicated and crashed at every stage; every rank, read as rankOf reads it, must equal the rank
// counted from the totals. Three named mutants, each breaking one rule the argument rests on, must be caught.
//   npm test runs BOARD_MODEL_SCHEDULES (default 500) seeds; BOARD_MODEL_SEED=<seed> replays one with its trace.
import { logger } from "../../test/helpers/logger";
import { runBoardSchedule, type BoardRunOptions, type BoardScheduleResult } from "../../test/helpers/model/board-schedule";

const single = process.env.BOARD_MODEL_SEED === undefined ? undefined : Number(process.env.BOARD_MODEL_SEED);
const count = Number(process.env.BOARD_MODEL_SCHEDULES ?? 500);

jest.setTimeout(600_000);

beforeAll(() => {
  for (const level of ["debug", "info", "warn", "error"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
});

afterAll(() => jest.restoreAllMocks());

function report(result: BoardScheduleResult, lines: number): string {
  return [
    `seed ${result.shape.seed} failed: ${result.failures.slice(0, 10).join("; ")}`,
    `schedule: ${JSON.stringify(result.shape)}`,
    `replay: BOARD_MODEL_SEED=${result.shape.seed} npx jest functions/test/board-model.test.ts`,
    `trace (last ${lines} lines):`,
    ...result.trace.slice(-lines),
  ].join("\n");
}

describe("leaderboards under random schedules (model check)", () => {
  it(single === undefined ? `keeps every rank exact over ${count} schedules` : `replays seed ${single}`, async () => {
    const seeds = single === undefined ? Array.from({ length: count }, (_, i) => i + 1) : [single];
    const failed: BoardScheduleResult[] = [];
    const totals = { counter: 0, board: 0, crashes: 0, commits: 0, split: 0, grew: 0 };
    for (const seed of seeds) {
      const result = await runBoardSchedule(seed);
      totals.counter += result.deliveries.counter;
      totals.board += result.deliveries.board;
      totals.crashes += result.crashes;
      totals.commits += result.summaryCommits;
      if (result.buckets > 1) totals.split++;
      if (result.growths > 0) totals.grew++;
      if (result.failures.length > 0) failed.push(result);
      if (single !== undefined) console.log(result.trace.join("\n"));
    }
    console.log(
      `${seeds.length} board schedules: ${totals.counter} counter deliveries, ${totals.board} board deliveries, ${totals.crashes} crashed; ` +
        `${totals.commits} summary writes; ${totals.split} boards ended with several buckets, ${totals.grew} with a counter that grew; ${failed.length} failed` +
        (failed.length > 0 ? `: seeds ${failed.map((f) => f.shape.seed).slice(0, 50).join(", ")}` : ""),
    );
    if (failed.length > 0) throw new Error(report(failed[0]!, single === undefined ? 80 : 0));
    if (single === undefined) {
      // The schedules reach what they are for: boards that split, counters that grow.
      expect(totals.split).toBeGreaterThan(count / 4);
      expect(totals.grew).toBeGreaterThan(0);
    }
  });
});

/** The first seed (of the default range) whose schedule a mutant fails, or null. */
async function firstCaught(options: BoardRunOptions): Promise<number | null> {
  for (let seed = 1; seed <= count; seed++) {
    if ((await runBoardSchedule(seed, options)).failures.length > 0) return seed;
  }
  return null;
}

describe("named mutants the board model check must catch", () => {
  it.each([
    ["a rollup commit that does not carry the entry", { worldMutant: "commit-skips-entry" }],
    ["a delete that leaves the counter's entry on the board", { worldMutant: "delete-keeps-entry" }],
    ["a recount whose mark ignores entry writes (a chain ends quietly while totals moved)", { boardMutant: "mark-without-writes" }],
  ] as const)("%s", async (_name, options) => {
    const seed = await firstCaught(options);
    console.log(`caught at seed ${seed}`);
    expect(seed).not.toBeNull();
  });
});
