// createCounter and incrementCounter, wrapped with firebase-functions-test, against the real Firestore
// emulator. Every rejection is checked for its code, a message naming the field, and nothing written.
import { call, db, documentsUnder, functions, httpsErrorOf, readCounter, uniqueId } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { counterRef, shardsRef } from "../src/model/paths";

const { createCounter, incrementCounter } = functions;

beforeAll(requireEmulators);

async function expectHttpsError(promise: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  const error = await httpsErrorOf(promise);
  expect(error.code).toBe(code);
  if (message) expect(error.message).toMatch(message);
}

describe("createCounter", () => {
  it("creates the parent with numShards and total 0, and numShards shards at count 0", async () => {
    const counterId = uniqueId("create");
    await expect(call(createCounter, { counterId, numShards: 4 })).resolves.toEqual({ counterId, numShards: 4, unique: false, windowed: false });
    const parent = await counterRef(db, counterId).get();
    expect(parent.get("numShards")).toBe(4);
    expect(parent.get("total")).toBe(0);
    const shards = await shardsRef(db, counterId).get();
    expect(shards.docs.map((d): [string, unknown] => [d.id, d.get("count")]).sort()).toEqual([
      ["0", 0],
      ["1", 0],
      ["2", 0],
      ["3", 0],
    ]);
  });

  it("uses the DEFAULT_SHARDS param when numShards is omitted", async () => {
    const counterId = uniqueId("default");
    await expect(call(createCounter, { counterId })).resolves.toEqual({ counterId, numShards: 1, unique: false, windowed: false });
    expect((await readCounter(counterId)).numShards).toBe(1);
  });

  it("makes an auto id when counterId is omitted", async () => {
    const result = await call<{ counterId: string; numShards: number }>(createCounter, { numShards: 2 });
    expect(result.counterId).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(await readCounter(result.counterId)).toMatchObject({ exists: true, total: 0, numShards: 2 });
  });

  it("rejects an existing id with already-exists and leaves the counter untouched", async () => {
    const counterId = uniqueId("dup");
    await call(createCounter, { counterId, numShards: 2 });
    await call(incrementCounter, { counterId, delta: 5 });
    await expectHttpsError(call(createCounter, { counterId, numShards: 7 }), "already-exists", /already exists/);
    expect((await readCounter(counterId)).numShards).toBe(2);
    const shards = await shardsRef(db, counterId).get();
    expect(shards.size).toBe(2);
    expect(shards.docs.reduce((s, d) => s + (d.get("count") as number), 0)).toBe(5);
  });

  it("rejects a caller who is not signed in with unauthenticated and writes nothing", async () => {
    const counterId = uniqueId("anon");
    await expectHttpsError(call(createCounter, { counterId }, null), "unauthenticated", /signed-in/);
    expect(await documentsUnder(counterId)).toEqual([]);
  });
});

