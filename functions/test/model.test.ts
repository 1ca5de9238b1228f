// The model check (docs/rollup.md): the real rollup code — decisions, claim, commit, leading edge, the
// sweep, the midnight commit of windowed counters, reconcile's repair and the reset's decision (reset-plan.ts) — driven over an in-memory Firestore and a simulated
// clock by thousands of seeded random schedules.
//   npm test runs MODEL_SCHEDULES (default 2000) seeds from MODEL_FIRST_SEED (default 1);
//   MODEL_SCHEDULES=100000 npx jest functions/test/model.test.ts runs more;
//   MODEL_SEED=<seed> npx jest functions/test/model.test.ts replays one and prints its trace.
import * as plan from "../src/rollup/plan";
import * as trail from "../src/rollup/trail";
import { logger } from "../../test/helpers/logger";
import { runSchedule, type RunOptions, type ScheduleResult } from "../../test/helpers/model/schedule";

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
    const outcomes: Record<string, number> = {};
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
      for (const [outcome, n] of Object.entries(result.outcomes)) outcomes[outcome] = (outcomes[outcome] ?? 0) + n;
      if (result.growths > 0) grew++;
      if (result.failures.length > 0) failed.push(result);
      if (single !== undefined) console.log(result.trace.join("\n"));
    }
    console.log(`${seeds.length} schedules, ${deliveries} deliveries, ${crashes} crashed, ${dropped} events dropped for good, ${grew} counters grew (${growths} steps); ` +
      `${windowed.counters} windowed (${windowed.crossed} crossed midnight, ${windowed.jumped} jumped days, ${windowed.slowWrites} slow writes, ${windowed.lateEvents} late events, ${windowed.midnightCommits} midnight commits); ` +
      `rollup commits: ${commits.snapshot} of a single-shard snapshot sum, ${commits.summed} of an aggregation; ` +
      `reset writes: ${resets.read ?? 0} covering their read, ${resets.kept ?? 0} after a rollup commit (kept its read time), ${resets.retry ?? 0} read again; ` +
      `reconcile repairs: ${Object.entries(repairs).map(([outcome, n]) => `${n} ${outcome}`).join(", ") || "none"}; ` +
      `deliveries ended: ${Object.entries(outcomes).sort(([a], [b]) => (a < b ? -1 : 1)).map(([outcome, n]) => `${n} ${outcome}`).join(", ")}; ${failed.length} failed` +
      (failed.length > 0 ? `: seeds ${failed.map((f) => f.shape.seed).slice(0, 50).join(", ")}` : ""));
    if (failed.length > 0) throw new Error(report(failed[0]!, single === undefined ? 80 : 0));
  });

  // Each mutant below breaks one rule the argument rests on (functions/src/rollup/plan.ts); the model check must
  // see it, or it would not see that rule go. Each runs the seeds until one fails.
  async function firstFailure(options: RunOptions = {}): Promise<ScheduleResult | undefined> {
    for (let seed = first; seed < first + count; seed++) {
      const result = await runSchedule(seed, options);
      if (result.failures.length > 0) return result;
    }
    return undefined;
  }

  function expectCaught(name: string, killed: ScheduleResult | undefined): void {
    expect(killed).toBeDefined();
    console.log(`${name}: seed ${killed!.shape.seed} fails: ${killed!.failures.join("; ").slice(0, 300)}`);
  }

  it("fails a reset that drops the promise instead of keeping it", async () => {
    expectCaught("a reset that drops the promise", await firstFailure({ mutant: "reset-drops-promise" }));
  });

  it("fails a reshard that drops the promise instead of keeping it", async () => {
    expectCaught("a reshard that drops the promise", await firstFailure({ mutant: "reshard-drops-promise" }));
  });

  it("fails a commit without its precondition on the parent's version", async () => {
    expectCaught("a commit without its precondition", await firstFailure({ mutant: "no-precondition" }));
  });

  it("fails an event that defers to a promise due before its write", async () => {
    // Deferring to any pending promise, whatever its due time: the owner's sum may be read before the write.
    const pastDue = (decision: plan.Decision, promise: plan.Trailing | null | undefined, nowMs: number, staleAfterMs: number): plan.Decision =>
      (decision.kind === "start" || decision.kind === "lead") && promise != null && nowMs < promise.dueMs + staleAfterMs ? { kind: "defer", toDueMs: promise.dueMs } : decision;
    const decide = plan.decide;
    const spy = jest.spyOn(plan, "decide").mockImplementation((write, view, timing) => pastDue(decide(write, view, timing), view.trailing, timing.nowMs, timing.staleAfterMs));
    try {
      expectCaught("an event deferring past the promise", await firstFailure());
    } finally {
      spy.mockRestore();
    }
  });

  it("fails a chain that ends without summing again for the writes that deferred to it", async () => {
    const spy = jest.spyOn(trail, "carryChain").mockImplementation(() => Promise.resolve({ commits: 0, last: null, end: "quiet" }));
    try {
      expectCaught("a chain that ends without checking for changes", await firstFailure());
    } finally {
      spy.mockRestore();
    }
  });

  it("fails an instance that defers from its memo to a promise of a counter deleted and created again since", async () => {
    // decideFromMemo without its guard (plan.ts, sameIncarnation): any remembered promise due at or after the write.
    const spy = jest.spyOn(plan, "decideFromMemo").mockImplementation((write, memo, timing) => {
      const promise = plan.plausibleTrailing(memo.view.trailing, timing.nowMs);
      if (!write.countChanged) return { kind: "skip", reason: "unchanged" };
      if (!memo.view.parentExists || promise?.owner === write.ownerKey) return null;
      if (plan.isCovered(memo.view.coveredUntilUs, write.writtenAtUs)) return { kind: "skip", reason: "covered" };
      if (plan.deferrable(promise, write) && timing.nowMs < promise.dueMs + timing.staleAfterMs) return { kind: "defer", toDueMs: promise.dueMs };
      return null;
    });
    try {
      expectCaught("a memo that decides across incarnations", await firstFailure());
    } finally {
      spy.mockRestore();
    }
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
