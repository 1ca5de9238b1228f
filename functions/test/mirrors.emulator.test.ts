// Mirrors (docs/mirrors.md): with MIRRORS set, every write of a matching counter's total (the
// rollup's commits, reset, create) writes the same value to the app's document in the same atomic write;
// a missing target is never created; delete removes the mirrored field. Against the Firestore emulator,
// through the wrapped callables and the wrapped rollupTotal trigger.
import { randomUUID } from "node:crypto";
import { FieldValue, Timestamp, type Firestore } from "firebase-admin/firestore";
import { logger } from "../../test/helpers/logger";
import * as rollupFirestore from "../src/rollup/firestore-store";
import { rollupShardWrite } from "../src/rollup/index";
import { sweepRollups } from "../src/rollup/sweep";
import { type RollupStore } from "../src/rollup/store";
import type { MirrorTarget } from "../src/model/mirror-rules";
import { counterRef, leaseRef } from "../src/model/paths";
import { zeroShardsAndTotal } from "../src/counters/reset";
import { INTERVAL_MS, rollupDeps, shardWriteOf } from "../../test/helpers/rollup";
import { requireEmulators } from "../../test/helpers/emulators";
import {
  ADMIN,
  call,
  db,
  deliver,
  functions,
  readCounter,
  rfc3339,
  shardSum,
  uniqueId,
  withParam,
  writeShard,
  type RecordedWrite,
} from "../../test/helpers/functions";

beforeAll(requireEmulators);

// `mpost` documents stand for an app's posts; each test uses its own id.
withParam("MIRRORS", "mirror-{id}-likes=mposts/{id}:likeCount, mirror-{id}-views=mposts/{id}:stats.views, mirror-{id}-both=mposts/{id}:a,mirror-{id}-both=mcopies/{id}:b");

const warnings: string[] = [];
beforeEach(() => {
  warnings.length = 0;
  jest.spyOn(logger, "warn").mockImplementation((...args: unknown[]) => {
    warnings.push(JSON.stringify(args));
  });
});
afterEach(() => jest.restoreAllMocks());

async function post(id: string, data: Record<string, unknown> = { title: "hello" }): Promise<void> {
  await db.doc(`mposts/${id}`).set(data);
}

async function postData(id: string, collection = "mposts"): Promise<Record<string, unknown> | undefined> {
  return (await db.doc(`${collection}/${id}`).get()).data();
}

async function create(counterId: string, numShards = 3): Promise<void> {
  await call(functions.createCounter, { counterId, numShards });
}

