// The document counters' model check (docs/documents.md, "Why it is exact"): the real trigger decisions,
// apply and backfill code (functions/src/documents/), and the real rollup of the counters' totals (the
// trigger's own, of the shard write it committed, and rollupTotal's), over an in-memory Firestore and a simulated clock, by
// seeded random schedules of app writes, duplicated, late, reordered and retried events, crashes, racing
// and resumed backfills, reshards and deletions, documents that move between counters named by a field
// (`{=author}`), ending with every document deleted
// (test/helpers/model/documents-schedule.ts).
//   DOCUMENTS_MODEL_SCHEDULES=<n> runs more (default 1000) from DOCUMENTS_MODEL_FIRST_SEED (default 1);
//   DOCUMENTS_MODEL_SEED=<seed> npx jest functions/test/documents-model.test.ts replays one and prints its trace.
import * as match from "../src/documents/match";
import * as records from "../src/documents/records";
import * as recount from "../src/documents/recount";
import { logger } from "../../test/helpers/logger";
import { runDocumentSchedule, type ScheduleResult } from "../../test/helpers/model/documents-schedule";
import { DocumentsWorld } from "../../test/helpers/model/documents-world";

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
  it(single === undefined ? `end exact over ${count} schedules, before a final backfill and after it, a second backfill changing nothing, no deleted counter back by itself, every counter 0 once every document is deleted` : `replays seed ${single}`, async () => {
    const seeds = single === undefined ? Array.from({ length: count }, (_, i) => first + i) : [single];
    const failed: ScheduleResult[] = [];
    const totals = { deliveries: 0, crashes: 0, backfillRuns: 0, backfillResumes: 0, predeployed: 0, deleted: 0, countedCommits: 0, moves: 0, shardDeliveries: 0, swept: 0, checkedBeforeBackfill: 0 };
    for (const seed of seeds) {
      const result = await runDocumentSchedule(seed);
      totals.deliveries += result.deliveries;
      totals.crashes += result.crashes;
      totals.backfillRuns += result.backfillRuns;
      totals.backfillResumes += result.backfillResumes;
      totals.countedCommits += result.countedCommits;
      totals.moves += result.moves;
      totals.shardDeliveries += result.shardDeliveries;
      if (result.sweptClaims > 0) totals.swept++;
      totals.checkedBeforeBackfill += result.checkedBeforeBackfill;
      if (result.shape.predeploy > 0) totals.predeployed++;
      if (result.shape.deletes > 0) totals.deleted++;
      if (result.failures.length > 0) failed.push(result);
      if (single !== undefined) console.log(result.trace.join("\n"));
    }
    console.log(
      `${seeds.length} schedules (first seed ${seeds[0]}): ${totals.deliveries} deliveries, ${totals.crashes} failed invocations retried, ` +
        `${totals.backfillRuns} backfills (${totals.backfillResumes} resumed after a crash), ${totals.predeployed} with documents from before the triggers, ` +
        `${totals.deleted} with deleteCounter; ${totals.countedCommits} commits of a count (counters kept by recount), ${totals.moves} moves to records ended, ` +
        `rollupTotal had ${totals.shardDeliveries} deliveries; ` +
        `${totals.swept} schedules left a promise to the sweep; ${totals.checkedBeforeBackfill} counters with older documents or a deletion checked exact before the final backfill; ${failed.length} failed` +
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
    const killed = await firstFailingWith(spy, (result) => result.failures.length > 0);
    expect(killed).toBeDefined();
    console.log(`without the versions, seed ${killed!.shape.seed} fails: ${killed!.failures.slice(0, 2).join("; ")}`);
  });

  // The deletion's time covers only what counts something: an event that counts nothing, at a version at or
  // before the deletion's time (the delete of a document written before the deleteCounter), must still take
  // out what a backfill counted again after the deletion.
  it("fails when the deletion's time covers events that count nothing (a document counted again by the backfill never leaves)", async () => {
    const original = records.planObservations;
    const spy = jest.spyOn(records, "planObservations").mockImplementation((read, observations, source) => {
      const since = source === "backfill" ? null : read.counter.exists ? read.counter.since : read.counter.deletedAt;
      const old = (o: records.Observation) => since !== null && o.counted === 0 && o.version <= since;
      const plan = original(read, observations.filter((o) => !old(o)), source);
      return { ...plan, covered: plan.covered + observations.filter(old).length };
    });
    const killed = await firstFailingWith(spy, (result) => result.failures.some((f) => f.includes("after every document was deleted") || f.includes("before the final backfill")));
    expect(killed).toBeDefined();
    console.log(`with every event before the deletion covered, seed ${killed!.shape.seed} fails: ${killed!.failures.slice(0, 2).join("; ")}`);
  });

  // The deletion's time is needed: without it, a late event of a write from before a deleteCounter creates
  // the counter again by itself (kept by records, through its record; kept by recount, by creating it).
  it("fails without the deletion's time (events from before a deleteCounter counting again)", async () => {
    const spy = jest.spyOn(DocumentsWorld.prototype, "read");
    const original = spy.getMockImplementation() ?? ((): never => { throw new Error("no read"); });
    spy.mockImplementation(async function (this: DocumentsWorld, counterId, documents) {
      const read = await original.call(this, counterId, documents);
      const counter = read.counter.exists ? { ...read.counter, since: null } : { ...read.counter, deletedAt: null };
      return { ...read, counter };
    });
    const killed = await firstFailingWith(spy, (result) => result.failures.some((f) => f.includes("came back")));
    expect(killed).toBeDefined();
    console.log(`without the deletion's time, seed ${killed!.shape.seed} fails: ${killed!.failures.filter((f) => f.includes("came back")).join("; ")}`);
  });

  // Both ways give the same total for the same documents: a count's query must filter as the records match.
  // A query that drops a condition on null (as if a missing field were null) counts documents the records do
  // not, and the check of every commit against the documents must see it.
  it("fails when a recount's query drops a condition on null (a missing field taken for null)", async () => {
    const original = recount.recountQueryFor;
    const spy = jest.spyOn(recount, "recountQueryFor").mockImplementation((rules, counterId) => {
      const query = original(rules, counterId);
      return query === null ? null : { ...query, filters: query.filters.filter((f) => f.value !== null) };
    });
    const killed = await firstFailingWith(spy, (result) => result.failures.some((f) => f.includes("the documents counted")));
    expect(killed).toBeDefined();
    console.log(`with a condition on null dropped from the query, seed ${killed!.shape.seed} fails: ${killed!.failures.find((f) => f.includes("the documents counted"))}`);
  });

  // A counter id from a field (`{=author}`): a document whose field changes leaves the counter it named and enters
  // the one it names. A trigger that only counts it into the new one leaves it in the old one too.
  it("fails when a document whose field names its counter stays in the counter it left", async () => {
    const original = match.changesOf;
    const spy = jest.spyOn(match, "changesOf").mockImplementation((rule, path, before, after) => {
      const changed = original(rule, path, before, after);
      if (changed === null || rule.idField === null) return changed;
      const to = match.counterOf(rule, path, after);
      return { ...changed, changes: changed.changes.filter((c) => to === null || !("counterId" in to) || c.counterId === to.counterId) };
    });
    const killed = await firstFailingWith(spy, (result) => result.failures.some((f) => f.includes("-comments") || f.includes("-articles")));
    expect(killed).toBeDefined();
    console.log(`with a changed field leaving its document in the counter it left, seed ${killed!.shape.seed} fails: ${killed!.failures[0]}`);
  });

  it("fails when an author's count drops the filter on the field that names the counter (every author's documents counted)", async () => {
    const original = recount.recountQueryFor;
    const spy = jest.spyOn(recount, "recountQueryFor").mockImplementation((rules, counterId) => {
      const query = original(rules, counterId);
      return query === null ? null : { ...query, filters: query.filters.filter((f) => f.field !== "author") };
    });
    const killed = await firstFailingWith(spy, (result) => result.failures.some((f) => f.includes("the documents counted")));
    expect(killed).toBeDefined();
    console.log(`without the field's filter, seed ${killed!.shape.seed} fails: ${killed!.failures.find((f) => f.includes("the documents counted"))}`);
  });
});

/** firstFailing under a mutant (`spy`), which is restored whatever happens. */
async function firstFailingWith(spy: { mockRestore(): void }, fails: (result: ScheduleResult) => boolean): Promise<ScheduleResult | undefined> {
  try {
    return await firstFailing(fails);
  } finally {
    spy.mockRestore();
  }
}

/** The first schedule (from the first seed, within the count) whose result `fails` says is caught. */
async function firstFailing(fails: (result: ScheduleResult) => boolean): Promise<ScheduleResult | undefined> {
  for (let seed = first; seed < first + count; seed++) {
    const result = await runDocumentSchedule(seed);
    if (fails(result)) return result;
  }
  return undefined;
}
