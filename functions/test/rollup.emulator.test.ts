// The rollup trigger, wrapped, fed real before/after snapshots from the Firestore emulator. Each test
// delivers events the way the platform may: twice, out of order, failing half-way and retried, in a
// burst, or after the counter is gone. "commits" is rollup.commits on the parent: the rollup increments it
// in the same write that sets total, so it counts parent writes by the rollup exactly.
import { FieldValue, Timestamp } from "firebase-admin/firestore";
import {
  db,
  deleteShard,
  deliver,
  newCounter,
  readCounter,
  shardSum,
  uniqueId,
  writeShard,
  type RecordedWrite,
} from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { INTERVAL_MS, rollupDeps, shardWriteOf } from "../../test/helpers/rollup";
import { counterRef, leaseRef, shardRef } from "../src/model/paths";
import { dueMsFor } from "../src/rollup/plan";
import { microsCeil } from "../src/model/time";
import { rollupShardWrite } from "../src/rollup/index";
import { staleAfterMsFor } from "../src/rollup/plan";
import { type ClaimMemo, type ParentMemo, type RollupDeps } from "../src/rollup/types";
import { redistributeShards } from "../src/counters/reshard";

// Bursts of hundreds of emulator calls: generous, for a shared 2-core machine; assertions count, never time.
jest.setTimeout(60_000);

beforeAll(requireEmulators);

/** The rollup's dependencies as the trigger gives them, with overrides. */
const deps = rollupDeps;

/** Deps whose rollup throws when it reaches `stage`, as a crashing instance would. */
function crashAt(stage: "claimed" | "summed"): RollupDeps {
  return deps({
    onStage: (reached) => {
      if (reached === stage) throw new Error(`simulated crash at stage ${stage}`);
    },
  });
}

/**
 * A counter whose rollup wrote the parent just now (as a commit sets `rollup.committedAt`), so the
 * next writes are not on an idle counter: they claim a slot and wait for it instead of leading.
 */
async function busyCounter(prefix: string, numShards: number): Promise<string> {
  const counterId = await newCounter(prefix, numShards);
  await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp() });
  return counterId;
}

/** Resolves just after this counter's next slot boundary (returned), so the writes that follow share one slot. */
async function startOfSlot(counterId: string, intervalMs = INTERVAL_MS): Promise<number> {
  const boundaryMs = dueMsFor(counterId, Date.now() * 1000, intervalMs);
  await sleepUntil(boundaryMs + 20);
  return boundaryMs;
}

async function sleepUntil(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - Date.now())));
}

