// The rollup trigger, wrapped, fed real before/after snapshots from the Firestore emulator. Each test
// delivers events the way the platform may: twice, out of order, failing half-way and retried, in a
// burst, or after the counter is gone. "commits" is rollup.commits on the parent: the rollup increments it
// in the same write that sets total, so it counts parent writes by the rollup exactly.
import { FieldValue, type Timestamp } from "firebase-admin/firestore";
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
import { rollupShardWrite } from "../src/rollup/index";
import { ownerKeyOf, resumeAfterMsFor, staleAfterMsFor } from "../src/rollup/plan";
import { type ParentMemo, type RollupDeps } from "../src/rollup/types";
import { redistributeShards } from "../src/counters/reshard";

// Bursts of hundreds of emulator calls: generous, for a shared 2-core machine; assertions count, never time.
jest.setTimeout(60_000);

beforeAll(requireEmulators);

/** The rollup's dependencies as the trigger gives them, with overrides. */
const deps = rollupDeps;

/** Deps whose rollup throws when it reaches `stage`, as a crashing instance would. */
function crashAt(stage: "committed" | "summed"): RollupDeps {
  return deps({
    onStage: (reached) => {
      if (reached === stage) throw new Error(`simulated crash at stage ${stage}`);
    },
  });
}

/**
 * A counter whose rollup wrote the parent just now (as a commit sets `rollup.committedAt`), so the
 * next writes are not on an idle counter: the first starts a chain (a commit with a promise) instead of leading.
 */
async function busyCounter(prefix: string, numShards: number): Promise<string> {
  const counterId = await newCounter(prefix, numShards);
  await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp() });
  return counterId;
}

/** The parent's promise as stored: `rollup.trailing`, with its due time in ms. */
async function promiseOf(counterId: string): Promise<{ dueMs: number; owner: string } | null> {
  const trailing = (await counterRef(db, counterId).get()).get("rollup.trailing") as { dueAt: Timestamp; owner: string } | undefined;
  return trailing === undefined ? null : { dueMs: trailing.dueAt.toMillis(), owner: trailing.owner };
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

  it("is exact when the owner of a promise fails after others deferred to it, once its event is retried", async () => {
    const counterId = await busyCounter("crash-owner", 2);
    const a = await writeShard(counterId, 0, 2);
    // a starts a chain: it commits 2 with a promise of the next slot, then its instance dies.
    await expect(rollupShardWrite(shardWriteOf(a), crashAt("committed"))).rejects.toThrow("simulated crash");
    const promise = await promiseOf(counterId);
    expect(promise).toMatchObject({ owner: ownerKeyOf(shardWriteOf(a)) });
    const b = await writeShard(counterId, 1, 3);
    expect(await rollupShardWrite(shardWriteOf(b), deps())).toMatchObject({ kind: "defer", toDueMs: promise!.dueMs });
    expect((await readCounter(counterId)).total).toBe(2);
    // The platform retries a's event once the promise is overdue: its own write is covered, its promise is not.
    const retried = deps({ nowMs: () => Date.now() + INTERVAL_MS + resumeAfterMsFor(INTERVAL_MS) });
    expect(await rollupShardWrite(shardWriteOf(a), retried)).toMatchObject({ kind: "committed", path: "resume", total: 5 });
    expect((await readCounter(counterId)).total).toBe(5);
  });

  it("returns for an owner's retry that comes while its promise may still be carried, as for any covered write", async () => {
    const counterId = await busyCounter("early-retry", 2);
    const a = await writeShard(counterId, 0, 2);
    await expect(rollupShardWrite(shardWriteOf(a), crashAt("committed"))).rejects.toThrow("simulated crash");
    const retry = await rollupShardWrite(shardWriteOf(a), deps());
    expect(retry).toMatchObject({ kind: "skip", reason: "covered" });
    expect(retry.ops).toEqual({ reads: 1, writes: 0, aggregations: 0, waitMs: 0 });
  });

  it("takes over a promise whose owner never came back, once it is stale", async () => {
    const counterId = await busyCounter("stale", 2);
    const a = await writeShard(counterId, 0, 2);
    await expect(rollupShardWrite(shardWriteOf(a), crashAt("committed"))).rejects.toThrow();
    const b = await writeShard(counterId, 1, 3);
    // Pretend time has moved on past the stale limit: the next delivery does the owner's work, and owns the next promise.
    const later = deps({ nowMs: () => Date.now() + staleAfterMsFor(INTERVAL_MS) + INTERVAL_MS });
    const outcome = await rollupShardWrite(shardWriteOf(b), later);
    expect(outcome).toMatchObject({ kind: "committed", path: "takeover", total: 5 });
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
  });

  it("never creates the parent for shard events of a counter that never existed", async () => {
    const counterId = uniqueId("never");
    const w = await writeShard(counterId, 0, 1);
    await deliver(w);
    expect((await counterRef(db, counterId).get()).exists).toBe(false);
  });

  it("does not recreate a parent deleted while the owner of its promise waits for the next slot", async () => {
    const counterId = await busyCounter("race-delete", 1);
    const w = await writeShard(counterId, 0, 3);
    // Delete right after the commit that made the promise, before its owner's wait; a write still lands on
    // the shard, so that the owner's next sum has something to commit.
    const deleteOnPromise = deps({
      onStage: async (stage) => {
        if (stage !== "committed") return;
        await counterRef(db, counterId).delete();
        await writeShard(counterId, 0, 1);
      },
    });
    expect(await rollupShardWrite(shardWriteOf(w), deleteOnPromise)).toMatchObject({ kind: "committed", path: "start", commits: 1, end: "gone" });
    expect((await counterRef(db, counterId).get()).exists).toBe(false);
  });

  it("also fails and retries exactly on the leading edge (an idle counter: no promise)", async () => {
    const counterId = await newCounter("crash-lead", 2);
    const w = await writeShard(counterId, 1, 6);
    await expect(rollupShardWrite(shardWriteOf(w), crashAt("summed"))).rejects.toThrow("simulated crash");
    expect(await readCounter(counterId)).toMatchObject({ total: 0, commits: 0 });
    await deliver(w);
    expect(await readCounter(counterId)).toMatchObject({ total: 6, commits: 1 });
  });
});

