// The counters next to an existing app's own data (docs/api.md, "Next to an app's data"): the app
// keeps collections named `cleanup`, `rollup`, `shards`, `members`, `memberships`, `requests` and a
// nested `counters`, at several depths, with `dueAt` and `expireAt` long past (test/helpers/app-data.ts). Every
// sweep, a delete's cleanup and reconcile run through that database; each counts the documents it read
// (from its query snapshots), and none of the app's documents is read or changed.
import { deleteApp, initializeApp } from "firebase-admin/app";
import { FieldValue, getFirestore, Timestamp } from "firebase-admin/firestore";
import { logger } from "../../test/helpers/logger";
import { requireEmulators } from "../../test/helpers/emulators";
import { cleanupRound, resumeStrandedCleanups } from "../../functions/src/counters/deletion";
import { cleanupRef, counterRef, leaseRef, memberRef, membershipsRef, requestRef, shardRef } from "../../functions/src/model/paths";
import { firestoreRollupStore } from "../../functions/src/rollup/firestore-store";
import { staleAfterMsFor } from "../../functions/src/rollup/plan";
import { sweepRollups } from "../../functions/src/rollup/sweep";
import { type RollupDeps } from "../../functions/src/rollup/types";
import { createParentAndShards } from "../../functions/src/counters/create";
import { deleteParentAndShards } from "../../functions/src/counters/delete";
import { reconcile } from "../../functions/src/reconcile/run";
import { changedAppDocuments, seedAppData, type AppData } from "../../test/helpers/app-data";

// A project of its own: the sweeps and reconcile walk the whole database, and the counts below are exact.
const PROJECT = "demo-app-data";
const app = initializeApp({ projectId: PROJECT }, PROJECT);
const db = getFirestore(app);
const INTERVAL_MS = 1000;

jest.setTimeout(120_000);

let data: AppData;

beforeAll(async () => {
  await requireEmulators();
  await db.recursiveDelete(db.collection("counters"));
  // The sizes that matter: 450 documents in an app's `jobs/*/cleanup/*`, more than a page (100) of app
  // documents in collections named `rollup`, all due before any lease.
  data = await seedAppData(db, { cleanups: 450, rollups: 120 });
});

beforeEach(() => {
  for (const level of ["debug", "info", "warn"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
});

afterEach(async () => {
  jest.restoreAllMocks();
  expect(await changedAppDocuments(db, data)).toEqual([]);
});

afterAll(() => deleteApp(app));

function deps(overrides: Partial<RollupDeps> = {}): RollupDeps {
  return {
    store: firestoreRollupStore(db),
    intervalMs: INTERVAL_MS,
    staleAfterMs: staleAfterMsFor(INTERVAL_MS),
    nowMs: Date.now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    ...overrides,
  };
}

/**
 * A busy counter with 5 in its shards that only a claim of the previous version due a minute ago (its claimer
 * long dead) would bring into its total.
 */
async function orphanedClaim(counterId: string): Promise<void> {
  await createParentAndShards(db, counterId, 2);
  await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp(), "rollup.intervalMs": INTERVAL_MS });
  await shardRef(db, counterId, 0).update({ count: FieldValue.increment(2) });
  await shardRef(db, counterId, 1).update({ count: FieldValue.increment(3) });
  await leaseRef(db, counterId).set({ eventId: "evt-dead", dueAt: Timestamp.fromMillis(Date.now() - 60_000), intervalMs: INTERVAL_MS });
}

async function total(counterId: string): Promise<unknown> {
  return (await counterRef(db, counterId).get()).get("total");
}

