// AUTO_CREATE (docs/api.md, "Counters that create themselves"), wrapped, against the real Firestore
// emulator: the first incrementCounter or setMember on a missing counter whose id matches a rule creates it
// with the shape the params give that id, if and only if the app's document exists; many first calls at
// once create it once and all count; a post deleted while the first calls run; a hostile caller naming ids
// whose post does not exist creates nothing; a counter still being deleted is not created again; and what
// it costs (the app's document is looked up only for a missing counter). Also a window's mirror on a
// counter that is not windowed, left as it is by create, reset and delete.
import { FieldValue } from "firebase-admin/firestore";
import { HttpsError } from "firebase-functions/v2/https";
import { ADMIN, call, db, documentsUnder, functions, httpsErrorOf, readCounter, shardSum, uniqueId, withParam, type Caller } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { withConcurrency } from "../../test/helpers/client";
import { cleanupRef, counterRef, membersRef } from "../src/model/paths";
import { addToRandomShard } from "../src/counters/increment";
import { writeMembership } from "../src/counters/members";
import type { AutoCreate } from "../src/counters/auto-create";

const { createCounter, incrementCounter, setMember, resetCounter, deleteCounter } = functions;

beforeAll(requireEmulators);
jest.setTimeout(120_000);

// `apost` documents stand for an app's posts; every test uses ids of its own.
withParam("AUTO_CREATE", "ap-{id}-likes=aposts/{id},ap-{id}-views=aposts/{id},ap-{id}-clicks=aposts/{id}");
withParam("UNIQUE_COUNTERS", "ap-{id}-likes");
withParam("WINDOWED_COUNTERS", "ap-{id}-views");
withParam("COUNTER_KINDS", "ap-{id}-views=shards:3;maxDelta:1");
withParam("MIRRORS", "ap-{id}-likes=aposts/{id}:likeCount,ap-{id}-views=aposts/{id}:views,ap-{id}-views=aposts/{id}:views7d@last7Days");

const user = (n: number | string): Caller => ({ uid: `auto-${n}` });

async function post(id: string, data: Record<string, unknown> = { title: "hello" }): Promise<void> {
  await db.doc(`aposts/${id}`).set(data);
}

async function postData(id: string): Promise<Record<string, unknown> | undefined> {
  return (await db.doc(`aposts/${id}`).get()).data();
}

function like(counterId: string, caller: Caller): Promise<{ changed: boolean }> {
  return call(setMember, { counterId, member: true }, caller);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "ok",
    (error: unknown) => {
      if (error instanceof HttpsError) return error.code;
      throw error;
    },
  );
}