describe("rollupTotal leading edge", () => {
  it("rolls up an increment on an idle counter at once: one parent read, one sum, one parent write, no promise", async () => {
    const counterId = await newCounter("lead", 3);
    const w = await writeShard(counterId, 2, 4);
    const outcome = await rollupShardWrite(shardWriteOf(w), deps());
    expect(outcome).toMatchObject({ kind: "committed", path: "lead", total: 4, commits: 1 });
    expect(outcome.ops).toEqual({ reads: 1, writes: 1, aggregations: 1, waitMs: 0 });
    expect(await promiseOf(counterId)).toBeNull();
    expect(await readCounter(counterId)).toMatchObject({ total: 4, commits: 1 });
  });

  it("makes the next increment within the interval start a chain: one commit with a promise, no other document written", async () => {
    const counterId = await newCounter("lead-then-chain", 3);
    const first = await writeShard(counterId, 0, 2);
    expect(await rollupShardWrite(shardWriteOf(first), deps())).toMatchObject({ kind: "committed", path: "lead" });
    const second = await writeShard(counterId, 1, 5);
    let promised: { dueMs: number; owner: string } | null = null;
    const outcome = await rollupShardWrite(
      shardWriteOf(second),
      deps({
        onStage: async (stage) => {
          if (stage === "committed") promised = await promiseOf(counterId);
        },
      }),
    );
    // Its own commit at once (the parent read, a sum, the write with the promise), then, as the promise's
    // owner, one wait and one more sum at its due time: nothing applied since, so the chain ends with no write.
    expect(outcome).toMatchObject({ kind: "committed", path: "start", total: 7, commits: 1, end: "quiet" });
    expect(outcome.ops).toMatchObject({ reads: 1, writes: 1, aggregations: 2 });
    expect(outcome.ops.waitMs).toBeGreaterThan(0);
    expect(promised).toMatchObject({ owner: ownerKeyOf(shardWriteOf(second)) });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
    expect(await readCounter(counterId)).toMatchObject({ total: 7, commits: 2 });
  });

  it("carries the chain: a write that deferred to the promise is in the owner's next commit, which makes the next promise", async () => {
    // A 3 s interval, so that the write below lands well before the promise is due, however loaded the machine.
    const slow = (overrides: Partial<RollupDeps> = {}) => deps({ intervalMs: 3000, staleAfterMs: staleAfterMsFor(3000), ...overrides });
    const counterId = await busyCounter("chain", 2);
    const first = await writeShard(counterId, 0, 1);
    let deferred: Promise<unknown> | undefined;
    const outcome = await rollupShardWrite(
      shardWriteOf(first),
      slow({
        onStage: async (stage) => {
          if (stage !== "committed") return;
          const promised = await promiseOf(counterId);
          const later = await writeShard(counterId, 1, 10);
          deferred = rollupShardWrite(shardWriteOf(later), slow()).then((o) => expect(o).toMatchObject({ kind: "defer", toDueMs: promised!.dueMs }));
        },
      }),
    );
    await deferred;
    // The start's commit, the owner's commit of the deferred write (with the next promise), then a quiet end.
    expect(outcome).toMatchObject({ kind: "committed", path: "start", total: 11, commits: 2, end: "quiet" });
    expect(await readCounter(counterId)).toMatchObject({ total: 11, commits: 2 });
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

  it("counts a duplicate as one read, and none on an instance that has seen the parent since", async () => {
    const counterId = await newCounter("dup-ops", 2);
    const w = await writeShard(counterId, 0, 3);
    const parents: ParentMemo = new Map();
    await rollupShardWrite(shardWriteOf(w), deps({ parents }));
    const again = await rollupShardWrite(shardWriteOf(w), deps());
    expect(again).toMatchObject({ kind: "skip", reason: "covered" });
    expect(again.ops).toEqual({ reads: 1, writes: 0, aggregations: 0, waitMs: 0 });
    const remembered = await rollupShardWrite(shardWriteOf(w), deps({ parents }));
    expect(remembered).toMatchObject({ kind: "skip", reason: "covered" });
    expect(remembered.ops).toEqual({ reads: 0, writes: 0, aggregations: 0, waitMs: 0 });
  });
});

describe("rollupTotal promises across interval changes and incarnations", () => {
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

  it("defers a write to the promise its instance remembers, without reading anything; the owner's sum includes it", async () => {
    const counterId = await busyCounter("memo", 2);
    const parents: ParentMemo = new Map();
    const a = await writeShard(counterId, 0, 2);
    let deferred: Awaited<ReturnType<typeof rollupShardWrite>> | undefined;
    const owner = deps({
      parents,
      onStage: async (stage) => {
        if (stage !== "committed") return;
        // While the owner waits for its promise: another write lands and its event reaches this instance.
        const b = await writeShard(counterId, 1, 3);
        deferred = await rollupShardWrite(shardWriteOf(b), deps({ parents }));
      },
    });
    const outcome = await rollupShardWrite(shardWriteOf(a), owner);
    expect(deferred).toMatchObject({ kind: "defer", memo: true });
    expect(deferred!.ops).toEqual({ reads: 0, writes: 0, aggregations: 0, waitMs: 0 });
    expect(outcome).toMatchObject({ kind: "committed", total: 5, commits: 2 });
    expect(await readCounter(counterId)).toMatchObject({ total: 5, commits: 2 });
  });

  it("reads the parent for a write to a counter deleted and created again since its instance remembered a promise", async () => {
    const counterId = await busyCounter("memo-again", 1);
    const parents: ParentMemo = new Map();
    const a = await writeShard(counterId, 0, 2);
    // An owner made a promise (its instance remembers it), then failed.
    await expect(rollupShardWrite(shardWriteOf(a), deps({ parents, ...crashAt("committed") }))).rejects.toThrow("simulated crash");
    expect(parents.get(counterId)?.view.trailing).toMatchObject({ owner: ownerKeyOf(shardWriteOf(a)) });
    // The counter is deleted and created again with the same id, and written at once, within the old promise.
    const batch = db.batch();
    batch.delete(counterRef(db, counterId));
    batch.delete(shardRef(db, counterId, 0));
    await batch.commit();
    const again = db.batch();
    again.create(counterRef(db, counterId), { numShards: 1, total: 0, createdAt: FieldValue.serverTimestamp() });
    again.create(shardRef(db, counterId, 0), { count: 0, writes: 0 });
    await again.commit();
    const b = await writeShard(counterId, 0, 4);
    const outcome = await rollupShardWrite(shardWriteOf(b), deps({ parents }));
    // Its shard is newer than what the instance remembers: it reads the new parent, and leads.
    expect(outcome).toMatchObject({ kind: "committed", path: "lead", total: 4 });
    expect(outcome.ops.reads).toBe(1);
    expect(await readCounter(counterId)).toMatchObject({ total: 4 });
  });

  it("does not defer a write made after the remembered promise's due time", async () => {
    const counterId = await busyCounter("memo-later", 1);
    const parents: ParentMemo = new Map();
    const a = await writeShard(counterId, 0, 1);
    await rollupShardWrite(shardWriteOf(a), deps({ parents })); // a start and a quiet chain: its promise is past due
    const w = await writeShard(counterId, 0, 2);
    const outcome = await rollupShardWrite(shardWriteOf(w), deps({ parents }));
    expect(outcome.kind).toBe("committed");
    expect((await readCounter(counterId)).total).toBe(3);
  });
});

describe("rollupTotal on a counter of one shard: the event is the sum (docs/rollup.md)", () => {
  it("commits an idle increment from the event's own shard at the write's time: one parent read, one write, no aggregation", async () => {
    const counterId = await newCounter("snap", 1);
    await deliver(await writeShard(counterId, 0, 3));
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 50)); // idle again
    const w = await writeShard(counterId, 0, 4);
    const outcome = await rollupShardWrite(shardWriteOf(w), deps());
    expect(outcome).toMatchObject({ kind: "committed", path: "lead", total: 7 });
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