describe("mirrors in the rollup", () => {
  it("writes the total of a single increment to the target field and leaves the post's other fields alone", async () => {
    const id = uniqueId("p");
    await post(id, { title: "hello", likeCount: 0, author: "u1" });
    await create(`mirror-${id}-likes`);
    await deliver(await writeShard(`mirror-${id}-likes`, 1, 1));
    expect((await readCounter(`mirror-${id}-likes`)).total).toBe(1);
    expect(await postData(id)).toEqual({ title: "hello", likeCount: 1, author: "u1" });
  });

  it("follows a burst delivered late, out of order and twice, ending at the exact total", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `mirror-${id}-likes`;
    await create(counterId, 4);
    const writes = [];
    for (let i = 0; i < 12; i++) writes.push(await writeShard(counterId, i % 4, i + 1));
    const order = [...writes].reverse();
    await Promise.all([...order, ...writes.slice(0, 5)].map((w) => deliver(w)));
    const total = (await readCounter(counterId)).total;
    expect(total).toBe(await shardSum(counterId));
    expect(total).toBe(78);
    expect((await postData(id))!.likeCount).toBe(78);
  });

  it("writes a nested field (stats.views) and keeps the map's other keys", async () => {
    const id = uniqueId("p");
    await post(id, { title: "t", stats: { shares: 7 } });
    const counterId = `mirror-${id}-views`;
    await create(counterId);
    await deliver(await writeShard(counterId, 0, 5));
    expect(await postData(id)).toEqual({ title: "t", stats: { shares: 7, views: 5 } });
  });

  it("writes every target a counter matches, in the same commit", async () => {
    const id = uniqueId("p");
    await post(id);
    await db.doc(`mcopies/${id}`).set({});
    const counterId = `mirror-${id}-both`;
    await create(counterId);
    await deliver(await writeShard(counterId, 2, 9));
    expect((await postData(id))!.a).toBe(9);
    expect((await postData(id, "mcopies"))!.b).toBe(9);
  });

  it("never creates a missing target: the total is committed, the mirror skipped with a warning", async () => {
    const id = uniqueId("p");
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    await deliver(await writeShard(counterId, 0, 3));
    expect((await readCounter(counterId)).total).toBe(3);
    expect((await db.doc(`mposts/${id}`).get()).exists).toBe(false);
    expect(warnings.some((w) => w.includes("mirror target does not exist") && w.includes(`mposts/${id}`))).toBe(true);
  });

  it("counts the target's write in the rollup's operations (and the reads that find a missing one)", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    const targets = [{ path: `mposts/${id}`, field: "likeCount", value: "total" as const }, { path: `mposts/${id}-missing`, field: "likeCount", value: "total" as const }];
    const store = rollupFirestore.firestoreRollupStore(db, { mirrors: () => targets });
    const outcome = await rollupShardWrite(shardWriteOf(await writeShard(counterId, 0, 2)), rollupDeps({ store }));
    expect(outcome).toMatchObject({ kind: "committed", total: 2 });
    // the rollup's parent read, then the parent and the 2 targets read after the failed batch; the parent
    // and one target written, the missing one asserted absent (a conditioned delete, billed as a write)
    expect(outcome.ops).toMatchObject({ reads: 4, writes: 3, aggregations: 1 });
    expect((await postData(id))!.likeCount).toBe(2);
  });

  it("mirrors once the target exists, from the next commit on", async () => {
    const id = uniqueId("p");
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    await deliver(await writeShard(counterId, 0, 3));
    await post(id);
    await deliver(await writeShard(counterId, 1, 4));
    expect((await readCounter(counterId)).total).toBe(7);
    expect((await postData(id))!.likeCount).toBe(7);
  });

  it("leaves a counter whose id matches no rule, and its would-be target, alone", async () => {
    const id = uniqueId("p");
    await post(id, { title: "x" });
    const counterId = `other-${id}-likes`;
    await create(counterId);
    await deliver(await writeShard(counterId, 0, 2));
    expect((await readCounter(counterId)).total).toBe(2);
    expect(await postData(id)).toEqual({ title: "x" });
  });

  it("mirrors a unique counter's member count", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `mirror-${id}-likes`;
    await call(functions.createCounter, { counterId, numShards: 2, unique: true });
    const events: RecordedWrite[] = [];
    for (const [uid, member] of [["u1", true], ["u2", true], ["u3", true], ["u2", false]] as const) {
      events.push(...(await recordingShardWrites(counterId, () => call(functions.setMember, { counterId, member }, { uid }))));
    }
    expect(events).toHaveLength(4);
    for (const event of events) await deliver(event);
    expect((await readCounter(counterId)).total).toBe(2);
    expect((await postData(id))!.likeCount).toBe(2);
  });
});

/** Runs `operation` and records the shard writes it made (the events the trigger would get). */
async function recordingShardWrites(counterId: string, operation: () => Promise<unknown>): Promise<RecordedWrite[]> {
  const shards = () => db.collection(`counters/${counterId}/shards`).get();
  const before = await shards();
  await operation();
  const after = await shards();
  const events: RecordedWrite[] = [];
  for (const doc of after.docs) {
    const old = before.docs.find((d) => d.id === doc.id)!;
    if (old.updateTime.isEqual(doc.updateTime)) continue;
    events.push({ counterId, shardId: doc.id, before: old, after: doc, eventId: randomUUID(), time: rfc3339(doc.updateTime) });
  }
  return events;
}

