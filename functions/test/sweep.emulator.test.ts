// The sweep (rollup/sweep.ts, run by the scheduled rollupSweep) against the real Firestore emulator: the
// emulator never fires schedules, so the tests call the handler. A promise whose owner failed and whose
// event the platform gave up on is fulfilled; a promise still in its time is left to its owner; a chain
// that ended quietly costs one sum and no write; and a claim the previous version left in its lease (an
// upgrade) is finished, its deferred writes reaching the total. Nothing of an app's own is touched.
import { FieldValue, Timestamp } from "firebase-admin/firestore";
import { db, functions, newCounter, readCounter, writeShard } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { INTERVAL_MS, rollupDeps, shardWriteOf } from "../../test/helpers/rollup";
import { counterRef, leaseRef, sweepMarkRef } from "../src/model/paths";
import { rollupShardWrite } from "../src/rollup/index";
import { ownerKeyOf, staleAfterMsFor } from "../src/rollup/plan";
import { sweepRollups } from "../src/rollup/sweep";
import { type RollupDeps } from "../src/rollup/types";

jest.setTimeout(60_000);

beforeAll(requireEmulators);

// Other files' counters keep their promises in the same emulator: each test checks from a minute ago, so a
// run reads what this file made (and what little else came due then), and asserts on its own counters.
beforeEach(() => sweepMarkRef(db).set({ checkedBefore: Timestamp.fromMillis(Date.now() - 60_000) }));

const deps = rollupDeps;

/** Deps whose clock is `aheadMs` in the future: the sweep run that much later. */
function later(aheadMs: number): RollupDeps {
  return deps({ nowMs: () => Date.now() + aheadMs });
}

const STALE = staleAfterMsFor(INTERVAL_MS) + 2 * INTERVAL_MS;

async function promiseOf(counterId: string): Promise<unknown> {
  return (await counterRef(db, counterId).get()).get("rollup.trailing");
}

/**
 * A busy counter (the rollup committed just now) on which `a` starts a chain (a commit with a promise) and
 * fails, and `b`, written after that commit, defers to the promise: only the promise stands between b and the total.
 */
async function orphanedPromise(prefix: string): Promise<{ counterId: string }> {
  const counterId = await newCounter(prefix, 2);
  await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp(), "rollup.intervalMs": INTERVAL_MS });
  const a = await writeShard(counterId, 0, 2);
  const crash = deps({
    onStage: (stage) => {
      if (stage === "committed") throw new Error("simulated crash after the promise");
    },
  });
  await expect(rollupShardWrite(shardWriteOf(a), crash)).rejects.toThrow("simulated crash");
  const b = await writeShard(counterId, 1, 3);
  const deferred = await rollupShardWrite(shardWriteOf(b), deps());
  expect(deferred).toMatchObject({ kind: "defer" });
  expect(await readCounter(counterId)).toMatchObject({ total: 2, commits: 1 });
  // The promise comes due (in Firestore's time too: the sweep's sum must be read after it).
  if (deferred.kind === "defer") await sleepUntil(deferred.toDueMs + 50);
  return { counterId };
}

async function sleepUntil(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - Date.now())));
}

