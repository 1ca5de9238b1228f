// The model check (docs/rollup.md): the real rollup code — decisions, claim, commit, leading edge, the
// sweep, the midnight commit of windowed counters, reconcile's repair and the reset's decision (reset-plan.ts) — driven over an in-memory Firestore and a simulated
// clock by thousands of seeded random schedules.
//   npm test runs MODEL_SCHEDULES (default 2000) seeds from MODEL_FIRST_SEED (default 1);
//   MODEL_SCHEDULES=100000 npx jest functions/test/model.test.ts runs more;
//   MODEL_SEED=<seed> npx jest functions/test/model.test.ts replays one and prints its trace.
import * as plan from "../src/rollup/plan";
import { logger } from "../../test/helpers/logger";
import { runSchedule, type ScheduleResult } from "../../test/helpers/model/schedule";

const single = process.env.MODEL_SEED === undefined ? undefined : Number(process.env.MODEL_SEED);
const count = Number(process.env.MODEL_SCHEDULES ?? 2000);
const first = Number(process.env.MODEL_FIRST_SEED ?? 1);

jest.setTimeout(600_000);

beforeAll(() => {
  // The rollup logs every invocation; thousands of schedules would drown the output.
  for (const level of ["debug", "info", "warn", "error"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
});

afterAll(() => jest.restoreAllMocks());

function report(result: ScheduleResult, traceLines: number): string {
  const { shape } = result;
  return [
    `seed ${shape.seed} failed: ${result.failures.join("; ")}`,
    `schedule: ${JSON.stringify(shape)}`,
    `replay: MODEL_SEED=${shape.seed} npx jest functions/test/model.test.ts`,
    `trace (last ${traceLines} lines):`,
    ...result.trace.slice(-traceLines),
  ].join("\n");
}

describe("the rollup under random schedules (model check)", () => {
  it(single === undefined ? `keeps every write covered, the total and the windows exact over ${count} schedules, at most two rollup writes per interval` : `replays seed ${single}`, async () => {
    const seeds = single === undefined ? Array.from({ length: count }, (_, i) => first + i) : [single];
    const failed: ScheduleResult[] = [];
    let deliveries = 0;
    let crashes = 0;
    let dropped = 0;
    let grew = 0;
    let growths = 0;
    const commits = { snapshot: 0, summed: 0 };
    const windowed = { counters: 0, crossed: 0, jumped: 0, slowWrites: 0, lateEvents: 0, midnightCommits: 0 };
    const resets: Record<string, number> = {};
    const repairs: Record<string, number> = {};
    for (const seed of seeds) {
      const result = await runSchedule(seed);
      if (result.windowed !== null) {
        windowed.counters++;
        if (result.windowed.crossedMidnight) windowed.crossed++;
        if (result.shape.windowed?.jumpDays != null) windowed.jumped++;
        windowed.slowWrites += result.windowed.slowWrites;
        windowed.lateEvents += result.windowed.lateEvents;
        windowed.midnightCommits += result.windowed.midnightCommits;
      }
      deliveries += result.deliveries;
      crashes += result.crashes;
      dropped += result.dropped;
      growths += result.growths;
      commits.snapshot += result.snapshotCommits;
      commits.summed += result.summedCommits;
      for (const [outcome, n] of Object.entries(result.resets)) resets[outcome] = (resets[outcome] ?? 0) + n;
      for (const [outcome, n] of Object.entries(result.repairs)) repairs[outcome] = (repairs[outcome] ?? 0) + n;
      if (result.growths > 0) grew++;
      if (result.failures.length > 0) failed.push(result);
      if (single !== undefined) console.log(result.trace.join("\n"));
    }
    console.log(`${seeds.length} schedules, ${deliveries} deliveries, ${crashes} crashed, ${dropped} events dropped for good, ${grew} counters grew (${growths} steps); ` +
      `${windowed.counters} windowed (${windowed.crossed} crossed midnight, ${windowed.jumped} jumped days, ${windowed.slowWrites} slow writes, ${windowed.lateEvents} late events, ${windowed.midnightCommits} midnight commits); ` +
      `rollup commits: ${commits.snapshot} of a single-shard snapshot sum, ${commits.summed} of an aggregation; ` +
      `reset writes: ${resets.read ?? 0} covering their read, ${resets.kept ?? 0} after a rollup commit (kept its read time), ${resets.retry ?? 0} read again; ` +
      `reconcile repairs: ${Object.entries(repairs).map(([outcome, n]) => `${n} ${outcome}`).join(", ") || "none"}; ${failed.length} failed` +
      (failed.length > 0 ? `: seeds ${failed.map((f) => f.shape.seed).slice(0, 50).join(", ")}` : ""));
    if (failed.length > 0) throw new Error(report(failed[0]!, single === undefined ? 80 : 0));
  });

  // The guard of the single-shard snapshot sum (rollup/plan.ts, snapshotSumAllowed) is needed: without it, an
  // event of a write older than the parent's last write (a reshard down to one shard, a reset) commits a shard
  // as it was before that write as the sum. The model check must see that, or it would not see the guard go.
  it("fails the single-shard snapshot sum without its guard (a parent written before the write)", async () => {
    const unguarded = (view: plan.ParentView, write: { shardId: string; writtenAtUs: number }) =>
      view.numShards === 1 && write.shardId === "0" && !plan.isCovered(view.coveredUntilUs, write.writtenAtUs);
    const spy = jest.spyOn(plan, "snapshotSumAllowed").mockImplementation(unguarded);
    let killed: ScheduleResult | undefined;
    try {
      for (let seed = first; seed < first + count && killed === undefined; seed++) {
        const result = await runSchedule(seed);
        if (result.failures.length > 0) killed = result;
      }
    } finally {
      spy.mockRestore();
    }
    expect(killed).toBeDefined();
    console.log(`without the guard, seed ${killed!.shape.seed} fails: ${killed!.failures.join("; ")}`);
  });
});
