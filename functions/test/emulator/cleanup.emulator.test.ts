// Deleting a counter whose idempotency records and members outlast deleteCounter's budget: the call
// returns, the rest is handed on round by round (counters/cleanup.ts), the id stays refused until nothing
// from before is left, and a stranded cleanup is resumed by the sweep. The rounds are run here by hand,
// as the trigger cleanupDeletedCounter would run them (the wrapped tier's project has no triggers); the
// same at a size that outlasts the callable's timeout, with the real trigger, is in
// test/e2e/delete-at-scale.e2e.test.ts.
import { FieldValue } from "firebase-admin/firestore";
import { ADMIN, call, db, documentsUnder, functions, httpsErrorOf, newCounter } from "../helpers/functions";
import { requireEmulators } from "../helpers/emulators";
import { cleanupRound, resumeStrandedCleanups, roundOf } from "../../src/counters/cleanup";
import { cleanupRef, memberRef, requestRef, shardRef } from "../../src/counters/paths";
import { deleteCounter as deleteStore } from "../../src/counters/store";

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
    await expect(deleteStore(db, counterId, { cleanupBudgetMs: 0 })).resolves.toEqual({ counterId });
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
    await deleteStore(db, counterId, { cleanupBudgetMs: 0 });
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

describe("the sweep resumes a cleanup that lost its runner", () => {
  it("hands a marker unchanged for longer than any round on to a new round, and leaves live ones alone", async () => {
    const counterId = await newCounter("del-stranded", 1);
    await seed(counterId, 50, 10);
    // A deleteCounter whose instance died right after its transaction: marker at round 0, no handoff.
    await deleteStore(db, counterId, { cleanupBudgetMs: 0 });
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