describe("the first call on a missing counter that AUTO_CREATE names", () => {
  it("creates it with the shape the params give its id, then applies the call: a view on a windowed 3-shard counter", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-views`;
    const answer = await call<{ applied: boolean; writeTime: { seconds: number; nanoseconds: number } }>(incrementCounter, { counterId });
    expect(answer).toMatchObject({ counterId, applied: true });
    const parent = await counterRef(db, counterId).get();
    expect(parent.data()).toMatchObject({ numShards: 3, unique: false, windowed: true, total: 0 });
    expect(await shardSum(counterId)).toBe(1);
    // Created in a commit of its own before the increment's: createdAt covers nothing of the new counter.
    const createdAt = parent.get("createdAt") as FirebaseFirestore.Timestamp;
    expect(createdAt.toMillis() * 1000).toBeLessThan(answer.writeTime.seconds * 1e6 + answer.writeTime.nanoseconds / 1000);
    // Its mirrors start at 0 on the post, the total's and the window's.
    expect(await postData(id)).toEqual({ title: "hello", views: 0, views7d: 0 });
  });

  it("creates a likes counter as a unique counter on its first like, and counts that like", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-likes`;
    await expect(like(counterId, user(1))).resolves.toMatchObject({ counterId, member: true, changed: true });
    expect(await readCounter(counterId)).toMatchObject({ exists: true, numShards: 1 });
    expect((await counterRef(db, counterId).get()).get("unique")).toBe(true);
    expect(await shardSum(counterId)).toBe(1);
    expect((await membersRef(db, counterId).get()).docs.map((d) => d.id)).toEqual(["auto-1"]);
  });

  it("answers not-found and writes nothing when the post does not exist", async () => {
    const id = uniqueId("p");
    const counterId = `ap-${id}-likes`;
    const error = await httpsErrorOf(like(counterId, user(1)));
    expect(error.code).toBe("not-found");
    expect(error.message).toBe(`counter "${counterId}" does not exist, and AUTO_CREATE creates it only while aposts/${id} exists`);
    expect(await httpsErrorOf(call(incrementCounter, { counterId: `ap-${id}-views` }))).toMatchObject({ code: "not-found" });
    expect(await documentsUnder(counterId)).toEqual([]);
    expect(await documentsUnder(`ap-${id}-views`)).toEqual([]);
    expect(await postData(id)).toBeUndefined();
  });

  it("leaves ids no rule matches as before: not-found", async () => {
    const id = uniqueId("p");
    await post(id);
    expect(await httpsErrorOf(call(incrementCounter, { counterId: `ap-${id}-shares` }))).toMatchObject({ code: "not-found" });
    expect(await documentsUnder(`ap-${id}-shares`)).toEqual([]);
  });

  it("refuses a call the counter to be created would refuse, before creating it: an increment of a likes id, a like of a views id", async () => {
    const id = uniqueId("p");
    await post(id);
    const likes = await httpsErrorOf(call(incrementCounter, { counterId: `ap-${id}-likes` }));
    expect(likes.code).toBe("failed-precondition");
    expect(likes.message).toContain("is a unique counter");
    const views = await httpsErrorOf(like(`ap-${id}-views`, user(1)));
    expect(views.code).toBe("failed-precondition");
    expect(views.message).toContain("UNIQUE_COUNTERS");
    expect(await documentsUnder(`ap-${id}-likes`)).toEqual([]);
    expect(await documentsUnder(`ap-${id}-views`)).toEqual([]);
    expect(await postData(id)).toEqual({ title: "hello" });
  });

  it("refuses a delta the counter's kind refuses, before creating it", async () => {
    const id = uniqueId("p");
    await post(id);
    expect(await httpsErrorOf(call(incrementCounter, { counterId: `ap-${id}-views`, delta: 5 }))).toMatchObject({ code: "invalid-argument" });
    expect(await documentsUnder(`ap-${id}-views`)).toEqual([]);
  });

  it("is not what createCounter does: CREATE_POLICY still decides createCounter, and AUTO_CREATE does not open it", async () => {
    const id = uniqueId("p");
    await post(id);
    const policy = process.env.CREATE_POLICY;
    process.env.CREATE_POLICY = "admin";
    try {
      expect(await httpsErrorOf(call(createCounter, { counterId: `ap-${id}-clicks` }))).toMatchObject({ code: "permission-denied" });
      // The app's document is the authority for the first click, whoever makes it.
      await expect(call(incrementCounter, { counterId: `ap-${id}-clicks` })).resolves.toMatchObject({ applied: true });
    } finally {
      process.env.CREATE_POLICY = policy;
    }
    expect(await shardSum(`ap-${id}-clicks`)).toBe(1);
  });
});

describe("concurrent first calls", () => {
  it("create the counter once and count every one of 24 first likes", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-likes`;
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => like(counterId, user(i))));
    expect(answers.every((a) => a.changed)).toBe(true);
    expect(await shardSum(counterId)).toBe(24);
    expect((await membersRef(db, counterId).get()).size).toBe(24);
    expect(await readCounter(counterId)).toMatchObject({ exists: true, numShards: 1, total: 0 });
  });

  it("create the counter once and count every one of 24 first views, each key applied once when sent twice", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-clicks`;
    const calls = Array.from({ length: 24 }, (_, i) => () => call<{ applied: boolean }>(incrementCounter, { counterId, requestId: `key-${i}` }));
    const answers = await Promise.all([...calls, ...calls.slice(0, 8)].map((c) => c()));
    expect(answers.filter((a) => a.applied)).toHaveLength(24);
    expect(await shardSum(counterId)).toBe(24);
  });

  it("with the post deleted while they run: either the counter exists and holds exactly the calls that succeeded, or nothing was written", async () => {
    for (let round = 0; round < 4; round++) {
      const id = uniqueId("p");
      await post(id);
      const counterId = `ap-${id}-likes`;
      const outcomes = await withConcurrency(
        8,
        Array.from({ length: 16 }, (_, i) => async () => {
          if (i === 2 * round) await db.doc(`aposts/${id}`).delete();
          return codeOf(like(counterId, user(i)));
        }),
      );
      expect(outcomes.every((o) => o === "ok" || o === "not-found")).toBe(true);
      const ok = outcomes.filter((o) => o === "ok").length;
      if ((await counterRef(db, counterId).get()).exists) {
        expect(await shardSum(counterId)).toBe(ok);
        expect((await membersRef(db, counterId).get()).size).toBe(ok);
      } else {
        expect(ok).toBe(0);
        expect(await documentsUnder(counterId)).toEqual([]);
      }
    }
  });
});