function shuffled<T>(items: T[], seed = 7): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("rollupTotal", () => {
  it("sets the total from the shards after one event", async () => {
    const counterId = await newCounter("one", 3);
    const w = await writeShard(counterId, 1, 5);
    await deliver(w);
    expect(await readCounter(counterId)).toMatchObject({ total: 5, commits: 1 });
  });

  it("counts an event delivered twice (at once and later) exactly once", async () => {
    const counterId = await newCounter("twice", 3);
    const w = await writeShard(counterId, 0, 7);
    await Promise.all([deliver(w), deliver(w)]);
    await deliver(w);
    expect(await readCounter(counterId)).toMatchObject({ total: 7, commits: 1 });
    expect(await shardSum(counterId)).toBe(7);
  });

  it("is exact when events arrive in reverse order", async () => {
    const counterId = await newCounter("reverse", 2);
    const writes: RecordedWrite[] = [];
    for (const [shard, delta] of [[0, 5], [1, 3], [0, -2], [1, 10], [0, 1]] as const) {
      writes.push(await writeShard(counterId, shard, delta));
    }
    for (const w of [...writes].reverse()) await deliver(w);
    expect((await readCounter(counterId)).total).toBe(17);
    expect(await shardSum(counterId)).toBe(17);
  });

  it("is exact when an invocation fails after summing and is retried", async () => {
    const counterId = await newCounter("crash-sum", 2);
    const w = await writeShard(counterId, 0, 4);
    const crash = crashAt("summed");
    await expect(rollupShardWrite(shardWriteOf(w), crash)).rejects.toThrow("simulated crash");
    expect((await readCounter(counterId)).total).toBe(0);
    await deliver(w); // the platform's retry of the same event
    expect(await readCounter(counterId)).toMatchObject({ total: 4, commits: 1 });
  });

  it("is exact when the claimer of a slot fails after others deferred to it, once it is retried", async () => {
    const counterId = await busyCounter("crash-claim", 2);
    const a = await writeShard(counterId, 0, 2);
    const b = await writeShard(counterId, 1, 3);
    const crash = crashAt("claimed");
    await expect(rollupShardWrite(shardWriteOf(a), crash)).rejects.toThrow("simulated crash");
    const deferred = await rollupShardWrite(shardWriteOf(b), deps());
    // b's write is in the same slot or an earlier one than the lease: it relies on the claimer.
    expect(deferred.kind === "defer" || deferred.kind === "committed").toBe(true);
    await deliver(a); // retry of the claimer's event
    expect((await readCounter(counterId)).total).toBe(5);
  });

  it("takes over a claim whose claimer never came back, once it is stale", async () => {
    const counterId = await busyCounter("stale", 2);
    const a = await writeShard(counterId, 0, 2);
    const b = await writeShard(counterId, 1, 3);
    const crash = crashAt("claimed");
    await expect(rollupShardWrite(shardWriteOf(a), crash)).rejects.toThrow();
    // Pretend time has moved on past the stale limit: the next delivery does the claimer's work.
    const later = deps({ nowMs: () => Date.now() + staleAfterMsFor(INTERVAL_MS) + INTERVAL_MS });
    const outcome = await rollupShardWrite(shardWriteOf(b), later);
    expect(outcome.kind).toBe("committed");
    expect((await readCounter(counterId)).total).toBe(5);
  });

  it("reflects a deleted shard (the event time stands for the delete's commit)", async () => {
    const counterId = await newCounter("delshard", 3);
    await deliver(await writeShard(counterId, 2, 9));
    await deliver(await writeShard(counterId, 0, 1));
    await deliver(await deleteShard(counterId, 2));
    expect((await readCounter(counterId)).total).toBe(1);
  });

  it("skips writes that do not change a count without touching the parent", async () => {
    const counterId = await newCounter("noop", 2);
    const w = await writeShard(counterId, 0, 0);
    await deliver(w);
    expect(await readCounter(counterId)).toMatchObject({ total: 0, commits: 0 });
  });

  it("keeps the total exact and writes the parent about once per interval while 200 writes land live", async () => {
    const counterId = await newCounter("burst", 20);
    const deliveries: Promise<unknown>[] = [];
    const started = Date.now();
    // 20 shards written in parallel, 10 writes each; each event is delivered as soon as its write lands.
    let expected = 0;
    await Promise.all(
      Array.from({ length: 20 }, async (_, shard) => {
        for (let i = 0; i < 10; i++) {
          const delta = (shard + i) % 3 === 0 ? -1 : 2;
          expected += delta;
          const w = await writeShard(counterId, shard, delta);
          deliveries.push(deliver(w));
        }
      }),
    );
    const writesMs = Date.now() - started;
    await Promise.all(deliveries);
    const parent = await readCounter(counterId);
    console.log(`200 writes took ${writesMs} ms; rollup wrote the parent ${parent.commits} times`);
    expect(await shardSum(counterId)).toBe(expected);
    expect(parent.total).toBe(expected);
    expect(parent.commits).toBeGreaterThanOrEqual(1);
    // One slot per interval the writes spanned, plus the slot the last write falls in.
    expect(parent.commits).toBeLessThanOrEqual(Math.max(4, Math.ceil(writesMs / INTERVAL_MS) + 2));
  });

  it("collapses 200 recorded events, delivered shuffled within one second, into at most 4 parent writes", async () => {
    const counterId = await newCounter("shuffled", 20);
    const writes = (
      await Promise.all(
        Array.from({ length: 20 }, async (_, shard) => {
          const out: RecordedWrite[] = [];
          for (let i = 0; i < 10; i++) out.push(await writeShard(counterId, shard, i % 4 === 0 ? -3 : 1));
          return out;
        }),
      )
    ).flat();
    const order = shuffled(writes);
    const deliveries = order.map(
      (w, i) => new Promise((resolve) => setTimeout(resolve, (i * 1000) / order.length)).then(() => deliver(w)),
    );
    await Promise.all(deliveries);
    const parent = await readCounter(counterId);
    expect(parent.total).toBe(await shardSum(counterId));
    expect(parent.total).toBe(20 * (7 * 1 + 3 * -3));
    expect(parent.commits).toBeLessThanOrEqual(4);
  });

  it("never creates the parent for shard events of a counter that was deleted", async () => {
    const counterId = await newCounter("deleted", 2);
    const w = await writeShard(counterId, 0, 3);
    const batch = db.batch();
    batch.delete(counterRef(db, counterId));
    batch.delete(shardRef(db, counterId, 0));
    batch.delete(shardRef(db, counterId, 1));
    await batch.commit();
    await deliver(w);
    expect((await counterRef(db, counterId).get()).exists).toBe(false);
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("never creates the parent for shard events of a counter that never existed", async () => {
    const counterId = uniqueId("never");
    const w = await writeShard(counterId, 0, 1);
    await deliver(w);
    expect((await counterRef(db, counterId).get()).exists).toBe(false);
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("does not recreate a parent deleted while the claimer waits for its slot", async () => {
    const counterId = await busyCounter("race-delete", 1);
    const w = await writeShard(counterId, 0, 3);
    // Delete right after the claim, before the wait for the slot: a fixed delay after delivery could
    // land after a slot that happened to be due within it, and then test nothing.
    const deleteOnClaim = deps({
      onStage: async (stage) => {
        if (stage === "claimed") await counterRef(db, counterId).delete();
      },
    });
    expect(await rollupShardWrite(shardWriteOf(w), deleteOnClaim)).toMatchObject({ kind: "gone" });
    expect((await counterRef(db, counterId).get()).exists).toBe(false);
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("also fails and retries exactly on the leading edge (an idle counter: no claim, no lease)", async () => {
    const counterId = await newCounter("crash-lead", 2);
    const w = await writeShard(counterId, 1, 6);
    await expect(rollupShardWrite(shardWriteOf(w), crashAt("summed"))).rejects.toThrow("simulated crash");
    expect(await readCounter(counterId)).toMatchObject({ total: 0, commits: 0 });
    await deliver(w);
    expect(await readCounter(counterId)).toMatchObject({ total: 6, commits: 1 });
  });
});

describe("rollupTotal leading edge", () => {
  it("rolls up an increment on an idle counter at once: one parent read, one sum, one parent write, no lease", async () => {
    const counterId = await newCounter("lead", 3);
    const w = await writeShard(counterId, 2, 4);
    const outcome = await rollupShardWrite(shardWriteOf(w), deps());
    expect(outcome).toMatchObject({ kind: "committed", dueMs: null, total: 4 });
    expect(outcome.ops).toEqual({ reads: 1, writes: 1, aggregations: 1, waitMs: 0 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
    expect(await readCounter(counterId)).toMatchObject({ total: 4, commits: 1 });
  });

  it("makes the next increment within the interval claim a slot instead, and stays exact", async () => {
    const counterId = await newCounter("lead-then-slot", 3);
    const first = await writeShard(counterId, 0, 2);
    expect(await rollupShardWrite(shardWriteOf(first), deps())).toMatchObject({ kind: "committed", dueMs: null });
    const second = await writeShard(counterId, 1, 5);
    const outcome = await rollupShardWrite(shardWriteOf(second), deps());
    expect(outcome.kind).toBe("committed");
    expect(outcome.kind === "committed" && outcome.dueMs).not.toBeNull();
    // Parent, lease, lease write (the claim), the sum after the wait, the commit onto the parent read before
    // it (nothing wrote it meanwhile), and the lease deleted again: a lease exists only while its claim is pending.
    expect(outcome.ops).toMatchObject({ reads: 2, writes: 3, aggregations: 1 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
    expect(await readCounter(counterId)).toMatchObject({ total: 7, commits: 2 });
  });

  it("commits once when many events of an idle counter lead at the same moment", async () => {
    const counterId = await newCounter("lead-race", 10);
    const writes = await Promise.all(Array.from({ length: 10 }, (_, shard) => writeShard(counterId, shard, shard + 1)));
    await Promise.all(writes.map((w) => deliver(w)));
    const parent = await readCounter(counterId);
    expect(parent.total).toBe(55);
    // The first sum covers every write (all committed before any delivery): the others find it.
    expect(parent.commits).toBe(1);
  });

  it("counts a duplicate as the parent and the lease read while the covering sum is less than an interval after the write", async () => {
    const counterId = await newCounter("dup-ops", 2);
    const w = await writeShard(counterId, 0, 3);
    await deliver(w);
    // The leading edge read its sum a few ms after the write: a claim of this event could still be
    // pending (rollup/plan.ts, a claimer's retry honours its claim), so the lease is read too.
    const again = await rollupShardWrite(shardWriteOf(w), deps());
    expect(again).toMatchObject({ kind: "skip", reason: "covered" });
    expect(again.ops).toEqual({ reads: 2, writes: 0, aggregations: 0, waitMs: 0 });
  });

  it("counts a duplicate as one read once the covering sum is an interval or more after the write", async () => {
    const counterId = await newCounter("dup-ops-late", 2);
    const fast = deps({ intervalMs: 50, staleAfterMs: staleAfterMsFor(50) }); // the commits record 50 ms
    const w = await writeShard(counterId, 0, 3);
    await rollupShardWrite(shardWriteOf(w), fast);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await rollupShardWrite(shardWriteOf(await writeShard(counterId, 1, 1)), fast)).toMatchObject({ kind: "committed", dueMs: null });
    const again = await rollupShardWrite(shardWriteOf(w), fast);
    expect(again).toMatchObject({ kind: "skip", reason: "covered" });
    expect(again.ops).toEqual({ reads: 1, writes: 0, aggregations: 0, waitMs: 0 });
  });
});

describe("rollupTotal claims (the lease)", () => {
  it("finishes a claim when its claimer is retried, although a leading edge covered the claimer's own write (docs/rollup.md)", async () => {
    // The schedule on the real emulator, inside one slot of this counter (due at D), with a 3 s
    // interval so that it fits in a slot even on a loaded machine: the last commit K was half an interval
    // before the slot started; C's write, just after the start, is not idle and claims D, then C's
    // invocation fails; L, an interval after K, finds the counter idle and leads; E, after L's sum and
    // before D, defers to C's claim; C is retried.
    const intervalMs = 3000;
    const slow = (overrides: Partial<RollupDeps> = {}) => deps({ intervalMs, staleAfterMs: staleAfterMsFor(intervalMs), ...overrides });
    const counterId = await newCounter("bug1", 3);
    const slotStartMs = await startOfSlot(counterId, intervalMs);
    const dueMs = slotStartMs + intervalMs;
    await counterRef(db, counterId).update({
      "rollup.committedAt": Timestamp.fromMillis(slotStartMs - intervalMs / 2),
      "rollup.intervalMs": intervalMs,
    });
    const c = await writeShard(counterId, 0, 2);
    const crash = slow({ onStage: (stage) => Promise.reject(new Error(`simulated crash at stage ${stage}`)) });
    await expect(rollupShardWrite(shardWriteOf(c), crash)).rejects.toThrow("simulated crash");
    await sleepUntil(slotStartMs + intervalMs / 2 + 20);
    const l = await writeShard(counterId, 1, 3);
    expect(await rollupShardWrite(shardWriteOf(l), slow())).toMatchObject({ kind: "committed", dueMs: null });
    const e = await writeShard(counterId, 2, 4);
    expect(microsCeil(e.after.updateTime!)).toBeLessThan(dueMs * 1000); // the schedule fits in the slot
    expect(await rollupShardWrite(shardWriteOf(e), slow())).toMatchObject({ kind: "defer", toDueMs: dueMs });
    expect((await readCounter(counterId)).total).toBe(5);
    // The platform retries C: its own write is covered by L's sum, its claim is not.
    expect(await rollupShardWrite(shardWriteOf(c), slow())).toMatchObject({ kind: "committed", dueMs });
    expect(await readCounter(counterId)).toMatchObject({ total: 9, commits: 2 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("stays exact when ROLLUP_INTERVAL_MS changes from 1000 to 5000 ms while the counter is busy (docs/rollup.md)", async () => {
    const counterId = await busyCounter("bug2", 2);
    const a = await writeShard(counterId, 0, 2);
    expect(await rollupShardWrite(shardWriteOf(a), deps({ intervalMs: 1000 }))).toMatchObject({ kind: "committed" });
    // A deploy changes the interval: the next event runs with 5000 ms and must not wait on a due time
    // computed with another interval.
    const b = await writeShard(counterId, 1, 3);
    const outcome = await rollupShardWrite(shardWriteOf(b), deps({ intervalMs: 5000, staleAfterMs: staleAfterMsFor(5000) }));
    expect(outcome).toMatchObject({ kind: "committed" });
    expect((await readCounter(counterId)).total).toBe(5);
  });

  it("deletes its own fulfilled lease when its event comes again after the commit (a crash after committing)", async () => {
    const counterId = await busyCounter("release", 2);
    // A recorded interval well above the claim's: the retry's covering sum is surely within it.
    await counterRef(db, counterId).update({ "rollup.intervalMs": 5000 });
    const a = await writeShard(counterId, 0, 2);
    let claimVersion: Timestamp | undefined;
    const crashAfterCommit = deps({
      onStage: async (stage) => {
        if (stage === "summed") claimVersion = (await leaseRef(db, counterId).get()).updateTime;
      },
    });
    // The commit lands, then the invocation dies before it can delete the lease.
    const store = crashAfterCommit.store;
    crashAfterCommit.store = {
      ...store,
      deleteClaim: () => Promise.reject(new Error("simulated crash after the commit")),
    };
    await expect(rollupShardWrite(shardWriteOf(a), crashAfterCommit)).rejects.toThrow("simulated crash");
    expect((await readCounter(counterId)).total).toBe(2);
    expect((await leaseRef(db, counterId).get()).updateTime).toEqual(claimVersion);
    const retry = await rollupShardWrite(shardWriteOf(a), deps());
    expect(retry).toMatchObject({ kind: "skip", reason: "covered" });
    expect(retry.ops).toMatchObject({ reads: 2, writes: 1, aggregations: 0 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });
});

describe("rollupTotal claim memo (events covered by a claim this instance holds)", () => {
  it("defers a later event due by the held claim without reading, and the claimer's sum includes it", async () => {
    const counterId = await busyCounter("memo", 2);
    const claims: ClaimMemo = new Map();
    await startOfSlot(counterId);
    const a = await writeShard(counterId, 0, 2);
    let b: RecordedWrite | undefined;
    let deferred: Awaited<ReturnType<typeof rollupShardWrite>> | undefined;
    const claimer = deps({
      claims,
      onStage: async (stage) => {
        if (stage !== "claimed") return;
        // While the claimer waits for its slot: another write lands and its event reaches this instance.
        b = await writeShard(counterId, 1, 3);
        deferred = await rollupShardWrite(shardWriteOf(b), deps({ claims }));
      },
    });
    const outcome = await rollupShardWrite(shardWriteOf(a), claimer);
    expect(deferred).toMatchObject({ kind: "defer", memo: true });
    expect(deferred!.ops).toEqual({ reads: 0, writes: 0, aggregations: 0, waitMs: 0 });
    expect(outcome).toMatchObject({ kind: "committed", total: 5 });
    expect(claims.size).toBe(0);
    expect(await readCounter(counterId)).toMatchObject({ total: 5, commits: 1 });
  });

  it("forgets the claim when the claimer throws, so the next event reads and the retry finishes the slot", async () => {
    const counterId = await busyCounter("memo-crash", 2);
    const claims: ClaimMemo = new Map();
    const a = await writeShard(counterId, 0, 4);
    const crash = deps({
      claims,
      onStage: (stage) => {
        if (stage === "summed") throw new Error("simulated crash at stage summed");
      },
    });
    await expect(rollupShardWrite(shardWriteOf(a), crash)).rejects.toThrow("simulated crash");
    expect(claims.size).toBe(0);
    const b = await writeShard(counterId, 1, 1);
    const outcome = await rollupShardWrite(shardWriteOf(b), deps({ claims }));
    expect(outcome.ops.reads).toBeGreaterThan(0);
    await rollupShardWrite(shardWriteOf(a), deps({ claims })); // the platform's retry of the claimer
    expect((await readCounter(counterId)).total).toBe(5);
  });

  it("does not defer an event written after the held claim's due time", async () => {
    const counterId = await busyCounter("memo-later", 1);
    const claims: ClaimMemo = new Map([[counterId, 1]]); // a claim due long ago
    const w = await writeShard(counterId, 0, 2);
    const outcome = await rollupShardWrite(shardWriteOf(w), deps({ claims }));
    expect(outcome.kind).toBe("committed");
    expect((await readCounter(counterId)).total).toBe(2);
  });
});

describe("rollupTotal on a counter of one shard: the event is the sum (docs/rollup.md)", () => {
  it("commits an idle increment from the event's own shard at the write's time: one parent read, one write, no aggregation", async () => {
    const counterId = await newCounter("snap", 1);
    await deliver(await writeShard(counterId, 0, 3));
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 50)); // idle again
    const w = await writeShard(counterId, 0, 4);
    const outcome = await rollupShardWrite(shardWriteOf(w), deps());
    expect(outcome).toMatchObject({ kind: "committed", dueMs: null, total: 7 });
    expect(outcome.ops).toEqual({ reads: 1, writes: 1, aggregations: 0, waitMs: 0 });
    const parent = await counterRef(db, counterId).get();
    expect((parent.get("rollup.readTime") as Timestamp).isEqual(w.after.updateTime!)).toBe(true);
    expect(await readCounter(counterId)).toMatchObject({ total: 7, commits: 2 });
  });

  it("sums the shards for a late event of a write made before a reshard down to one shard", async () => {
    const counterId = await newCounter("snap-reshard", 3);
    const early = await writeShard(counterId, 0, 2);
    await writeShard(counterId, 2, 5); // its event comes later, or never: the sum must hold it all the same
    await redistributeShards(db, counterId, 1);
    const outcome = await rollupShardWrite(shardWriteOf(early), deps());
    // The one shard as the early event saw it held 2; the counter held 7 then, and holds 7 now.
    expect(outcome).toMatchObject({ kind: "committed", total: 7 });
    expect(outcome.ops.aggregations).toBeGreaterThanOrEqual(1);
    expect(await readCounter(counterId)).toMatchObject({ total: 7 });
    expect(await shardSum(counterId)).toBe(7);
  });

  it("starts the next idle increment from the parent its instance's last commit left, and reads it when another commit came first", async () => {
    const counterId = await newCounter("snap-memo", 1);
    const parents: ParentMemo = new Map();
    const fast = { intervalMs: 50, staleAfterMs: staleAfterMsFor(50) }; // idle again 50 ms after a commit
    const idle = () => new Promise((resolve) => setTimeout(resolve, 80));
    const first = await rollupShardWrite(shardWriteOf(await writeShard(counterId, 0, 2)), deps({ ...fast, parents }));
    expect(first.ops).toEqual({ reads: 1, writes: 1, aggregations: 0, waitMs: 0 });
    await idle();
    const second = await rollupShardWrite(shardWriteOf(await writeShard(counterId, 0, 3)), deps({ ...fast, parents }));
    expect(second).toMatchObject({ kind: "committed", total: 5 });
    expect(second.ops).toEqual({ reads: 0, writes: 1, aggregations: 0, waitMs: 0 });
    await idle();
    // Another instance commits: this one's memory of the parent is stale now.
    await rollupShardWrite(shardWriteOf(await writeShard(counterId, 0, 1)), deps(fast));
    await idle();
    const third = await rollupShardWrite(shardWriteOf(await writeShard(counterId, 0, 4)), deps({ ...fast, parents }));
    // The commit onto the remembered parent failed its precondition; the event read the parent and committed.
    expect(third).toMatchObject({ kind: "committed", total: 10 });
    expect(third.ops).toEqual({ reads: 1, writes: 1, aggregations: 0, waitMs: 0 });
    expect(await readCounter(counterId)).toMatchObject({ total: 10, commits: 4 });
  });
});
