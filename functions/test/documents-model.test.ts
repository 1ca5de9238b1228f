// The document counters' model check (docs/documents.md, "Why it is exact"): the real trigger decisions,
// apply and backfill code (functions/src/documents/), and the real rollup of the counters' totals (the
// trigger's own, of the shard write it committed, and rollupTotal's), over an in-memory Firestore and a simulated clock, by
// seeded random schedules of app writes, duplicated, late, reordered and retried events, crashes, racing
// and resumed backfills, reshards and deletions (test/helpers/model/documents-schedule.ts).
//   DOCUMENTS_MODEL_SCHEDULES=<n> runs more (default 1000) from DOCUMENTS_MODEL_FIRST_SEED (default 1);
//   DOCUMENTS_MODEL_SEED=<seed> npx jest functions/test/documents-model.test.ts replays one and prints its trace.
import * as records from "../src/model/document-records";
import { logger } from "../../test/helpers/logger";
import { runDocumentSchedule, type ScheduleResult } from "../../test/helpers/model/documents-schedule";

const single = process.env.DOCUMENTS_MODEL_SEED === undefined ? undefined : Number(process.env.DOCUMENTS_MODEL_SEED);
const count = Number(process.env.DOCUMENTS_MODEL_SCHEDULES ?? 1000);
const first = Number(process.env.DOCUMENTS_MODEL_FIRST_SEED ?? 1);

jest.setTimeout(600_000);

beforeAll(() => {
  // The rollup logs every invocation; thousands of schedules would drown the output.
  for (const level of ["debug", "info", "warn", "error"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
});

afterAll(() => jest.restoreAllMocks());

function report(result: ScheduleResult, traceLines: number): string {
  return [
    `seed ${result.shape.seed} failed: ${result.failures.slice(0, 5).join("; ")}`,
    `schedule: ${JSON.stringify(result.shape)}`,
    `replay: DOCUMENTS_MODEL_SEED=${result.shape.seed} npx jest functions/test/documents-model.test.ts`,
    `trace (last ${traceLines} lines):`,
    ...result.trace.slice(-traceLines),
  ].join("\n");
}

describe("document counters under random schedules (model check)", () => {
  it(single === undefined ? `end exact over ${count} schedules, a second backfill changing nothing, no deleted counter back by itself` : `replays seed ${single}`, async () => {
    const seeds = single === undefined ? Array.from({ length: count }, (_, i) => first + i) : [single];
    const failed: ScheduleResult[] = [];
    const totals = { deliveries: 0, crashes: 0, backfillRuns: 0, backfillResumes: 0, predeployed: 0, deleted: 0, inline: 0, inlineCommits: 0, inlineFailures: 0, shardDeliveries: 0, swept: 0 };
    for (const seed of seeds) {
      const result = await runDocumentSchedule(seed);
      totals.deliveries += result.deliveries;
      totals.crashes += result.crashes;
      totals.backfillRuns += result.backfillRuns;
      totals.backfillResumes += result.backfillResumes;
      totals.inline += result.inlineRollups;
      totals.inlineCommits += result.inlineCommits;
      totals.inlineFailures += result.inlineFailures;
      totals.shardDeliveries += result.shardDeliveries;
      if (result.sweptClaims > 0) totals.swept++;
      if (result.shape.predeploy > 0) totals.predeployed++;
      if (result.shape.deletes > 0) totals.deleted++;
      if (result.failures.length > 0) failed.push(result);
      if (single !== undefined) console.log(result.trace.join("\n"));
    }
    console.log(
      `${seeds.length} schedules (first seed ${seeds[0]}): ${totals.deliveries} deliveries, ${totals.crashes} failed invocations retried, ` +
        `${totals.backfillRuns} backfills (${totals.backfillResumes} resumed after a crash), ${totals.predeployed} with documents from before the triggers, ` +
        `${totals.deleted} with deleteCounter; the trigger rolled up its own shard write ${totals.inline} times (${totals.inlineCommits} commits, ` +
        `${totals.inlineFailures} failed and left to rollupTotal), rollupTotal had ${totals.shardDeliveries} deliveries; ` +
        `${totals.swept} schedules left a claim pending for the sweep; ${failed.length} failed` +
        (failed.length > 0 ? `: seeds ${failed.map((f) => f.shape.seed).slice(0, 50).join(", ")}` : ""),
    );
    if (failed.length > 0) throw new Error(report(failed[0]!, single === undefined ? 60 : 0));
  });

  // The versions are needed: a record that any observation replaces (the usual trigger's "apply whatever
  // arrives") lets a late event undo a later change. The model check must see that, or it would not see
  // the versions go.
  it("fails without the versions (every observation replacing its record)", async () => {
    const original = records.planObservations;
    const spy = jest.spyOn(records, "planObservations").mockImplementation((read, observations, source) => {
      const blind = new Map([...read.records].map(([document, record]) => [document, record === null ? null : { ...record, version: "" }]));
      return original({ ...read, records: blind }, observations, source);
    });
    let killed: ScheduleResult | undefined;
    try {
      for (let seed = first; seed < first + count && killed === undefined; seed++) {
        const result = await runDocumentSchedule(seed);
        if (result.failures.length > 0) killed = result;
      }
    } finally {
      spy.mockRestore();
    }
    expect(killed).toBeDefined();
    console.log(`without the versions, seed ${killed!.shape.seed} fails: ${killed!.failures.slice(0, 2).join("; ")}`);
  });

  // The deletion's time is needed: without it, a late event of a write from before a deleteCounter creates
  // the counter again by itself.
  it("fails without the deletion's time (events from before a deleteCounter counting again)", async () => {
    const original = records.planObservations;
    const spy = jest.spyOn(records, "planObservations").mockImplementation((read, observations, source) => {
      const counter = read.counter.exists ? { ...read.counter, since: null } : { ...read.counter, deletedAt: null };
      return original({ ...read, counter }, observations, source);
    });
    let killed: ScheduleResult | undefined;
    try {
      for (let seed = first; seed < first + count && killed === undefined; seed++) {
        const result = await runDocumentSchedule(seed);
        if (result.failures.some((f) => f.includes("came back"))) killed = result;
      }
    } finally {
      spy.mockRestore();
    }
    expect(killed).toBeDefined();
    console.log(`without the deletion's time, seed ${killed!.shape.seed} fails: ${killed!.failures.filter((f) => f.includes("came back")).join("; ")}`);
  });
});
