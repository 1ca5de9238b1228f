// COUNTER_KINDS' callers (docs/abuse.md, "Counts that clients cannot push") through the wrapped callables
// against the real Firestore emulator, and the admin entry beside them: callers:add lets the callables
// create, add and join, and refuses a negative delta or a leave (invalid-argument, naming the field);
// callers:none refuses every callable create, increment and membership change (permission-denied, naming
// COUNTER_KINDS), whoever calls, an admin claim included, and AUTO_CREATE creates nothing through them;
// the admin entry does all of it. Every refusal writes nothing.
import * as admin from "../src/admin";
import { ADMIN, USER, call, db, documentsUnder, functions, httpsErrorOf, readCounter, shardSum, uniqueId, withParam } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { memberRef, requestRef } from "../src/model/paths";

const { createCounter, incrementCounter, setMember, resetCounter, reshardCounter, deleteCounter } = functions;

beforeAll(requireEmulators);
jest.setTimeout(120_000);

// `who-*` ids and `whoposts` documents are this file's own.
withParam("COUNTER_KINDS", "who-{id}-views=callers:add;maxDelta:1,who-{id}-rsvps=callers:add,who-{id}-score=callers:none,who-{id}-badges=callers:none");
withParam("UNIQUE_COUNTERS", "who-{id}-rsvps,who-{id}-badges");
withParam("AUTO_CREATE", "who-{id}-score=whoposts/{id},who-{id}-views=whoposts/{id}");

async function expectRefused(promise: Promise<unknown>, code: string, message: string | RegExp): Promise<void> {
  const error = await httpsErrorOf(promise);
  expect(error.code).toBe(code);
  if (typeof message === "string") expect(error.message).toBe(message);
  else expect(error.message).toMatch(message);
}

const noneMessage = (counterId: string, verb: "created" | "moved", rule: string) => `counter "${counterId}" is ${verb} only by the app's own functions (COUNTER_KINDS ${rule}: callers:none)`;

describe("callers:add (views that only go up)", () => {
  it("lets a client create it and add to it, and refuses a negative delta with invalid-argument naming delta, writing nothing (no idempotency record)", async () => {
    const counterId = `who-${uniqueId("p")}-views`;
    await expect(call(createCounter, { counterId })).resolves.toMatchObject({ counterId });
    await expect(call(incrementCounter, { counterId })).resolves.toMatchObject({ applied: true });
    await expect(call(incrementCounter, { counterId, delta: 1 })).resolves.toMatchObject({ applied: true });
    const before = await documentsUnder(counterId);
    await expectRefused(
      call(incrementCounter, { counterId, delta: -1, requestId: "minus" }),
      "invalid-argument",
      `delta must be a positive integer up to 1 for counter "${counterId}": callers only add to it (COUNTER_KINDS callers:add)`,
    );
    expect((await requestRef(db, counterId, "minus").get()).exists).toBe(false);
    expect(await documentsUnder(counterId)).toEqual(before);
    expect(await shardSum(counterId)).toBe(2);
  });

  it("refuses a negative delta from an admin's client too, and lets the admin entry subtract (a correction from the app's own code)", async () => {
    const counterId = `who-${uniqueId("p")}-views`;
    await call(createCounter, { counterId });
    await call(incrementCounter, { counterId });
    await expectRefused(call(incrementCounter, { counterId, delta: -1 }, ADMIN), "invalid-argument", /^delta must be a positive integer/);
    await expect(admin.incrementCounter(counterId, -1)).resolves.toMatchObject({ applied: true });
    expect(await shardSum(counterId)).toBe(0);
  });

  it("on a unique counter, lets users join and refuses a leave with invalid-argument naming member; the admin entry may take a member out", async () => {
    const counterId = `who-${uniqueId("p")}-rsvps`;
    await call(createCounter, { counterId });
    await expect(call(setMember, { counterId, member: true }, USER)).resolves.toMatchObject({ changed: true });
    await expectRefused(
      call(setMember, { counterId, member: false }, USER),
      "invalid-argument",
      `member must be true for counter "${counterId}": callers only join it (COUNTER_KINDS callers:add)`,
    );
    expect((await memberRef(db, counterId, USER.uid).get()).exists).toBe(true);
    expect(await shardSum(counterId)).toBe(1);
    await expect(admin.setMember(counterId, USER.uid, false)).resolves.toMatchObject({ changed: true });
    expect(await shardSum(counterId)).toBe(0);
  });

  it("creates nothing through AUTO_CREATE for a negative delta: the refusal comes before the post is looked up", async () => {
    const postId = uniqueId("wp");
    await db.doc(`whoposts/${postId}`).set({ title: "t" });
    const counterId = `who-${postId}-views`;
    await expectRefused(call(incrementCounter, { counterId, delta: -1 }), "invalid-argument", /^delta must be a positive integer/);
    expect(await documentsUnder(counterId)).toEqual([]);
    await expect(call(incrementCounter, { counterId })).resolves.toMatchObject({ applied: true });
    expect(await readCounter(counterId)).toMatchObject({ exists: true });
  });
});

