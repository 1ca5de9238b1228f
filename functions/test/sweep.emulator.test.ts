// The sweep (rollup/sweep.ts, run by the scheduled rollupSweep) against the real Firestore
// emulator: the emulator never fires schedules, so the tests call the handler. A claim whose claimer
// failed and whose event the platform gave up on is finished; a claim still in its time is left to its
// claimer; a fulfilled claim costs no parent write; nothing outside counters/{id}/exactCounterRollup/lease is touched.
import { FieldValue, Timestamp } from "firebase-admin/firestore";
import { db, functions, newCounter, readCounter, writeShard } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { INTERVAL_MS, rollupDeps, shardWriteOf } from "../../test/helpers/rollup";
import { counterRef, leaseRef } from "../src/model/paths";
import { dueMsFor } from "../src/rollup/plan";
import { rollupShardWrite } from "../src/rollup/index";
import { staleAfterMsFor } from "../src/rollup/plan";
import { sweepStaleClaims } from "../src/rollup/sweep";
import { type RollupDeps } from "../src/rollup/types";

jest.setTimeout(60_000);

beforeAll(requireEmulators);

const deps = rollupDeps;

/** Deps whose clock is `aheadMs` in the future: the sweep run that much later. */
function later(aheadMs: number): RollupDeps {
  return deps({ nowMs: () => Date.now() + aheadMs });
}

/**
 * A busy counter (the rollup committed just now) on which `a` claims a slot and fails, and `b`, written
 * in the same slot, defers to that claim: only the claim stands between b and the total.
 */
async function orphanedClaim(prefix: string): Promise<{ counterId: string }> {
  const counterId = await newCounter(prefix, 2);
  const slotStartMs = dueMsFor(counterId, Date.now() * 1000, INTERVAL_MS);
  await new Promise((resolve) => setTimeout(resolve, slotStartMs + 20 - Date.now()));
  await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp(), "rollup.intervalMs": INTERVAL_MS });
  const a = await writeShard(counterId, 0, 2);
  const b = await writeShard(counterId, 1, 3);
  const crash = deps({ onStage: () => Promise.reject(new Error("simulated crash after the claim")) });
  await expect(rollupShardWrite(shardWriteOf(a), crash)).rejects.toThrow("simulated crash");
  expect(await rollupShardWrite(shardWriteOf(b), deps())).toMatchObject({ kind: "defer" });
  expect((await leaseRef(db, counterId).get()).exists).toBe(true);
  return { counterId };
}

describe("the rollup sweep", () => {
  it("finishes a claim whose claimer failed and was never retried: the deferred write reaches the total", async () => {
    const { counterId } = await orphanedClaim("sweep-orphan");
    expect((await readCounter(counterId)).total).toBe(0);
    const report = await sweepStaleClaims(later(staleAfterMsFor(INTERVAL_MS) + 2 * INTERVAL_MS));
    expect(report.found).toBeGreaterThanOrEqual(1);
    expect(report.outcomes.committed).toBeGreaterThanOrEqual(1);
    expect(await readCounter(counterId)).toMatchObject({ total: 5, commits: 1 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("leaves a claim that is not stale yet to its claimer", async () => {
    const { counterId } = await orphanedClaim("sweep-young");
    await sweepStaleClaims(deps());
    expect(await readCounter(counterId)).toMatchObject({ total: 0, commits: 0 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(true);
  });

  it("removes the lease of a claim already fulfilled without writing the parent again", async () => {
    const counterId = await newCounter("sweep-done", 2);
    const w = await writeShard(counterId, 0, 4);
    await rollupShardWrite(shardWriteOf(w), deps()); // a leading edge: total 4
    const parent = await counterRef(db, counterId).get();
    const readTime = parent.get("rollup.readTime") as Timestamp;
    // A lease left behind by a claimer that committed and died before deleting it: due before that sum.
    await leaseRef(db, counterId).set({ eventId: "evt-gone", dueAt: Timestamp.fromMillis(readTime.toMillis() - 1), intervalMs: INTERVAL_MS });
    const report = await sweepStaleClaims(later(staleAfterMsFor(INTERVAL_MS) + 1000));
    expect(report.outcomes["covered-by-other"]).toBeGreaterThanOrEqual(1);
    expect(await readCounter(counterId)).toMatchObject({ total: 4, commits: 1 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("ignores documents named lease in an app's own collections called rollup", async () => {
    const other = db.doc(`apps/sweep-${Date.now()}/rollup/lease`);
    await other.set({ eventId: "not-ours", dueAt: Timestamp.fromMillis(Date.now() - 3_600_000) });
    await sweepStaleClaims(later(60_000));
    expect((await other.get()).data()).toMatchObject({ eventId: "not-ours" });
  });

  it("runs as the exported scheduled function rollupSweep", async () => {
    // A claim due a minute ago (its claimer long dead) on a counter with a write nobody rolled up.
    const counterId = await newCounter("sweep-scheduled", 2);
    await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp(), "rollup.intervalMs": INTERVAL_MS });
    await writeShard(counterId, 1, 7);
    await leaseRef(db, counterId).set({ eventId: "evt-dead", dueAt: Timestamp.fromMillis(Date.now() - 60_000), intervalMs: INTERVAL_MS });
    await functions.rollupSweep.run({ scheduleTime: new Date().toISOString() });
    expect(await readCounter(counterId)).toMatchObject({ total: 7, commits: 1 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });
});