describe("mirrors in the admin callables", () => {
  it("reset writes 0 to the target in the same transaction", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    await deliver(await writeShard(counterId, 0, 6));
    expect((await postData(id))!.likeCount).toBe(6);
    await call(functions.resetCounter, { counterId }, ADMIN);
    expect((await readCounter(counterId)).total).toBe(0);
    expect((await postData(id))!.likeCount).toBe(0);
  });

  it("reshard leaves the total and the mirror equal", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `mirror-${id}-likes`;
    await create(counterId, 4);
    await deliver(await writeShard(counterId, 3, 5));
    await call(functions.reshardCounter, { counterId, numShards: 2 }, ADMIN);
    await deliver(await writeShard(counterId, 1, 2));
    expect((await readCounter(counterId)).total).toBe(7);
    expect((await postData(id))!.likeCount).toBe(7);
  });

  it("delete removes the mirrored field; a counter created again starts its mirror at 0", async () => {
    const id = uniqueId("p");
    await post(id, { title: "keep" });
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    await deliver(await writeShard(counterId, 0, 4));
    await call(functions.deleteCounter, { counterId }, ADMIN);
    expect(await postData(id)).toEqual({ title: "keep" });
    await create(counterId);
    expect(await postData(id)).toEqual({ title: "keep", likeCount: 0 });
  });

  it("a late event of a deleted counter writes no mirror", async () => {
    const id = uniqueId("p");
    await post(id, { title: "keep" });
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    const late = await writeShard(counterId, 0, 4);
    await call(functions.deleteCounter, { counterId }, ADMIN);
    await deliver(late);
    expect(await postData(id)).toEqual({ title: "keep" });
    expect((await readCounter(counterId)).exists).toBe(false);
  });

  it("with a bad MIRRORS the rollup commits the total without mirrors and logs an ERROR naming the rule; reset and create refuse (internal) and write nothing", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    const errors: string[] = [];
    jest.spyOn(logger, "error").mockImplementation((...args: unknown[]) => void errors.push(JSON.stringify(args)));
    process.env.MIRRORS = "mirror-{id}-likes=mposts:likeCount";
    await deliver(await writeShard(counterId, 0, 2)); // the rollup still commits the total
    await expect(call(functions.resetCounter, { counterId }, ADMIN)).rejects.toMatchObject({ code: "internal" });
    const otherId = uniqueId("x");
    await expect(call(functions.createCounter, { counterId: otherId })).rejects.toMatchObject({ code: "internal" });
    expect((await readCounter(counterId)).total).toBe(2);
    expect((await readCounter(otherId)).exists).toBe(false);
    expect((await postData(id))!.likeCount).toBe(0);
    const naming = 'MIRRORS: rule 1 \\"mirror-{id}-likes=mposts:likeCount\\" has a document path \\"mposts\\" with 1 segments';
    expect(errors.filter((e) => e.includes(naming)).length).toBeGreaterThanOrEqual(3);
  });
});

describe("mirror targets that appear and disappear while a total is committed", () => {
  /** A store whose commit runs `step` before each write and each read of the targets (for `counterId` only). */
  function storeWith(counterId: string, targets: MirrorTarget[], step: (step: rollupFirestore.MirrorStep) => Promise<void>): RollupStore {
    return rollupFirestore.firestoreRollupStore(db, { mirrors: (id) => (id === counterId ? targets : []), onMirrorStep: step });
  }

  /** Runs `action` the `n`-th time (1-based) a step named `name` comes. */
  function atStep(name: rollupFirestore.MirrorStep, n: number, action: () => Promise<unknown>) {
    let seen = 0;
    return async (step: rollupFirestore.MirrorStep) => {
      if (step === name && ++seen === n) await action();
    };
  }

  it("a target created between the failed commit and the read of the targets: the total lands on the parent and the target, never 'gone'", async () => {
    const id = uniqueId("p");
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    const store = storeWith(counterId, [{ path: `mposts/${id}`, field: "likeCount", value: "total" as const }], atStep("read", 1, () => post(id, { title: "late" })));
    const outcome = await rollupShardWrite(shardWriteOf(await writeShard(counterId, 0, 1)), rollupDeps({ store }));
    expect(outcome).toMatchObject({ kind: "committed", total: 1 });
    expect((await readCounter(counterId)).total).toBe(1);
    expect(await shardSum(counterId)).toBe(1);
    expect(await postData(id)).toEqual({ title: "late", likeCount: 1 });
  });

  it("a target created between the read and the retry gets the total too: the retry asserts it is still absent", async () => {
    const id = uniqueId("p");
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    // The app creates its post with its own idea of the count, after the commit found it missing.
    const store = storeWith(counterId, [{ path: `mposts/${id}`, field: "likeCount", value: "total" as const }], atStep("commit", 2, () => post(id, { likeCount: 99 })));
    const outcome = await rollupShardWrite(shardWriteOf(await writeShard(counterId, 0, 3)), rollupDeps({ store }));
    expect(outcome).toMatchObject({ kind: "committed", total: 3 });
    expect(await postData(id)).toEqual({ likeCount: 3 });
  });

  it("a target deleted between the read and the retry: the total still lands, and no target is created", async () => {
    const id = uniqueId("p");
    const counterId = `mirror-${id}-both`;
    await create(counterId);
    await post(id); // mposts/{id} exists, mcopies/{id} does not
    const targets = [{ path: `mposts/${id}`, field: "a", value: "total" as const }, { path: `mcopies/${id}`, field: "b", value: "total" as const }];
    const store = storeWith(counterId, targets, atStep("commit", 2, () => db.doc(`mposts/${id}`).delete()));
    const outcome = await rollupShardWrite(shardWriteOf(await writeShard(counterId, 1, 4)), rollupDeps({ store }));
    expect(outcome).toMatchObject({ kind: "committed", total: 4 });
    expect((await readCounter(counterId)).total).toBe(4);
    expect((await db.doc(`mposts/${id}`).get()).exists).toBe(false);
    expect((await db.doc(`mcopies/${id}`).get()).exists).toBe(false);
  });

  it("the parent deleted after the failed commit is 'gone', and nothing is created", async () => {
    const id = uniqueId("p");
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    const store = storeWith(counterId, [{ path: `mposts/${id}`, field: "likeCount", value: "total" as const }], atStep("read", 1, () => call(functions.deleteCounter, { counterId }, ADMIN)));
    const outcome = await rollupShardWrite(shardWriteOf(await writeShard(counterId, 0, 2)), rollupDeps({ store }));
    expect(outcome).toMatchObject({ kind: "gone" });
    expect((await readCounter(counterId)).exists).toBe(false);
    expect((await db.doc(`mposts/${id}`).get()).exists).toBe(false);
  });

  it("a target that flips at every step: after a bounded number of commits the sweep gives up on a legacy claim, keeps it, and the next run commits", async () => {
    const id = uniqueId("p");
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    await counterRef(db, counterId).update({ "rollup.committedAt": FieldValue.serverTimestamp(), "rollup.intervalMs": INTERVAL_MS });
    await writeShard(counterId, 1, 7);
    // A claim of the previous version whose claimer died long ago: only the sweep stands between the write and the total.
    await leaseRef(db, counterId).set({ eventId: "evt-dead", dueAt: Timestamp.fromMillis(Date.now() - 60_000), intervalMs: INTERVAL_MS });
    const target = db.doc(`mposts/${id}`);
    await post(id, { title: "flapping" });
    // Each step finds the target the other way round from what the step before saw.
    const flip = async () => {
      if ((await target.get()).exists) await target.delete();
      else await target.set({ title: "flapping" });
    };
    const flapping = storeWith(counterId, [{ path: target.path, field: "likeCount", value: "total" as const }], flip);
    const failed = await sweepRollups(rollupDeps({ store: flapping }));
    expect(failed.claims.outcomes.failed).toBeGreaterThanOrEqual(1);
    expect((await readCounter(counterId)).total).toBe(0);
    expect((await leaseRef(db, counterId).get()).exists).toBe(true); // not dropped: the next run has it

    await post(id, { title: "settled" });
    const settled = await sweepRollups(rollupDeps({ store: storeWith(counterId, [{ path: target.path, field: "likeCount", value: "total" as const }], () => Promise.resolve()) }));
    expect(settled.claims.outcomes.committed).toBeGreaterThanOrEqual(1);
    expect((await readCounter(counterId)).total).toBe(7);
    expect(await postData(id)).toEqual({ title: "settled", likeCount: 7 });
    expect((await leaseRef(db, counterId).get()).exists).toBe(false);
  });

  it("reset: a target created between its read and its write gets the 0 too", async () => {
    const id = uniqueId("p");
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    await deliver(await writeShard(counterId, 0, 6));
    let created = false;
    const beforeCommit = async () => {
      if (created) return;
      created = true;
      await post(id, { likeCount: 42 });
    };
    await zeroShardsAndTotal(db, counterId, { mirrors: [{ path: `mposts/${id}`, field: "likeCount", value: "total" as const }], beforeCommit });
    expect((await readCounter(counterId)).total).toBe(0);
    expect(await postData(id)).toEqual({ likeCount: 0 });
  });
});