describe("callers:none (a score kept by the app's own functions)", () => {
  it("refuses createCounter with permission-denied naming COUNTER_KINDS, for a user and for an admin claim, and writes nothing", async () => {
    const counterId = `who-${uniqueId("p")}-score`;
    for (const caller of [USER, ADMIN]) {
      await expectRefused(call(createCounter, { counterId }, caller), "permission-denied", noneMessage(counterId, "created", "who-{id}-score"));
    }
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("refuses incrementCounter with permission-denied, either sign, whoever calls, and writes nothing", async () => {
    const counterId = `who-${uniqueId("p")}-score`;
    await admin.createCounter(counterId);
    const before = await documentsUnder(counterId);
    for (const [delta, caller] of [[1, USER], [-1, USER], [1000, ADMIN]] as const) {
      await expectRefused(call(incrementCounter, { counterId, delta, requestId: `r${delta}` }, caller), "permission-denied", noneMessage(counterId, "moved", "who-{id}-score"));
    }
    expect(await documentsUnder(counterId)).toEqual(before);
    expect(await shardSum(counterId)).toBe(0);
  });

  it("is created and moved by the admin entry, both signs, and its clients read the total the app's functions keep", async () => {
    const counterId = `who-${uniqueId("p")}-score`;
    await expect(admin.createCounter(counterId, { numShards: 2 })).resolves.toEqual({ counterId, numShards: 2, unique: false, windowed: false });
    await expect(admin.incrementCounter(counterId, 5)).resolves.toMatchObject({ applied: true });
    await expect(admin.incrementCounter(counterId, -2, { requestId: "fix-1" })).resolves.toMatchObject({ applied: true });
    expect(await shardSum(counterId)).toBe(3);
  });

  it("on a unique counter, refuses setMember either way; the admin entry adds and removes members", async () => {
    const counterId = `who-${uniqueId("p")}-badges`;
    await admin.createCounter(counterId);
    for (const member of [true, false]) {
      await expectRefused(call(setMember, { counterId, member }, USER), "permission-denied", noneMessage(counterId, "moved", "who-{id}-badges"));
    }
    expect(await documentsUnder(counterId)).not.toContain(`counters/${counterId}/members/${USER.uid}`);
    await expect(admin.setMember(counterId, USER.uid, true)).resolves.toMatchObject({ changed: true });
    await expect(admin.setMember(counterId, "user-2", true)).resolves.toMatchObject({ changed: true });
    await expect(admin.setMember(counterId, "user-2", false)).resolves.toMatchObject({ changed: true });
    expect(await shardSum(counterId)).toBe(1);
  });

  it("is never created by AUTO_CREATE through a callable, even with its post there; the admin entry's first increment creates it", async () => {
    const postId = uniqueId("wp");
    await db.doc(`whoposts/${postId}`).set({ title: "t" });
    const counterId = `who-${postId}-score`;
    await expectRefused(call(incrementCounter, { counterId }), "permission-denied", noneMessage(counterId, "moved", "who-{id}-score"));
    expect(await documentsUnder(counterId)).toEqual([]);
    await expect(admin.incrementCounter(counterId, 10)).resolves.toMatchObject({ applied: true });
    expect(await readCounter(counterId)).toMatchObject({ exists: true });
    expect(await shardSum(counterId)).toBe(10);
  });

  it("leaves the admin callables (admin claim) as they are: reset, reshard and delete", async () => {
    const counterId = `who-${uniqueId("p")}-score`;
    await admin.createCounter(counterId);
    await admin.incrementCounter(counterId, 4);
    await expect(call(resetCounter, { counterId }, ADMIN)).resolves.toEqual({ counterId });
    await expect(call(reshardCounter, { counterId, numShards: 3 }, ADMIN)).resolves.toEqual({ counterId, numShards: 3 });
    await expect(call(deleteCounter, { counterId }, ADMIN)).resolves.toEqual({ counterId });
  });

  it("binds ids only: a counter no kind names is created and moved by clients as before", async () => {
    const counterId = `who-${uniqueId("p")}-clicks`;
    await call(createCounter, { counterId });
    await expect(call(incrementCounter, { counterId, delta: -3 })).resolves.toMatchObject({ applied: true });
    expect(await shardSum(counterId)).toBe(-3);
  });

  describe("of every id ({id}=callers:none)", () => {
    withParam("COUNTER_KINDS", "{id}=callers:none");

    it("refuses a createCounter with an auto id, naming the id it drew, and writes nothing", async () => {
      const error = await httpsErrorOf(call(createCounter, {}, ADMIN));
      expect(error.code).toBe("permission-denied");
      const drawn = /^counter "([A-Za-z0-9]{20})" is created only by the app's own functions \(COUNTER_KINDS \{id\}: callers:none\)$/.exec(error.message);
      expect(drawn).not.toBeNull();
      expect(await documentsUnder(drawn![1]!)).toEqual([]);
    });
  });
});

describe("a bad COUNTER_KINDS rule at run time", () => {
  it("refuses setMember with internal on the ids a bad rule that names callers could match (it may have meant callers:none), writing nothing", async () => {
    const counterId = `who-${uniqueId("p")}-badges`;
    await admin.createCounter(counterId);
    process.env.COUNTER_KINDS = "who-{id}-badges=callers:nobody";
    await expectRefused(call(setMember, { counterId, member: true }, USER), "internal", "internal error");
    expect(await shardSum(counterId)).toBe(0);
    expect((await memberRef(db, counterId, USER.uid).get()).exists).toBe(false);
  });

  it("lets setMember go on past a bad rule that names no callers (a shard count that no longer fits MAX_SHARDS)", async () => {
    const counterId = `who-${uniqueId("p")}-rsvps`;
    await call(createCounter, { counterId });
    process.env.COUNTER_KINDS = "who-{id}-rsvps=shards:500";
    await expect(call(setMember, { counterId, member: true }, USER)).resolves.toMatchObject({ changed: true });
  });
});