describe("a post deleted mid-call", () => {
  it("creates nothing when the post goes between the call's look at it and the creation (an increment)", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-clicks`;
    const auto: AutoCreate = {
      document: `aposts/${id}`,
      counter: () => ({ numShards: 1, unique: false, windowed: false, mirrors: [] }),
      beforeCreate: () => db.doc(`aposts/${id}`).delete().then(() => undefined),
    };
    const error = await addToRandomShard(db, counterId, 1, { requestTtlMs: 60_000, autoCreate: () => auto }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "not-found" });
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("creates nothing when the post goes before the creation (a like)", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-likes`;
    const auto: AutoCreate = {
      document: `aposts/${id}`,
      counter: () => ({ numShards: 1, unique: true, windowed: false, mirrors: [] }),
      beforeCreate: () => db.doc(`aposts/${id}`).delete().then(() => undefined),
    };
    const error = await writeMembership(db, counterId, "auto-1", true, { autoCreate: () => auto }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "not-found" });
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("keeps a counter once created: later calls count although the post is gone", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-clicks`;
    await call(incrementCounter, { counterId });
    await db.doc(`aposts/${id}`).delete();
    await expect(call(incrementCounter, { counterId })).resolves.toMatchObject({ applied: true });
    expect(await shardSum(counterId)).toBe(2);
  });
});

describe("a hostile caller", () => {
  it("naming 40 ids whose post does not exist creates nothing: no counter, no post, no mirror", async () => {
    const prefix = uniqueId("ghost");
    const ids = Array.from({ length: 40 }, (_, i) => `${prefix}${i}`);
    const outcomes = await withConcurrency(
      8,
      ids.map((id, i) => () => codeOf(i % 2 === 0 ? like(`ap-${id}-likes`, user(i)) : call(incrementCounter, { counterId: `ap-${id}-views` }))),
    );
    expect(new Set(outcomes)).toEqual(new Set(["not-found"]));
    for (const id of ids) {
      expect(await documentsUnder(`ap-${id}-likes`)).toEqual([]);
      expect(await documentsUnder(`ap-${id}-views`)).toEqual([]);
      expect(await postData(id)).toBeUndefined();
    }
  });
});

describe("a counter still being deleted", () => {
  it("is not created again under its cleanup: not-found, and nothing but the marker is there", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-clicks`;
    // A marker as deleteCounter leaves it while members or records remain to be removed (counters/deletion.ts).
    await cleanupRef(db, counterId).set({ startedAt: FieldValue.serverTimestamp(), round: 0 });
    const error = await httpsErrorOf(call(incrementCounter, { counterId }));
    expect(error.code).toBe("not-found");
    expect(error.message).toContain("still being deleted");
    expect(await documentsUnder(counterId)).toEqual([cleanupRef(db, counterId).path]);
    await cleanupRef(db, counterId).delete();
    await expect(call(incrementCounter, { counterId })).resolves.toMatchObject({ applied: true });
  });

  it("is created again on the first call after a delete has finished, starting from 0", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-likes`;
    await like(counterId, user(1));
    await like(counterId, user(2));
    await call(deleteCounter, { counterId }, ADMIN);
    await like(counterId, user(3));
    expect(await shardSum(counterId)).toBe(1);
    expect((await membersRef(db, counterId).get()).docs.map((d) => d.id)).toEqual(["auto-3"]);
  });
});

describe("what it costs", () => {
  it("looks the rule up only for a missing counter: once for the creation, never for the next 10 increments", async () => {
    const id = uniqueId("p");
    await post(id);
    const counterId = `ap-${id}-clicks`;
    let lookups = 0;
    const lookup = (): AutoCreate => {
      lookups++;
      return { document: `aposts/${id}`, counter: () => ({ numShards: 1, unique: false, windowed: false, mirrors: [] }) };
    };
    for (let i = 0; i < 11; i++) await addToRandomShard(db, counterId, 1, { requestTtlMs: 60_000, autoCreate: lookup });
    expect(lookups).toBe(1);
    expect(await shardSum(counterId)).toBe(11);
  });

  it("never hides a missing counter: refused while its post is missing, created on the first call once the post exists", async () => {
    const id = uniqueId("p");
    const counterId = `ap-${id}-clicks`;
    expect(await httpsErrorOf(call(incrementCounter, { counterId }))).toMatchObject({ code: "not-found" });
    await post(id);
    await expect(call(incrementCounter, { counterId })).resolves.toMatchObject({ applied: true });
  });
});

describe("a window's mirror on a counter that is not windowed", () => {
  withParam("MIRRORS", "apw-{id}-views=aposts/{id}:views,apw-{id}-views=aposts/{id}:views7d@last7Days");

  it("is left as it is by create, reset and delete (they wrote 0 there), while the total's mirror follows", async () => {
    const id = uniqueId("p");
    await post(id, { title: "hello", views: 5, views7d: 42 });
    const counterId = `apw-${id}-views`;
    await call(createCounter, { counterId });
    expect(await postData(id)).toEqual({ title: "hello", views: 0, views7d: 42 });
    await call(resetCounter, { counterId }, ADMIN);
    expect(await postData(id)).toEqual({ title: "hello", views: 0, views7d: 42 });
    await call(deleteCounter, { counterId }, ADMIN);
    expect(await postData(id)).toEqual({ title: "hello", views7d: 42 });
  });
});