describe("mirrors under failures", () => {
  const realStore = rollupFirestore.firestoreRollupStore;

  it("a commit that landed but whose invocation failed is retried: mirror = total after settling", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    jest.spyOn(rollupFirestore, "firestoreRollupStore").mockImplementation((d: Firestore, options) => {
      const store: RollupStore = realStore(d, options);
      return {
        ...store,
        commit: async (...args) => {
          await store.commit(...args);
          throw Object.assign(new Error("simulated lost answer"), { code: 14 });
        },
      };
    });
    const w = await writeShard(counterId, 1, 8);
    await expect(deliver(w)).rejects.toThrow("simulated lost answer");
    jest.restoreAllMocks();
    await deliver(w);
    expect((await readCounter(counterId)).total).toBe(8);
    expect((await postData(id))!.likeCount).toBe(8);
  });

  it("a commit that failed writes neither the total nor the mirror; the retry writes both", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `mirror-${id}-likes`;
    await create(counterId);
    jest.spyOn(rollupFirestore, "firestoreRollupStore").mockImplementation((d: Firestore, options) => ({
      ...realStore(d, options),
      commit: () => Promise.reject(Object.assign(new Error("simulated unavailable"), { code: 14 })),
    }));
    const w = await writeShard(counterId, 1, 8);
    await expect(deliver(w)).rejects.toThrow("simulated unavailable");
    expect((await readCounter(counterId)).total).toBe(0);
    expect((await postData(id))!.likeCount).toBe(0);
    jest.restoreAllMocks();
    await deliver(w);
    expect((await postData(id))!.likeCount).toBe(8);
  });
});
