// `npm run reconcile` tells a counter whose rollup is merely due ("lagging") from one whose missing write
// is older than any rollup, retry or sweep would leave it ("stuck", exit code 4), and reports the age of
// the oldest write missing from each total.
import { deleteApp, initializeApp } from "firebase-admin/app";
import { Timestamp, getFirestore } from "firebase-admin/firestore";
import { requireEmulators } from "../../test/helpers/emulators";
import { reconcile, stuckAfterMsFor } from "../../functions/src/reconcile/run";
import type { CounterReport } from "../../functions/src/reconcile/counter";
import { runReconcile, type Run } from "../../test/helpers/reconcile-cli";

// A project of its own: a run without --counter walks the whole `counters` collection.
const PROJECT = "demo-reconcile-stuck";
const app = initializeApp({ projectId: PROJECT }, PROJECT);
const db = getFirestore(app);

jest.setTimeout(120_000);

afterAll(() => deleteApp(app));

/** A counter whose total (0) covers up to a minute ago, with a shard write of 5 committed now. */
async function counterMissingAWrite(id: string): Promise<number> {
  await db.doc(`counters/${id}`).set({ numShards: 1, total: 0, rollup: { commits: 1, readTime: Timestamp.fromMillis(Date.now() - 60_000) } });
  const result = await db.doc(`counters/${id}/shards/0`).set({ count: 5, writes: 1 });
  return result.writeTime.toMillis();
}

function reportsOf(run: Run): Record<string, { status: string; missingForMs: number | null; fixed: boolean }> {
  const lines = run.stdout.trim().split("\n").filter(Boolean);
  return Object.fromEntries(lines.map((l) => JSON.parse(l) as CounterReport).map((r) => [r.counterId, r]));
}

/**
 * --stuck-after for the runs below, in seconds: "old" is missing a write older than that when they run,
 * "new" one written just before each run. The reconcile CLI takes a few seconds to start and read on a
 * loaded machine (two test suites at once: over 2 s), so "new" must stay younger than the threshold for
 * that long, and "old" is written a little more than the threshold before the first run.
 */
const STUCK_AFTER_S = 10;

let oldWrittenAt = 0;

/** A "new" counter whose missing write was committed just now (deleted first: a fresh update time). */
async function freshNew(): Promise<number> {
  await db.recursiveDelete(db.doc("counters/new"));
  return counterMissingAWrite("new");
}

beforeAll(async () => {
  await requireEmulators();
  await db.recursiveDelete(db.collection("counters"));
  oldWrittenAt = await counterMissingAWrite("old");
  await new Promise((resolve) => setTimeout(resolve, STUCK_AFTER_S * 1000 + 500));
});

describe("reconcile: stuck or lagging", () => {
  it("says stuck, with the age of the missing write, past --stuck-after, lagging before it, and exits 4", async () => {
    await freshNew();
    const before = Date.now();
    const run = await runReconcile(PROJECT, ["--json", "--quiet", "--stuck-after", String(STUCK_AFTER_S)]);
    const r = reportsOf(run);
    expect(r.old).toMatchObject({ status: "stuck", fixed: false });
    expect(r.old!.missingForMs).toBeGreaterThanOrEqual(STUCK_AFTER_S * 1000 + 500);
    expect(r.old!.missingForMs).toBeLessThanOrEqual(Date.now() - oldWrittenAt);
    expect(r.new).toMatchObject({ status: "lagging" });
    expect(r.new!.missingForMs).toBeLessThan(before - oldWrittenAt);
    expect(run.code).toBe(4);
  });

  it("prints the age on the line of a lagging or stuck counter", async () => {
    await freshNew();
    const run = await runReconcile(PROJECT, ["--quiet", "--stuck-after", String(STUCK_AFTER_S)]);
    expect(run.stdout).toMatch(/^stuck +old +total=0 +sum=5 +drift=-5 +age=\d+\.\ds$/m);
    expect(run.stdout).toMatch(/^lagging +new +total=0 +sum=5 +drift=-5 +age=\d+\.\ds$/m);
  });

  it("calls both lagging with the default threshold (10 intervals + 6 min) and exits 1", async () => {
    const run = await runReconcile(PROJECT, ["--json", "--quiet"]);
    expect(Object.values(reportsOf(run)).map((r) => r.status)).toEqual(["lagging", "lagging"]);
    expect(run.code).toBe(1);
  });

  it("derives the threshold from --interval-ms", async () => {
    expect(stuckAfterMsFor(1000)).toBe(370_000);
    expect(stuckAfterMsFor(60_000)).toBe(960_000);
    const run = await runReconcile(PROJECT, ["--json", "--quiet", "--interval-ms", "60000"]);
    expect(reportsOf(run).old!.status).toBe("lagging");
  });

  it("counts a never rolled-up counter's missing writes from its creation", async () => {
    await db.doc("counters/never").set({ numShards: 1, total: 0 });
    const written = (await db.doc("counters/never/shards/0").set({ count: 2 })).writeTime.toMillis();
    const later = written + stuckAfterMsFor(1000) + 1;
    const reports: CounterReport[] = [];
    for await (const r of reconcile(db, { counterIds: ["never"], nowMs: () => later })) reports.push(r);
    expect(reports[0]).toMatchObject({ status: "stuck", missingForMs: stuckAfterMsFor(1000) + 1 });
  });

  it("exits 1, not 4, when a counter also drifted: a wrong total outranks a stuck one", async () => {
    await db.doc("counters/wrong").set({ numShards: 1, total: 9, rollup: { commits: 1, readTime: Timestamp.fromMillis(Date.now() + 3_600_000) } });
    await db.doc("counters/wrong/shards/0").set({ count: 1 });
    const run = await runReconcile(PROJECT, ["--json", "--quiet", "--stuck-after", String(STUCK_AFTER_S), "--counter", "old", "--counter", "wrong"]);
    expect(reportsOf(run).wrong!.status).toBe("drift");
    expect(run.code).toBe(1);
  });

  it("fixes a stuck counter with --fix (a rollup commit) and exits 0", async () => {
    const run = await runReconcile(PROJECT, ["--json", "--quiet", "--stuck-after", String(STUCK_AFTER_S), "--fix", "--counter", "old"]);
    expect(reportsOf(run).old).toMatchObject({ status: "stuck", fixed: true });
    expect(run.code).toBe(0);
    expect((await db.doc("counters/old").get()).get("total")).toBe(5);
  });
});
