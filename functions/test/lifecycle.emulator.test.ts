// Idempotent increments and the admin callables (reset, reshard, delete), wrapped, against the real
// Firestore emulator. Races run 200 increments at bounded concurrency against each admin operation and
// then check the invariants on the shards exactly. (The same races with the real trigger and totals run
// end to end in functions/test/lifecycle-e2e.emulator.test.ts.)
import { Timestamp } from "firebase-admin/firestore";
import {
  ADMIN,
  USER,
  call,
  db,
  documentsUnder,
  functions,
  httpsErrorOf as errorOf,
  newCounter,
  raceWithDelete,
  readCounter,
  shardSum,
  uniqueId,
} from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { withConcurrency } from "../../test/helpers/client";
import { counterRef, requestRef, requestsRef, shardsRef } from "../src/model/paths";
import { zeroShardsAndTotal } from "../src/counters/reset";

const { incrementCounter, resetCounter, reshardCounter, deleteCounter } = functions;

interface IncrementResult {
  counterId: string;
  shard: number;
  applied: boolean;
  writeTime: { seconds: number; nanoseconds: number };
}

beforeAll(requireEmulators);
jest.setTimeout(120_000);

function increment(counterId: string, delta: number, requestId?: string): Promise<IncrementResult> {
  return call<IncrementResult>(incrementCounter, { counterId, delta, ...(requestId ? { requestId } : {}) });
}

async function shardIdsOf(counterId: string): Promise<string[]> {
  return (await shardsRef(db, counterId).get()).docs.map((d) => d.id).sort((a, b) => Number(a) - Number(b));
}

describe("incrementCounter requestId", () => {
  it("applies a key once when repeated sequentially", async () => {
    const counterId = await newCounter("idem-seq", 3);
    const first = await increment(counterId, 5, "like-1");
    const results = [await increment(counterId, 5, "like-1"), await increment(counterId, 5, "like-1")];
    expect(first.applied).toBe(true);
    expect(results).toEqual([
      { counterId, shard: first.shard, applied: false, writeTime: first.writeTime },
      { counterId, shard: first.shard, applied: false, writeTime: first.writeTime },
    ]);
    expect(await shardSum(counterId)).toBe(5);
  });

  it("applies exactly one of 10 concurrent calls with the same key", async () => {
    const counterId = await newCounter("idem-race", 4);
    const results = await Promise.all(Array.from({ length: 10 }, () => increment(counterId, 2, "tap-race")));
    expect(results.filter((r) => r.applied)).toHaveLength(1);
    const winner = results.find((r) => r.applied)!;
    expect(results.every((r) => r.shard === winner.shard)).toBe(true);
    expect(await shardSum(counterId)).toBe(2);
  });

  it("applies every call with a different key, and keys are per counter", async () => {
    const counterId = await newCounter("idem-keys", 4);
    const other = await newCounter("idem-other", 1);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => increment(counterId, 1, `k-${i}`)));
    expect(results.every((r) => r.applied)).toBe(true);
    expect((await increment(other, 1, "k-0")).applied).toBe(true);
    expect(await shardSum(counterId)).toBe(10);
    expect(await shardSum(other)).toBe(1);
  });

  it("writes the record with an expiry REQUEST_TTL_HOURS ahead, atomically with the shard", async () => {
    const counterId = await newCounter("idem-ttl", 1);
    const before = Date.now();
    await increment(counterId, 1, "ttl-key");
    const record = await requestRef(db, counterId, "ttl-key").get();
    const ttlMs = Number(process.env.REQUEST_TTL_HOURS) * 3_600_000;
    expect((record.get("expireAt") as Timestamp).toMillis()).toBeGreaterThanOrEqual(before + ttlMs);
    expect((record.get("expireAt") as Timestamp).toMillis()).toBeLessThanOrEqual(Date.now() + ttlMs);
    expect(record.get("delta")).toBe(1);
  });

  it("treats an expired record the TTL policy has not deleted yet as a new key", async () => {
    const counterId = await newCounter("idem-expired", 2);
    await increment(counterId, 4, "old-key");
    await requestRef(db, counterId, "old-key").update({ expireAt: Timestamp.fromMillis(Date.now() - 1000) });
    const again = await increment(counterId, 4, "old-key");
    expect(again.applied).toBe(true);
    expect(await shardSum(counterId)).toBe(8);
    expect((await increment(counterId, 4, "old-key")).applied).toBe(false); // renewed
    expect(await shardSum(counterId)).toBe(8);
  });

  it.each([
    ["empty", ""],
    ["too long", "k".repeat(129)],
    ["with a slash", "a/b"],
    ["with a dot", "a.b"],
  ])("rejects a %s requestId with invalid-argument and applies nothing", async (_name, requestId) => {
    const counterId = await newCounter("idem-bad", 1);
    const error = await errorOf(call(incrementCounter, { counterId, delta: 1, requestId }));
    expect(error.code).toBe("invalid-argument");
    expect(error.message).toMatch(/requestId/);
    expect(await shardSum(counterId)).toBe(0);
    expect((await requestsRef(db, counterId).get()).size).toBe(0);
  });
});