describe("the rollup sweep", () => {
  it("fulfils a promise whose owner failed and was never retried: the deferred write reaches the total", async () => {
    const { counterId } = await orphanedPromise("sweep-orphan");
    const report = await sweepRollups(later(STALE));
    expect(report.promises.outcomes.committed).toBeGreaterThanOrEqual(1);
    expect(await readCounter(counterId)).toMatchObject({ total: 5, commits: 2 });
    expect(await promiseOf(counterId)).toBeUndefined();
  });

  it("leaves a promise that is not stale yet to its owner", async () => {
    const { counterId } = await orphanedPromise("sweep-young");
    await sweepRollups(later(staleAfterMsFor(INTERVAL_MS) / 2));
    expect(await readCounter(counterId)).toMatchObject({ total: 2, commits: 1 });
    expect(await promiseOf(counterId)).toBeDefined();
  });

  it("checks a chain that ended quietly with one sum, writes nothing, and checks no promise twice", async () => {
    const counterId = await newCounter("sweep-quiet", 2);
    await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp(), "rollup.intervalMs": INTERVAL_MS });
    const a = await writeShard(counterId, 0, 4);
    // A start, then its owner's sum at the due time: nothing applied since, so the chain ends with no write.
    expect(await rollupShardWrite(shardWriteOf(a), deps())).toMatchObject({ kind: "committed", path: "start", end: "quiet" });
    expect(await promiseOf(counterId)).toMatchObject({ owner: ownerKeyOf(shardWriteOf(a)) });
    const first = await sweepRollups(later(STALE));
    expect(first.promises.outcomes.quiet).toBeGreaterThanOrEqual(1);
    expect(await readCounter(counterId)).toMatchObject({ total: 4, commits: 1 });
    // The mark moved past it: the next run (as late) finds nothing to check.
    const second = await sweepRollups(later(STALE));
    expect(second.promises.found).toBe(0);
  });

  it("finishes a claim the previous version left in its lease when this one was deployed (an upgrade): its deferred writes reach the total", async () => {
    // The previous version: a busy counter, a claim written in the lease for `a` due an interval later, and
    // `b` deferred to it; then its claimer's invocation died. No event of either comes to this version.
    const counterId = await newCounter("sweep-upgrade", 2);
    await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp(), "rollup.intervalMs": INTERVAL_MS });
    const a = await writeShard(counterId, 0, 2);
    await writeShard(counterId, 1, 3);
    // Due at the end of a's slot, which has passed since (its claimer died before it).
    await leaseRef(db, counterId).set({ eventId: ownerKeyOf(shardWriteOf(a)), dueAt: Timestamp.now(), intervalMs: INTERVAL_MS, claimedAt: FieldValue.serverTimestamp() });
    await sleepUntil(Date.now() + 50);
    const report = await sweepRollups(later(STALE));
    expect(report.claims.outcomes.committed).toBeGreaterThanOrEqual(1);
    expect(await readCounter(counterId)).toMatchObject({ total: 5, commits: 1 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("rolls up an upgrade's deferred writes at once when the previous version's claimer is retried on this one", async () => {
    const counterId = await newCounter("sweep-upgrade-retry", 2);
    await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp(), "rollup.intervalMs": INTERVAL_MS });
    const a = await writeShard(counterId, 0, 2);
    await writeShard(counterId, 1, 3);
    await leaseRef(db, counterId).set({ eventId: ownerKeyOf(shardWriteOf(a)), dueAt: Timestamp.now(), intervalMs: INTERVAL_MS });
    // This version reads no lease: the claimer's write is not covered, so its event sums now, after b too.
    expect(await rollupShardWrite(shardWriteOf(a), deps())).toMatchObject({ kind: "committed", total: 5 });
    // The lease is left for the sweep, which finds it fulfilled and deletes it without writing the parent.
    const commits = (await readCounter(counterId)).commits;
    const report = await sweepRollups(later(STALE));
    expect(report.claims.outcomes["covered-by-other"]).toBeGreaterThanOrEqual(1);
    expect(await readCounter(counterId)).toMatchObject({ total: 5, commits });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("ignores documents named lease in an app's own collections called rollup", async () => {
    const other = db.doc(`apps/sweep-${Date.now()}/rollup/lease`);
    await other.set({ eventId: "not-ours", dueAt: Timestamp.fromMillis(Date.now() - 3_600_000) });
    await sweepRollups(later(60_000));
    expect((await other.get()).data()).toMatchObject({ eventId: "not-ours" });
  });

  it("runs as the exported scheduled function rollupSweep", async () => {
    // A promise due a minute ago (its owner long dead) and a legacy claim, each on a counter with a write nobody rolled up.
    const [promised, claimed] = [await newCounter("sweep-scheduled", 2), await newCounter("sweep-scheduled-lease", 2)];
    const minuteAgo = Timestamp.fromMillis(Date.now() - 60_000);
    for (const counterId of [promised, claimed]) {
      await counterRef(db, counterId).update({ "rollup.committedAt": minuteAgo, "rollup.readTime": minuteAgo, "rollup.intervalMs": INTERVAL_MS });
      await writeShard(counterId, 1, 7);
    }
    await counterRef(db, promised).update({ "rollup.trailing": { dueAt: Timestamp.fromMillis(Date.now() - 30_000), owner: "0@1" } });
    await leaseRef(db, claimed).set({ eventId: "evt-dead", dueAt: Timestamp.fromMillis(Date.now() - 60_000), intervalMs: INTERVAL_MS });
    await functions.rollupSweep.run({ scheduleTime: new Date().toISOString() });
    for (const counterId of [promised, claimed]) expect(await readCounter(counterId)).toMatchObject({ total: 7, commits: 1 });
    expect(await promiseOf(promised)).toBeUndefined();
    expect((await leaseRef(db, claimed).get()).exists).toBe(false);
  });
});