describe("an app's own data next to the counters", () => {
  it("the claim sweep finds a stale lease behind more than a page of the app's rollup documents due earlier, reading only the lease", async () => {
    await orphanedClaim("app-sweep");
    const report = await sweepRollups(deps());
    expect(report.claims).toMatchObject({ found: 1, scanned: 1, outcomes: { committed: 1 } });
    // The sweep's mark (1), the promises' query (1: none due), the leases' query (1), then finishing the
    // claim: the parent (1), the sum (an aggregation), the lease deleted.
    expect(report.ops).toMatchObject({ reads: 4, aggregations: 1 });
    expect(await total("app-sweep")).toBe(5);
    expect((await leaseRef(db, "app-sweep").get()).exists).toBe(false);

    // Nothing stale left: a run costs three reads (the mark, two empty queries), whatever the app keeps.
    const idle = await sweepRollups(deps());
    expect(idle.claims).toMatchObject({ found: 0, scanned: 0 });
    expect(idle.promises).toMatchObject({ found: 0 });
    expect(idle.ops).toMatchObject({ reads: 3, aggregations: 0 });
  });

  it("the claim sweep pages by a cursor: documents in its group that are no lease, due earliest, never end the paging", async () => {
    // Strays in the leases' own group (an operator's copy of a lease, say): due before every lease, and
    // more of them than a page holds. A sweep that stopped on a page with no claim in it would find none.
    const strays = Array.from({ length: 5 }, (_, i) => db.doc(`counters/app-stray-${i}/exactCounterRollup/lease-copy`));
    for (const [i, ref] of strays.entries()) await ref.set({ eventId: "copy", dueAt: Timestamp.fromMillis(Date.now() - 3_600_000 - i) });
    const ids = Array.from({ length: 7 }, (_, i) => `app-page-${i}`);
    for (const id of ids) await orphanedClaim(id);
    const report = await sweepRollups(deps(), { pageSize: 2, budgetMs: 60_000, concurrency: 1 });
    expect(report.claims).toMatchObject({ found: 7, scanned: 12, outcomes: { committed: 7 } });
    for (const id of ids) expect(await total(id)).toBe(5);
    for (const ref of strays) await ref.delete();
  });

  it("the stranded-cleanup sweep reads the deletion markers only, not the app's 450 cleanup documents", async () => {
    await createParentAndShards(db, "app-stranded", 1);
    await requestRef(db, "app-stranded", "old").set({ shard: 0, delta: 1 });
    await deleteParentAndShards(db, "app-stranded", { cleanupBudgetMs: 0 });
    await cleanupRef(db, "app-stranded").update({ round: 0 }); // as if round 0 died without handing off

    const report = await resumeStrandedCleanups(db, { nowMs: () => Date.now() + 3_600_000 });
    expect(report).toEqual({ pending: 1, resumed: 1, scanned: 1, reads: 1 });
    const round = await cleanupRound(db, "app-stranded", 1, 10_000, { nowMs: Date.now });
    expect(round).toMatchObject({ done: true, removed: 1 });

    // No deletion pending: one read per run.
    expect(await resumeStrandedCleanups(db, { nowMs: () => Date.now() + 3_600_000 })).toEqual({ pending: 0, resumed: 0, scanned: 0, reads: 1 });
  });

  it("a delete's cleanup reads what the counter left behind and its marker, nothing of the app's members, memberships or requests", async () => {
    await createParentAndShards(db, "app-delete", 2, { unique: true });
    const writer = db.bulkWriter({ throttling: false });
    for (let n = 0; n < 30; n++) void writer.create(memberRef(db, "app-delete", `u-${n}`), {});
    for (let n = 0; n < 20; n++) void writer.create(membershipsRef(db, "app-delete").doc(`u-${n}`), {});
    for (let n = 0; n < 50; n++) void writer.create(requestRef(db, "app-delete", `r-${n}`), { shard: 0, delta: 1, expireAt: Timestamp.fromMillis(0) });
    await writer.close();

    await deleteParentAndShards(db, "app-delete", { cleanupBudgetMs: 0 });
    const round = await cleanupRound(db, "app-delete", 1, 60_000, { nowMs: Date.now });
    expect(round).toMatchObject({ done: true, removed: 100 });
    // The 100 documents, plus a handful of reads of the marker and of empty pages: never the app's ~600.
    expect(round.reads).toBeGreaterThanOrEqual(100);
    expect(round.reads).toBeLessThanOrEqual(115);
    expect((await db.collection("counters").doc("app-delete").listCollections()).map((c) => c.id)).toEqual([]);
  });

  it("reconcile reads the counters and their shards only, never the app's own nested counters", async () => {
    await createParentAndShards(db, "app-reconcile", 3);
    await shardRef(db, "app-reconcile", 2).update({ count: FieldValue.increment(4) });
    const reports = [];
    for await (const report of reconcile(db, { fix: true })) reports.push(report);
    const ours = (await db.collection("counters").get()).docs.map((d) => d.id);
    expect(reports.map((r) => r.counterId)).toEqual(ours);
    const fixed = reports.find((r) => r.counterId === "app-reconcile")!;
    expect(fixed).toMatchObject({ status: "lagging", fixed: true });
    // Each counter: its parent (1), its shard listing (1 per shard), the sum (an aggregation); a unique
    // counter also counts its members and reads shard "0" (3).
    for (const r of reports) {
      const shards = (await db.collection(`counters/${r.counterId}/shards`).get()).size;
      expect(r.reads).toBe(1 + Math.max(1, shards) + 1 + (r.unique ? 3 : 0));
    }
    expect(await total("app-reconcile")).toBe(4);
  });
});
