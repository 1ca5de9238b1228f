// Deleting a counter whose idempotency records and members outlast deleteCounter's budget: the call
// returns, the rest is handed on round by round (counters/deletion.ts), the id stays refused until nothing
// from before is left, and a stranded cleanup is resumed by the sweep. The rounds are run here by hand,
// as the trigger cleanupDeletedCounter would run them (the wrapped tier's project has no triggers); the
// same at a size that outlasts the callable's timeout, with the real trigger, is in
// functions/test/delete-at-scale-e2e.emulator.test.ts.
import { FieldValue } from "firebase-admin/firestore";
import { ADMIN, call, db, documentsUnder, functions, httpsErrorOf, newCounter } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { cleanUp, cleanupRound, resumeStrandedCleanups, roundOf } from "../src/counters/deletion";
import { cleanupRef, MEMBERS, memberRef, REQUESTS, requestRef, shardRef } from "../src/model/paths";
import { deleteParentAndShards } from "../src/counters/delete";

const { createCounter, incrementCounter } = functions;
const clock = { nowMs: Date.now };

beforeAll(requireEmulators);
jest.setTimeout(120_000);

/** Writes `records` idempotency records and `members` member documents, as past calls would have. */
async function seed(counterId: string, records: number, members: number): Promise<void> {
  const writer = db.bulkWriter({ throttling: false });
  for (let n = 0; n < records; n++) void writer.create(requestRef(db, counterId, `old-${n}`), { shard: 0, delta: 1 });
  for (let n = 0; n < members; n++) void writer.create(memberRef(db, counterId, `uid-${n}`), {});
  void writer.update(shardRef(db, counterId, 0), { count: FieldValue.increment(records) });
  await writer.close();
}

async function markerRound(counterId: string): Promise<number | undefined> {
  const marker = await cleanupRef(db, counterId).get();
  return marker.exists ? roundOf(marker) : undefined;
}

describe("deleteCounter beyond its budget", () => {
  it("answers at once, hands the rest to rounds, refuses the id until they finish, and leaves nothing from before", async () => {
    const counterId = await newCounter("del-handoff", 2);
    await seed(counterId, 1_500, 700);

    // No budget at all: the call deletes the counter and hands every leftover on.
    await expect(deleteParentAndShards(db, counterId, { cleanupBudgetMs: 0 })).resolves.toEqual({ counterId });
    expect(await markerRound(counterId)).toBe(1);
    const refused = await httpsErrorOf(call(createCounter, { counterId }));
    expect(refused.code).toBe("failed-precondition");
    expect(refused.message).toMatch(/is still being deleted/);
    expect((await httpsErrorOf(call(incrementCounter, { counterId, requestId: "old-1" }))).code).toBe("not-found");

    // Rounds with a small budget, as the trigger runs them: each hands on to the next until done.
    let round = 1;
    let rounds = 0;
    for (;;) {
      const result = await cleanupRound(db, counterId, round, 150, clock);
      expect(result.stale).toBe(false);
      rounds++;
      if (result.done) break;
      expect(await markerRound(counterId)).toBe(round + 1);
      // The same event delivered again (or late) finds the marker at the next round: it does nothing.
      await expect(cleanupRound(db, counterId, round, 150, clock)).resolves.toMatchObject({ stale: true, removed: 0 });
      round++;
    }
    expect(rounds).toBeGreaterThan(1);
    expect(await documentsUnder(counterId)).toEqual([]);

    // Created again: no record and no member from before counts.
    await call(createCounter, { counterId, numShards: 2 });
    await expect(call(incrementCounter, { counterId, requestId: "old-1" })).resolves.toMatchObject({ applied: true });
  });

  it("finishes within the call when the budget is enough, without waking the trigger", async () => {
    const counterId = await newCounter("del-inline", 2);
    await seed(counterId, 900, 0);
    await expect(call(functions.deleteCounter, { counterId }, ADMIN)).resolves.toEqual({ counterId });
    expect(await documentsUnder(counterId)).toEqual([]); // the marker too: no round was handed on
  });

  it("while a handed-off cleanup runs, deleteCounter answers not-found and createCounter failed-precondition, touching nothing", async () => {
    const counterId = await newCounter("del-again", 1);
    await seed(counterId, 900, 5);
    await deleteParentAndShards(db, counterId, { cleanupBudgetMs: 0 });
    expect(await markerRound(counterId)).toBe(1);
    const before = await cleanupRef(db, counterId).get();
    const leftovers = (await documentsUnder(counterId)).length;

    // The counter is gone: there is nothing to delete, whatever its cleanup still has to do.
    const again = await httpsErrorOf(call(functions.deleteCounter, { counterId }, ADMIN));
    expect(again.code).toBe("not-found");
    expect(again.message).toMatch(/still cleaning up/);
    const refused = await httpsErrorOf(call(createCounter, { counterId }, ADMIN));
    expect(refused.code).toBe("failed-precondition");
    expect(refused.message).toMatch(/is still being deleted/);
    // Neither call removed a document or moved the marker: the round handed on is the only runner.
    expect((await cleanupRef(db, counterId).get()).updateTime!.isEqual(before.updateTime!)).toBe(true);
    expect((await documentsUnder(counterId)).length).toBe(leftovers);

    await expect(cleanupRound(db, counterId, 1, 20_000, clock)).resolves.toMatchObject({ done: true, stale: false });
    expect(await documentsUnder(counterId)).toEqual([]);
    await expect(call(functions.deleteCounter, { counterId }, ADMIN)).rejects.toMatchObject({ code: "not-found" });
  });
});

