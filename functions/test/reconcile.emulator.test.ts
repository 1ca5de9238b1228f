// The reconcile tool's logic (cli/src/lib/reconcile.ts) against the Firestore emulator: it tells a
// counter whose rollup is merely due from one that really drifted, and --fix makes total equal the sum.
import { FieldValue } from "firebase-admin/firestore";
import { db, deliver, newCounter, readCounter, uniqueId, writeShard } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { logger } from "../../test/helpers/logger";
import { counterRef, shardRef } from "../src/model/paths";
import { reconcile } from "../src/reconcile/run";
import type { CounterReport } from "../src/reconcile/counter";
import { sumShards } from "../src/rollup/sum";

beforeAll(requireEmulators);

async function reports(counterIds: string[], fix = false): Promise<Record<string, CounterReport>> {
  const out: Record<string, CounterReport> = {};
  for await (const r of reconcile(db, { counterIds, fix })) out[r.counterId] = r;
  return out;
}

describe("reconcile", () => {
  it("classifies ok, lagging and drifted counters and lists stray shards", async () => {
    const ok = await newCounter("rec-ok", 2);
    await deliver(await writeShard(ok, 0, 5));

    const lagging = await newCounter("rec-lag", 2);
    await deliver(await writeShard(lagging, 0, 5));
    await writeShard(lagging, 1, 2); // its event has not been delivered yet

    const drifted = await newCounter("rec-drift", 2);
    await shardRef(db, drifted, 7).set({ count: 0 }); // a stray shard outside 0..numShards-1
    await deliver(await writeShard(drifted, 0, 5));
    await counterRef(db, drifted).update({ total: FieldValue.increment(3) }); // what a naive rollup does twice

    const missing = uniqueId("rec-none");
    const r = await reports([ok, lagging, drifted, missing]);
    expect(r[ok]).toMatchObject({ status: "ok", total: 5, sum: 5, drift: 0 });
    expect(r[lagging]).toMatchObject({ status: "lagging", total: 5, sum: 7, drift: -2 });
    expect(r[drifted]).toMatchObject({ status: "drift", total: 8, sum: 5, drift: 3, strayShards: ["7"] });
    expect(r[missing]).toMatchObject({ status: "missing" });
  });

  it("with fix and mirrors, writes the repaired total to the mirror in the same write", async () => {
    const drifted = await newCounter("rec-mirror", 2);
    const post = db.doc(`recposts/${drifted}`);
    await post.set({ title: "t" });
    await writeShard(drifted, 0, 4); // its event never delivered: total 0, field absent
    const r: Record<string, CounterReport> = {};
    const mirrors = (counterId: string) => [{ path: `recposts/${counterId}`, field: "likeCount", value: "total" as const }];
    for await (const report of reconcile(db, { counterIds: [drifted], fix: true, mirrors })) r[report.counterId] = report;
    expect(r[drifted]).toMatchObject({ fixed: true, sum: 4 });
    expect((await readCounter(drifted)).total).toBe(4);
    expect((await post.get()).data()).toEqual({ title: "t", likeCount: 4 });
  });

  it("compares each mirror with the counter: a field someone else wrote is drift, and fix writes the total back", async () => {
    const counter = await newCounter("rec-mirror-client", 1);
    const post = db.doc(`recposts/${counter}`);
    const fresh = db.doc(`recposts/${counter}-new`);
    await post.set({ title: "t" });
    const mirrors = (counterId: string) => [
      { path: `recposts/${counterId}`, field: "stats.comments", value: "total" as const },
      { path: `recposts/${counterId}-new`, field: "comments", value: "total" as const },
      { path: `recposts/${counterId}-gone`, field: "comments", value: "total" as const },
    ];
    const run = async (fix: boolean) => {
      const out: CounterReport[] = [];
      for await (const report of reconcile(db, { counterIds: [counter], fix, mirrors })) out.push(report);
      return out[0]!;
    };
    // The fix's commit warns of the target that does not exist, as every commit does.
    jest.spyOn(logger, "warn").mockImplementation(() => undefined);
    await deliver(await writeShard(counter, 0, 3));
    expect((await post.get()).get("stats.comments")).toBeUndefined(); // the rollup here wrote no mirrors
    await post.set({ stats: { comments: 3 } }, { merge: true });
    // A document created since the last commit, without the field: the next commit fills it; no drift.
    await fresh.set({ title: "new" });
    expect(await run(false)).toMatchObject({ status: "ok", staleMirrors: [] });
    // The post's author sets the count (the app's rules let them): drift, named, until a fix writes the total back.
    await post.update({ "stats.comments": 999999 });
    expect(await run(false)).toMatchObject({ status: "drift", drift: 0, staleMirrors: [{ path: `recposts/${counter}`, field: "stats.comments", holds: 999999, expected: 3 }] });
    expect(await run(true)).toMatchObject({ status: "drift", fixed: true });
    expect((await post.get()).get("stats.comments")).toBe(3);
    expect((await fresh.get()).get("comments")).toBe(3);
    expect(await run(false)).toMatchObject({ status: "ok", staleMirrors: [] });
    jest.restoreAllMocks();
  });

  it("with fix, writes the shard sum as the total and reports it fixed", async () => {
    const drifted = await newCounter("rec-fix", 3);
    await deliver(await writeShard(drifted, 2, 4));
    await counterRef(db, drifted).update({ total: 40 });
    const before = await readCounter(drifted);
    const r = await reports([drifted], true);
    expect(r[drifted]).toMatchObject({ status: "drift", drift: 36, fixed: true });
    expect(await readCounter(drifted)).toMatchObject({ total: 4, commits: (before.commits ?? 0) + 1 });
    expect((await reports([drifted]))[drifted]).toMatchObject({ status: "ok", drift: 0 });
  });

  it("lists shards written before shards counted their writes; with fix gives them writes 0, and the rollup's one aggregation then sums them", async () => {
    const counterId = await newCounter("rec-legacy", 3);
    // An upgrade: shards 0 and 2 as an older version wrote them (a count, no `writes`), shard 1 as now.
    await shardRef(db, counterId, 0).set({ count: 4 });
    await shardRef(db, counterId, 1).update({ count: FieldValue.increment(2), writes: FieldValue.increment(2) });
    await shardRef(db, counterId, 2).set({ count: 1 });
    // Whether the rollup's one aggregation (count, writes and the number of shards) takes every shard.
    const sumsBoth = async () => {
      const sum = await sumShards(db, counterId, undefined, 3);
      return !sum.overflow && sum.writes !== null;
    };
    expect(await sumsBoth()).toBe(false);
    expect((await reports([counterId]))[counterId]).toMatchObject({ unmeasuredShards: ["0", "2"], writesAdded: 0 });

    const fixed = (await reports([counterId], true))[counterId]!;
    expect(fixed).toMatchObject({ unmeasuredShards: ["0", "2"], writesAdded: 2 });
    const shards = await Promise.all([0, 1, 2].map(async (i) => (await shardRef(db, counterId, i).get()).data()));
    expect(shards).toEqual([{ count: 4, writes: 0 }, { count: 2, writes: 2 }, { count: 1, writes: 0 }]);
    expect(await sumsBoth()).toBe(true);
    expect((await reports([counterId]))[counterId]).toMatchObject({ unmeasuredShards: [], writesAdded: 0 });
  });

  it("walks every counter page by page when no ids are given", async () => {
    const ids = [await newCounter("rec-page", 1), await newCounter("rec-page", 1), await newCounter("rec-page", 1)];
    const seen: string[] = [];
    // From the first id of this test on, in id order, up to the last (the database holds every other test's
    // counters too: a walk of them all takes minutes in the full suite).
    const sorted = [...ids].sort();
    for await (const r of reconcile(db, { pageSize: 2, startAfter: "rec-page" })) {
      if (r.counterId > sorted[sorted.length - 1]!) break;
      seen.push(r.counterId);
    }
    expect(seen).toEqual(expect.arrayContaining(ids));
    expect([...seen].sort()).toEqual(seen);
  });
});