describe.each([
  ["resetCounter", resetCounter, (id: string) => ({ counterId: id })],
  ["reshardCounter", reshardCounter, (id: string) => ({ counterId: id, numShards: 3 })],
  ["deleteCounter", deleteCounter, (id: string) => ({ counterId: id })],
])("%s access", (_name, fn, data) => {
  it("rejects a signed-in user without the admin claim with permission-denied and changes nothing", async () => {
    const counterId = await newCounter("acl", 2);
    await increment(counterId, 3);
    const before = await documentsUnder(counterId);
    const error = await errorOf(call(fn, data(counterId), USER));
    expect(error.code).toBe("permission-denied");
    expect(await documentsUnder(counterId)).toEqual(before);
    expect(await shardSum(counterId)).toBe(3);
    expect((await readCounter(counterId)).numShards).toBe(2);
  });

  it("rejects a caller who is not signed in with unauthenticated", async () => {
    const counterId = await newCounter("acl-anon", 2);
    expect((await errorOf(call(fn, data(counterId), null))).code).toBe("unauthenticated");
  });

  it("answers not-found for an unknown counter and creates nothing", async () => {
    const counterId = uniqueId("acl-missing");
    expect((await errorOf(call(fn, data(counterId), ADMIN))).code).toBe("not-found");
    expect(await documentsUnder(counterId)).toEqual([]);
  });
});