/**
 * A clock for a deadline of 1: its first `looks` readings are 0, then 1. A cleanup reads it before each
 * page, so it stops after a known number of pages, whatever the machine's speed.
 */
function pastDeadlineAfter(looks: number) {
  let read = 0;
  return { nowMs: () => (read++ < looks ? 0 : 1) };
}

/** Records the pages cleanups list: where each started, and what it held. */
function pageLog() {
  const pages: { from: Partial<Record<string, string>>; ids: { collection: string; id: string }[] }[] = [];
  return { pages, onPage: (page: (typeof pages)[number]) => void pages.push(page) };
}

/**
 * Every page starts where the one before it ended (per collection: after the last id deleted so far, or
 * from the start), across rounds and runs, and together they list every document once.
 */
function expectContiguous(pages: ReturnType<typeof pageLog>["pages"], seeded: string[]): void {
  const reached: Partial<Record<string, string>> = {};
  const listed: string[] = [];
  for (const page of pages) {
    expect(page.from).toEqual(reached);
    for (const { collection, id } of page.ids) {
      reached[collection] = id;
      listed.push(`${collection}/${id}`);
    }
  }
  expect(listed.sort()).toEqual([...seeded].sort());
}

function seededPaths(records: number, members: number): string[] {
  return [
    ...Array.from({ length: records }, (_, n) => `${REQUESTS}/old-${n}`),
    ...Array.from({ length: members }, (_, n) => `${MEMBERS}/uid-${n}`),
  ];
}

