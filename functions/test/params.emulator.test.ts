// The security params switch behaviour at request time: ENFORCE_APP_CHECK and ALLOW_UNAUTHENTICATED.
import { getFirestore } from "firebase-admin/firestore";
import { HttpsError } from "firebase-functions/v2/https";
import { ADMIN, USER, call, documentsUnder, functions, uniqueId, withParam } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";

const { createCounter, incrementCounter, resetCounter } = functions;

beforeAll(requireEmulators);

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (e: unknown) => (e instanceof HttpsError ? e.code : `not an HttpsError: ${String(e)}`),
  );
}

describe("ENFORCE_APP_CHECK=false (default)", () => {
  it("accepts a signed-in call without an App Check token", async () => {
    expect(await codeOf(call(createCounter, { counterId: uniqueId("ac-off") }, USER))).toBeUndefined();
  });
});

describe("ENFORCE_APP_CHECK=true", () => {
  withParam("ENFORCE_APP_CHECK", "true");

  it("rejects a call without a valid App Check token with unauthenticated and writes nothing", async () => {
    const counterId = uniqueId("ac-on");
    await expect(call(createCounter, { counterId }, USER)).rejects.toMatchObject({
      code: "unauthenticated",
      message: expect.stringMatching(/App Check/) as unknown,
    });
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("accepts a call that carries a verified App Check token", async () => {
    const counterId = uniqueId("ac-ok");
    expect(await codeOf(call(createCounter, { counterId }, USER, { appId: "1:123:web:abc" }))).toBeUndefined();
    expect(await codeOf(call(incrementCounter, { counterId }, USER, { appId: "1:123:web:abc" }))).toBeUndefined();
  });
});

describe("ALLOW_UNAUTHENTICATED=false (default)", () => {
  it("rejects callers without a signed-in user", async () => {
    expect(await codeOf(call(createCounter, { counterId: uniqueId("anon-off") }, null))).toBe("unauthenticated");
  });
});

describe("ALLOW_UNAUTHENTICATED=true", () => {
  withParam("ALLOW_UNAUTHENTICATED", "true");

  it("lets callers without a user increment, but never create", async () => {
    const counterId = uniqueId("anon-on");
    expect(await codeOf(call(createCounter, { counterId, numShards: 1 }, null))).toBe("unauthenticated");
    await call(createCounter, { counterId, numShards: 1 }, USER);
    expect(await codeOf(call(incrementCounter, { counterId }, null))).toBeUndefined();
  });

  it("still requires a signed-in admin for the admin callables", async () => {
    const counterId = uniqueId("anon-admin");
    await call(createCounter, { counterId, numShards: 1 }, ADMIN);
    expect(await codeOf(call(resetCounter, { counterId }, null))).toBe("unauthenticated");
    expect(await codeOf(call(resetCounter, { counterId }, USER))).toBe("permission-denied");
  });
});

describe("DATABASE_ID names a non-default database", () => {
  withParam("DATABASE_ID", "counters-named");

  it("creates and increments counters in that database and leaves (default) untouched", async () => {
    const counterId = uniqueId("named-db");
    await call(createCounter, { counterId, numShards: 2 }, USER);
    await call(incrementCounter, { counterId, delta: 5 }, USER);

    const named = getFirestore("counters-named");
    const shards = await named.collection(`counters/${counterId}/shards`).get();
    expect((await named.doc(`counters/${counterId}`).get()).get("numShards")).toBe(2);
    expect(shards.docs.reduce((sum, doc) => sum + (doc.get("count") as number), 0)).toBe(5);
    expect(await documentsUnder(counterId)).toEqual([]);
  });
});