describe("incrementCounter writeTime", () => {
  const ts = (r: IncrementResult) => new Timestamp(r.writeTime.seconds, r.writeTime.nanoseconds);
  const isWriteTime = (w: unknown) =>
    typeof w === "object" &&
    w !== null &&
    Object.keys(w).sort().join() === "nanoseconds,seconds" &&
    Number.isSafeInteger((w as Record<string, unknown>).seconds) &&
    Number.isInteger((w as Record<string, unknown>).nanoseconds) &&
    ((w as Record<string, number>).nanoseconds ?? -1) >= 0 &&
    ((w as Record<string, number>).nanoseconds ?? 1e9) < 1e9;

  it("answers a fresh call with the commit time of its batch: the shard's and the record's update time", async () => {
    const counterId = await newCounter("wt-fresh", 1);
    const plain = await increment(counterId, 2);
    expect(isWriteTime(plain.writeTime)).toBe(true);
    expect(ts(plain).isEqual((await shardsRef(db, counterId).doc("0").get()).updateTime!)).toBe(true);
    const keyed = await increment(counterId, 3, "wt-key");
    expect(isWriteTime(keyed.writeTime)).toBe(true);
    expect(ts(keyed).isEqual((await shardsRef(db, counterId).doc("0").get()).updateTime!)).toBe(true);
    expect(ts(keyed).isEqual((await requestRef(db, counterId, "wt-key").get()).updateTime!)).toBe(true);
    expect(ts(keyed).valueOf() > ts(plain).valueOf()).toBe(true);
    // Commit times are whole microseconds. The rollup stores rollup.readTime rounded down to the
    // microsecond; comparing such a writeTime with it (w <= readTime) therefore loses nothing.
    for (const r of [plain, keyed]) expect(r.writeTime.nanoseconds % 1000).toBe(0);
  });

  it("answers a replay with the first call's writeTime, not the replay's own time", async () => {
    const counterId = await newCounter("wt-replay", 2);
    const first = await increment(counterId, 1, "wt-r");
    await increment(counterId, 1, "other"); // something later on the same counter
    const replay = await increment(counterId, 1, "wt-r");
    expect(replay).toEqual({ counterId, shard: first.shard, applied: false, writeTime: first.writeTime });
  });

  it("answers all of 10 concurrent calls with one key with the single applied write's time", async () => {
    const counterId = await newCounter("wt-race", 3);
    const results = await Promise.all(Array.from({ length: 10 }, () => increment(counterId, 2, "wt-race")));
    expect(results.filter((r) => r.applied)).toHaveLength(1);
    const record = await requestRef(db, counterId, "wt-race").get();
    for (const r of results) expect(ts(r).isEqual(record.updateTime!)).toBe(true);
    expect(await shardSum(counterId)).toBe(2);
  });

  it("after an expired key is renewed, answers with the renewing write's time, then replays that", async () => {
    const counterId = await newCounter("wt-renew", 2);
    const old = await increment(counterId, 4, "wt-old");
    await requestRef(db, counterId, "wt-old").update({ expireAt: Timestamp.fromMillis(Date.now() - 1000) });
    const renewed = await increment(counterId, 4, "wt-old");
    expect(renewed.applied).toBe(true);
    expect(ts(renewed).valueOf() > ts(old).valueOf()).toBe(true);
    expect(ts(renewed).isEqual((await shardsRef(db, counterId).doc(String(renewed.shard)).get()).updateTime!)).toBe(true);
    const replay = await increment(counterId, 4, "wt-old");
    expect(replay).toEqual({ counterId, shard: renewed.shard, applied: false, writeTime: renewed.writeTime });
    expect(await shardSum(counterId)).toBe(8);
  });

  it("answers every call renewing one expired key at once with the one renewing write's time", async () => {
    const counterId = await newCounter("wt-renew-race", 2);
    await increment(counterId, 1, "wt-rr");
    await requestRef(db, counterId, "wt-rr").update({ expireAt: Timestamp.fromMillis(Date.now() - 1000) });
    const results = await Promise.all(Array.from({ length: 8 }, () => increment(counterId, 1, "wt-rr")));
    expect(results.filter((r) => r.applied)).toHaveLength(1);
    const record = await requestRef(db, counterId, "wt-rr").get();
    for (const r of results) expect(ts(r).isEqual(record.updateTime!)).toBe(true);
    expect(await shardSum(counterId)).toBe(2);
  });
});

describe("resetCounter", () => {
  it("sets every shard and the total to 0; later increments count from 0", async () => {
    const counterId = await newCounter("reset", 3);
    for (const d of [5, 7, -2]) await increment(counterId, d);
    await expect(call(resetCounter, { counterId }, ADMIN)).resolves.toEqual({ counterId });
    expect(await shardSum(counterId)).toBe(0);
    expect((await readCounter(counterId)).total).toBe(0);
    await increment(counterId, 4);
    expect(await shardSum(counterId)).toBe(4);
  });

  it("keeps exactly the increments committed after it when 200 increments race it", async () => {
    const counterId = await newCounter("reset-race", 8);
    const deltas = Array.from({ length: 200 }, (_, i) => (i % 9 === 0 ? -2 : (i % 4) + 1));
    let reset: Promise<unknown> | undefined;
    await withConcurrency(
      8,
      deltas.map((delta, i) => async () => {
        if (i === 60) reset = call(resetCounter, { counterId }, ADMIN);
        if (i === deltas.length - 1) await reset; // at least one increment comes after the reset
        return increment(counterId, delta, `r-${i}`);
      }),
    );
    await reset;
    // Commit times decide "after": the reset takes effect at resetAt, the read time of its snapshot
    // (increments committed between that read and the reset's own commit survive it), and an
    // increment's commit time is its record's create time (same batch). Not the serverTimestamp fields:
    // the emulator fills those in at millisecond precision, in an order that can differ from the commit
    // order of concurrent writes.
    const parent = await counterRef(db, counterId).get();
    expect(parent.get("total")).toBe(0);
    const resetAt = parent.get("resetAt") as Timestamp;
    expect(resetAt.isEqual(parent.get("rollup.readTime") as Timestamp)).toBe(true);
    const after = (await requestsRef(db, counterId).get()).docs.filter((d) => d.createTime.valueOf() > resetAt.valueOf());
    const expected = after.reduce((sum, d) => sum + (d.get("delta") as number), 0);
    expect(after.length).toBeGreaterThan(0);
    expect(after.length).toBeLessThan(200);
    expect(await shardSum(counterId)).toBe(expected);
  });
});