describe("a cleanup resumes from the cursor in its marker", () => {
  it("a round cut off mid-way leaves its cursor in the marker; the next round starts there, and no page starts from the head", async () => {
    const counterId = await newCounter("del-cursor", 2);
    await seed(counterId, 1_500, 700);
    await deleteParentAndShards(db, counterId, { cleanupBudgetMs: 0 });
    const log = pageLog();
    let round = 1;
    for (;;) {
      const result = await cleanupRound(db, counterId, round, 150, clock, { onPage: log.onPage });
      if (result.done) break;
      // Cut off: the marker holds, per collection, the last id deleted, and how many are gone so far.
      const marker = await cleanupRef(db, counterId).get();
      const last = log.pages[log.pages.length - 1]!.ids;
      const lastOf = (collection: string) => last.filter((d) => d.collection === collection).pop()?.id;
      if (lastOf(MEMBERS) !== undefined) expect(marker.get(`cursors.${MEMBERS}`)).toBe(lastOf(MEMBERS));
      if (lastOf(REQUESTS) !== undefined) expect(marker.get(`cursors.${REQUESTS}`)).toBe(lastOf(REQUESTS));
      expect(marker.get("removed")).toBe(log.pages.reduce((n, p) => n + p.ids.length, 0));
      round++;
    }
    expect(round).toBeGreaterThan(1);
    expectContiguous(log.pages.filter((p) => p.ids.length > 0), seededPaths(1_500, 700));
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("the next round lists after the cursor, not from the head: a document put behind the cursor is never listed again", async () => {
    const counterId = await newCounter("del-behind", 1);
    await seed(counterId, 0, 900);
    await deleteParentAndShards(db, counterId, { cleanupBudgetMs: 0 });
    // One page: the round reads the clock at its start and at its first look, then it is past the deadline.
    await expect(cleanupRound(db, counterId, 1, 1, pastDeadlineAfter(2))).resolves.toMatchObject({ done: false, removed: 400 });
    // Nothing can write here while the marker exists (counters/deletion.ts); this test does, to see where pages start.
    await memberRef(db, counterId, "aaa-behind").create({});
    const log = pageLog();
    await expect(cleanupRound(db, counterId, 2, 30_000, clock, { onPage: log.onPage })).resolves.toMatchObject({ done: true, removed: 500 });
    expect(log.pages.flatMap((p) => p.ids.map((d) => d.id))).not.toContain("aaa-behind");
    expect(await documentsUnder(counterId)).toEqual([`counters/${counterId}/${MEMBERS}/aaa-behind`]);
    await memberRef(db, counterId, "aaa-behind").delete();
  });

  it("a run that died without handing off is resumed by the sweep from the cursor it left", async () => {
    const counterId = await newCounter("del-cursor-resume", 1);
    await seed(counterId, 2_000, 0);
    await deleteParentAndShards(db, counterId, { cleanupBudgetMs: 0 });
    await cleanupRef(db, counterId).update({ round: 0 }); // round 0's runner, still to hand off
    const log = pageLog();
    // Round 0 gets one page done (its first look), then its instance is lost: no handoff.
    const cut = await cleanUp(db, counterId, 1, pastDeadlineAfter(1), { onPage: log.onPage });
    expect(cut).toMatchObject({ done: false, removed: 400 });
    expect(await markerRound(counterId)).toBe(0);

    const resumed = await resumeStrandedCleanups(db, { nowMs: () => Date.now() + 3_600_000 }, 60_000);
    expect(resumed.resumed).toBeGreaterThanOrEqual(1);
    await expect(cleanupRound(db, counterId, 1, 30_000, clock, { onPage: log.onPage })).resolves.toMatchObject({ done: true, removed: 1_600 });
    expectContiguous(log.pages.filter((p) => p.ids.length > 0), seededPaths(2_000, 0));
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("overlapping cleanups delete each page once: one waits for the cursor the other moved", async () => {
    const counterId = await newCounter("del-overlap", 1);
    await seed(counterId, 2_400, 300);
    await deleteParentAndShards(db, counterId, { cleanupBudgetMs: 0 });
    const both = await Promise.all([cleanUp(db, counterId, Date.now() + 60_000, clock), cleanUp(db, counterId, Date.now() + 60_000, clock)]);
    expect(both.every((p) => p.done)).toBe(true);
    expect(both[0].removed + both[1].removed).toBe(2_700);
    expect(await documentsUnder(counterId)).toEqual([]);
  });
});

describe("the sweep resumes a cleanup that lost its runner", () => {
  it("hands a marker unchanged for longer than any round on to a new round, and leaves live ones alone", async () => {
    const counterId = await newCounter("del-stranded", 1);
    await seed(counterId, 50, 10);
    // A deleteCounter whose instance died right after its transaction: marker at round 0, no handoff.
    await deleteParentAndShards(db, counterId, { cleanupBudgetMs: 0 });
    await cleanupRef(db, counterId).update({ round: 0 }); // as if round 0 never handed off
    await resumeStrandedCleanups(db, clock, 60 * 60_000); // a live one (changed just now): left alone
    expect(await markerRound(counterId)).toBe(0);

    const report = await resumeStrandedCleanups(db, { nowMs: () => Date.now() + 60 * 60_000 }, 60_000);
    expect(report.resumed).toBeGreaterThanOrEqual(1);
    expect(await markerRound(counterId)).toBe(1);
    await expect(cleanupRound(db, counterId, 1, 10_000, clock)).resolves.toMatchObject({ done: true });
    expect(await documentsUnder(counterId)).toEqual([]);
  });
});