describe("incrementCounter", () => {
  it("adds delta (default 1) to one shard and reports which", async () => {
    const counterId = uniqueId("inc");
    await call(createCounter, { counterId, numShards: 3 });
    const first = await call<{ counterId: string; shard: number; applied: boolean }>(incrementCounter, { counterId });
    const second = await call<{ counterId: string; shard: number; applied: boolean }>(incrementCounter, {
      counterId,
      delta: -4,
    });
    expect(first).toMatchObject({ counterId, applied: true });
    expect(second).toMatchObject({ counterId, applied: true });
    for (const r of [first, second]) expect([0, 1, 2]).toContain(r.shard);
    const shards = await shardsRef(db, counterId).get();
    expect(shards.docs.reduce((s, d) => s + (d.get("count") as number), 0)).toBe(-3);
  });

  it("rejects an unknown counter with not-found and creates nothing", async () => {
    const counterId = uniqueId("missing");
    await expectHttpsError(call(incrementCounter, { counterId, delta: 1 }), "not-found", new RegExp(counterId));
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("rejects a caller who is not signed in with unauthenticated and writes nothing", async () => {
    const counterId = uniqueId("anon-inc");
    await call(createCounter, { counterId, numShards: 1 });
    await expectHttpsError(call(incrementCounter, { counterId }, null), "unauthenticated");
    expect((await shardsRef(db, counterId).doc("0").get()).get("count")).toBe(0);
  });

  it("applies a requestId once: a repeat applies nothing and answers applied: false", async () => {
    const counterId = uniqueId("idem");
    await call(createCounter, { counterId, numShards: 2 });
    type Result = { shard: number; applied: boolean; writeTime: unknown };
    const first = await call<Result>(incrementCounter, { counterId, delta: 3, requestId: "tap-1" });
    const again = await call<Result>(incrementCounter, { counterId, delta: 3, requestId: "tap-1" });
    expect(first.applied).toBe(true);
    expect(again).toEqual({ counterId, shard: first.shard, applied: false, writeTime: first.writeTime });
    const shards = await shardsRef(db, counterId).get();
    expect(shards.docs.reduce((s, d) => s + (d.get("count") as number), 0)).toBe(3);
  });
});

// Malformed payloads: each must fail with invalid-argument, a message naming the field, nothing written.
const tooLongId = "a".repeat(129);
const malformed: [string, "create" | "increment", (id: string) => unknown, RegExp][] = [
  ["counterId with a slash", "create", () => ({ counterId: "a/b" }), /counterId/],
  ["counterId empty", "create", () => ({ counterId: "" }), /counterId/],
  ["counterId of 129 characters", "create", () => ({ counterId: tooLongId }), /counterId/],
  ["counterId a number", "create", () => ({ counterId: 42 }), /counterId must be a string/],
  ["numShards 0", "create", (id) => ({ counterId: id, numShards: 0 }), /numShards/],
  ["numShards above MAX_SHARDS", "create", (id) => ({ counterId: id, numShards: 201 }), /numShards.*1 to 200/],
  ["numShards a float", "create", (id) => ({ counterId: id, numShards: 2.5 }), /numShards/],
  ["numShards a string", "create", (id) => ({ counterId: id, numShards: "10" }), /numShards must be a number/],
  ["an unknown field", "create", (id) => ({ counterId: id, shards: 3 }), /^unknown field "shards" \(did you mean "numShards"\?\)$/],
  ["a typo of counterId", "create", (id) => ({ counterID: id }), /^unknown field "counterID" \(did you mean "counterId"\?\)$/],
  ["data null", "create", () => null, /data must be an object/],
  ["data an array", "create", (id) => [id], /data must be an object/],
  ["counterId missing", "increment", () => ({ delta: 1 }), /counterId/],
  ["delta 0", "increment", (id) => ({ counterId: id, delta: 0 }), /delta/],
  ["delta a float", "increment", (id) => ({ counterId: id, delta: 0.5 }), /delta/],
  ["delta NaN", "increment", (id) => ({ counterId: id, delta: Number.NaN }), /delta/],
  ["delta Infinity", "increment", (id) => ({ counterId: id, delta: Number.POSITIVE_INFINITY }), /delta/],
  ["delta a numeric string", "increment", (id) => ({ counterId: id, delta: "5" }), /delta must be a number/],
  ["delta above MAX_DELTA", "increment", (id) => ({ counterId: id, delta: 1001 }), /delta.*-1000 to 1000/],
  ["delta below -MAX_DELTA", "increment", (id) => ({ counterId: id, delta: -1001 }), /delta/],
  ["delta beyond 2^53", "increment", (id) => ({ counterId: id, delta: 2 ** 53 + 2 }), /delta/],
  ["requestId with a space", "increment", (id) => ({ counterId: id, requestId: "tap 1" }), /requestId/],
  ["requestId a number", "increment", (id) => ({ counterId: id, requestId: 7 }), /requestId must be a string/],
  ["an unknown field", "increment", (id) => ({ counterId: id, amount: 5 }), /^unknown field "amount": not part of this request$/],
  ["a typo of counterId, which leaves counterId missing", "increment", (id) => ({ counterID: id }), /^unknown field "counterID" \(did you mean "counterId"\?\)$/],
  ["counterId an object", "increment", () => ({ counterId: { id: "x" } }), /counterId must be a string/],
];

describe("malformed payloads", () => {
  it.each(malformed)("%s (%s) → invalid-argument naming the field, nothing written", async (_name, target, data, message) => {
    const counterId = uniqueId("bad");
    if (target === "increment") await call(createCounter, { counterId, numShards: 2 });
    const before = await documentsUnder(counterId);
    const shardCounts = async () => (await shardsRef(db, counterId).get()).docs.map((d) => d.get("count") as number);
    const countsBefore = await shardCounts();
    await expectHttpsError(call(target === "create" ? createCounter : incrementCounter, data(counterId)), "invalid-argument", message);
    expect(await documentsUnder(counterId)).toEqual(before);
    expect(await shardCounts()).toEqual(countsBefore);
  });
});