describe("resetCounter holds no lock on the shards", () => {
  // The reset reads a snapshot without locking and writes in a transaction that reads only the parent
  // (model/reset-plan.ts); these tests land writes between its read and its write (store.resetCounter's
  // beforeCommit). A reset that read the shards in a transaction would hold their locks there: the
  // increment in the first test would wait for a commit that waits for it.
  it("lets an increment between its read and its write commit at once, and keeps it", async () => {
    const counterId = await newCounter("reset-nolock", 4);
    for (const d of [5, 7, -2]) await increment(counterId, d);
    let during: IncrementResult | undefined;
    await zeroShardsAndTotal(db, counterId, {
      beforeCommit: async () => {
        during ??= await increment(counterId, 3, "during-reset");
      },
    });
    const parent = await counterRef(db, counterId).get();
    expect(parent.get("total")).toBe(0);
    const readTime = parent.get("rollup.readTime") as Timestamp;
    expect(new Timestamp(during!.writeTime.seconds, during!.writeTime.nanoseconds).valueOf() > readTime.valueOf()).toBe(true);
    expect(await shardSum(counterId)).toBe(3); // erased: 5 + 7 - 2; kept: the 3 that came after the read
  });

  it("does not read again when a rollup commits between its read and its write: it takes what it erased from that commit's total, and keeps its read time", async () => {
    const counterId = await newCounter("reset-stale", 3);
    for (const d of [4, 6]) await increment(counterId, d);
    let attempts = 0;
    let rolledUpAt: Timestamp | undefined;
    await zeroShardsAndTotal(db, counterId, {
      beforeCommit: async () => {
        attempts++;
        // What a rollup commit does to the parent, for a sum read after the reset's read: the 10 the reset
        // erases and a 5 committed after its read.
        await increment(counterId, 5, "after-the-read");
        rolledUpAt ??= Timestamp.now();
        await counterRef(db, counterId).update({ total: 15, "rollup.readTime": rolledUpAt });
      },
    });
    expect(attempts).toBe(1);
    const parent = await counterRef(db, counterId).get();
    expect(parent.get("total")).toBe(5);
    expect((parent.get("rollup.readTime") as Timestamp).isEqual(rolledUpAt!)).toBe(true);
    expect((parent.get("resetAt") as Timestamp).valueOf() < rolledUpAt!.valueOf()).toBe(true);
    expect(await shardSum(counterId)).toBe(5);
  });

  it("never subtracts a count twice when a reshard folds shards between its read and its write", async () => {
    const counterId = await newCounter("reset-reshard", 6);
    for (let i = 0; i < 12; i++) await increment(counterId, i + 1);
    let attempts = 0;
    await zeroShardsAndTotal(db, counterId, {
      beforeCommit: async () => {
        attempts++;
        if (attempts === 1) await call(reshardCounter, { counterId, numShards: 2 }, ADMIN);
      },
    });
    expect(attempts).toBe(2);
    expect(await shardIdsOf(counterId)).toEqual(["0", "1"]);
    expect(await shardSum(counterId)).toBe(0);
    const shards = (await shardsRef(db, counterId).get()).docs.map((d) => d.get("count") as number);
    expect(shards).toEqual([0, 0]);
  });

  it("reads again when a reshard down and up again ran between its read and its write: no shard is left below 0", async () => {
    const counterId = await newCounter("reset-reshard-back", 6);
    for (let i = 0; i < 12; i++) await increment(counterId, i + 1);
    let attempts = 0;
    await zeroShardsAndTotal(db, counterId, {
      beforeCommit: async () => {
        attempts++;
        if (attempts > 1) return;
        // Shards 2..5 fold into 0 and 1 and come back at 0: the same ids, other counts.
        await call(reshardCounter, { counterId, numShards: 2 }, ADMIN);
        await call(reshardCounter, { counterId, numShards: 6 }, ADMIN);
      },
    });
    expect(attempts).toBe(2);
    const shards = (await shardsRef(db, counterId).get()).docs.map((d) => d.get("count") as number);
    expect(shards).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("writes only the shards that were not at 0", async () => {
    const counterId = await newCounter("reset-sparse", 8);
    await increment(counterId, 9);
    const before = new Map((await shardsRef(db, counterId).get()).docs.map((d) => [d.id, d.updateTime.valueOf()]));
    await call(resetCounter, { counterId }, ADMIN);
    const after = (await shardsRef(db, counterId).get()).docs;
    expect(after.filter((d) => d.updateTime.valueOf() !== before.get(d.id)).map((d) => d.id)).toHaveLength(1);
    expect(await shardSum(counterId)).toBe(0);
  });
});

describe("resetCounter and the coverage rule", () => {
  it("sets rollup.readTime between the last erased increment and its commit: earlier increments at or before it, later ones after", async () => {
    const counterId = await newCounter("reset-cover", 2);
    const before = await Promise.all([3, 4, -1].map((d, i) => increment(counterId, d, `pre-${i}`)));
    await call(resetCounter, { counterId }, ADMIN);
    const parent = await counterRef(db, counterId).get(); // no rollup runs in this tier: the reset wrote it last
    const readTime = parent.get("rollup.readTime") as Timestamp;
    expect(readTime).toBeInstanceOf(Timestamp);
    expect(readTime.valueOf() < parent.updateTime!.valueOf()).toBe(true); // the reset's commit time
    const after = await Promise.all([2, 5].map((d, i) => increment(counterId, d, `post-${i}`)));
    const asTimestamp = (r: IncrementResult) => new Timestamp(r.writeTime.seconds, r.writeTime.nanoseconds);
    for (const r of before) expect(asTimestamp(r).valueOf() <= readTime.valueOf()).toBe(true);
    for (const r of after) expect(asTimestamp(r).valueOf() > readTime.valueOf()).toBe(true);
    // total (0) + the increments after rollup.readTime = the shard sum: the rule a client relies on.
    expect(await shardSum(counterId)).toBe(7);
  });

  it("splits 200 increments racing a reset exactly at rollup.readTime: erased ones at or before, kept ones after", async () => {
    const counterId = await newCounter("reset-cover-race", 4);
    const deltas = Array.from({ length: 200 }, (_, i) => (i % 7 === 0 ? -3 : (i % 5) + 1));
    let reset: Promise<unknown> | undefined;
    const results = await withConcurrency(
      8,
      deltas.map((delta, i) => async () => {
        if (i === 70) reset = call(resetCounter, { counterId }, ADMIN);
        if (i === deltas.length - 1) await reset; // at least one increment comes after the reset
        return { delta, result: await increment(counterId, delta, `c-${i}`) };
      }),
    );
    await reset;
    const readTime = (await counterRef(db, counterId).get()).get("rollup.readTime") as Timestamp;
    const after = results.filter(({ result }) => new Timestamp(result.writeTime.seconds, result.writeTime.nanoseconds).valueOf() > readTime.valueOf());
    expect(after.length).toBeGreaterThan(0);
    expect(after.length).toBeLessThan(200);
    expect(await shardSum(counterId)).toBe(after.reduce((sum, { delta }) => sum + delta, 0));
  });

  it("leaves rollup.readTime absent on a new counter", async () => {
    const counterId = await newCounter("reset-absent", 1);
    expect((await counterRef(db, counterId).get()).get("rollup.readTime")).toBeUndefined();
  });
});

describe("reshardCounter", () => {
  it("reshards up: new shards at 0, the sum unchanged, increments land on all shards", async () => {
    const counterId = await newCounter("up", 2);
    for (const d of [5, 6]) await increment(counterId, d);
    await expect(call(reshardCounter, { counterId, numShards: 6 }, ADMIN)).resolves.toEqual({ counterId, numShards: 6 });
    expect(await shardIdsOf(counterId)).toEqual(["0", "1", "2", "3", "4", "5"]);
    expect(await shardSum(counterId)).toBe(11);
    expect((await readCounter(counterId)).numShards).toBe(6);
  });

  it("reshards down: removed shards are folded into kept ones and deleted, the sum unchanged", async () => {
    const counterId = await newCounter("down", 6);
    for (let i = 0; i < 30; i++) await increment(counterId, (i % 5) + 1);
    await call(reshardCounter, { counterId, numShards: 2 }, ADMIN);
    expect(await shardIdsOf(counterId)).toEqual(["0", "1"]);
    expect(await shardSum(counterId)).toBe(90);
    // Increments after it only use the kept shards, even from an instance that cached 6 shards.
    const later = await Promise.all(Array.from({ length: 20 }, () => increment(counterId, 1)));
    expect(later.every((r) => r.shard < 2)).toBe(true);
    expect(await shardIdsOf(counterId)).toEqual(["0", "1"]);
    expect(await shardSum(counterId)).toBe(110);
  });

  it("is a no-op for the same number of shards", async () => {
    const counterId = await newCounter("same", 3);
    await increment(counterId, 2);
    await call(reshardCounter, { counterId, numShards: 3 }, ADMIN);
    expect(await shardIdsOf(counterId)).toEqual(["0", "1", "2"]);
    expect(await shardSum(counterId)).toBe(2);
  });

  it("rejects numShards above MAX_GROWN_SHARDS with invalid-argument", async () => {
    const counterId = await newCounter("too-many", 3);
    const error = await errorOf(call(reshardCounter, { counterId, numShards: Number(process.env.MAX_GROWN_SHARDS) + 1 }, ADMIN));
    expect(error.code).toBe("invalid-argument");
    expect(error.message).toMatch(/numShards must be an integer from 1 to 1000/);
    expect(await shardIdsOf(counterId)).toEqual(["0", "1", "2"]);
  });

  it.each([
    ["down", 10, 3],
    ["up", 3, 10],
  ])("loses no increment when 200 increments race a reshard %s (%p → %p)", async (_dir, from, to) => {
    const counterId = await newCounter(`race-${String(_dir)}`, from);
    const deltas = Array.from({ length: 200 }, (_, i) => (i % 7 === 0 ? -1 : 2));
    let reshard: Promise<unknown> | undefined;
    const results = await withConcurrency(
      8,
      deltas.map((delta, i) => async () => {
        if (i === 50) reshard = call(reshardCounter, { counterId, numShards: to }, ADMIN);
        return increment(counterId, delta);
      }),
    );
    await reshard;
    expect(results.every((r) => r.applied)).toBe(true);
    expect(await shardIdsOf(counterId)).toEqual(Array.from({ length: to }, (_, i) => String(i)));
    expect(await shardSum(counterId)).toBe(deltas.reduce((a, b) => a + b, 0));
    expect((await readCounter(counterId)).numShards).toBe(to);
  });
});

describe("deleteCounter", () => {
  it("deletes the parent, the shards and the idempotency records", async () => {
    const counterId = await newCounter("delete", 3);
    await increment(counterId, 2, "d-1");
    await increment(counterId, 2, "d-2");
    await expect(call(deleteCounter, { counterId }, ADMIN)).resolves.toEqual({ counterId });
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("makes later increments not-found, leaving nothing behind, with or without a requestId", async () => {
    const counterId = await newCounter("delete-after", 3);
    await increment(counterId, 1); // warm this instance's shard cache
    await call(deleteCounter, { counterId }, ADMIN);
    expect((await errorOf(increment(counterId, 1))).code).toBe("not-found");
    expect((await errorOf(increment(counterId, 1, "late-key"))).code).toBe("not-found");
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("leaves nothing behind when 200 increments race it", async () => {
    const counterId = await newCounter("delete-race", 8);
    const { outcomes, deletedAt } = await raceWithDelete(counterId, 200, 80, async (i) => {
      await increment(counterId, 1, `x-${i}`);
      return "applied";
    });
    expect(outcomes.every((o) => o.outcome === "applied" || o.outcome === "not-found")).toBe(true);
    expect(outcomes.filter((o) => o.startedAt > deletedAt).every((o) => o.outcome === "not-found")).toBe(true);
    expect(outcomes.filter((o) => o.outcome === "not-found").length).toBeGreaterThan(0);
    expect(await documentsUnder(counterId)).toEqual([]);
  });
});
