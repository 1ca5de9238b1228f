// CREATE_POLICY through the wrapped createCounter against the real Firestore emulator: for every policy,
// who is allowed, and that a refused caller gets permission-denied with a message naming the policy and
// nothing is written; a caller with no user is unauthenticated under every policy, ALLOW_UNAUTHENTICATED
// or not. A bad value refuses every create with internal and stops nothing else.
import { HttpsError } from "firebase-functions/v2/https";
import { ADMIN, ANONYMOUS, USER, call, documentsUnder, functions, httpsErrorOf, readCounter, uniqueId, withParam, type Caller } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { fft } from "../../test/helpers/wrapped";

const { createCounter, incrementCounter } = functions;

beforeAll(requireEmulators);

const ANONYMOUS_ADMIN: Caller = { uid: "anon-admin-1", provider: "anonymous", admin: true };
const GOOGLE: Caller = { uid: "google-1", provider: "google.com" };

async function expectCreated(caller: Caller | null): Promise<void> {
  const counterId = uniqueId("policy-ok");
  await expect(call(createCounter, { counterId, numShards: 1 }, caller)).resolves.toEqual({ counterId, numShards: 1, unique: false, windowed: false });
  expect(await readCounter(counterId)).toMatchObject({ exists: true, total: 0, numShards: 1 });
}

async function expectRefused(caller: Caller | null, code: string, message: RegExp): Promise<void> {
  const counterId = uniqueId("policy-no");
  const error = await httpsErrorOf(call(createCounter, { counterId, numShards: 200 }, caller));
  expect(error.code).toBe(code);
  expect(error.message).toMatch(message);
  expect(await documentsUnder(counterId)).toEqual([]);
}

describe("CREATE_POLICY=signed-in", () => {
  withParam("CREATE_POLICY", "signed-in");

  it("lets any signed-in user create, anonymous included", async () => {
    await expectCreated(USER);
    await expectCreated(ANONYMOUS);
    await expectCreated(ADMIN);
  });

  it("still refuses a caller with no user with unauthenticated (ALLOW_UNAUTHENTICATED=false)", async () => {
    await expectRefused(null, "unauthenticated", /requires a signed-in user/);
  });

  describe("with ALLOW_UNAUTHENTICATED=true", () => {
    withParam("ALLOW_UNAUTHENTICATED", "true");

    it("refuses a caller with no user with unauthenticated and writes nothing: creating always needs a user", async () => {
      await expectRefused(null, "unauthenticated", /^createCounter requires a signed-in user$/);
    });

    it("still lets the same caller increment an existing counter (the param is about increments)", async () => {
      const counterId = uniqueId("policy-anon-inc");
      await call(createCounter, { counterId, numShards: 1 }, USER);
      await expect(call(incrementCounter, { counterId }, null)).resolves.toMatchObject({ applied: true });
    });
  });
});

describe("CREATE_POLICY=non-anonymous", () => {
  withParam("CREATE_POLICY", "non-anonymous");

  it("lets users of other providers and admins create", async () => {
    await expectCreated(USER);
    await expectCreated(GOOGLE);
    await expectCreated(ADMIN);
  });

  it("refuses an anonymous user with permission-denied naming the policy, and writes nothing", async () => {
    await expectRefused(ANONYMOUS, "permission-denied", /^createCounter requires a user signed in with a provider other than anonymous \(CREATE_POLICY=non-anonymous\); the caller is an anonymous user$/);
    await expectRefused(ANONYMOUS_ADMIN, "permission-denied", /CREATE_POLICY=non-anonymous/);
  });

  it("refuses a token that names no sign-in provider", async () => {
    const counterId = uniqueId("policy-noprov");
    const wrapped = fft.wrap(createCounter) as unknown as (request: unknown) => Promise<unknown>;
    const error = await httpsErrorOf(wrapped({ data: { counterId }, auth: { uid: "x", token: { uid: "x" } } }));
    expect(error.code).toBe("permission-denied");
    expect(error.message).toMatch(/a token without a sign-in provider/);
    expect(await documentsUnder(counterId)).toEqual([]);
  });
});

describe("CREATE_POLICY=admin", () => {
  withParam("CREATE_POLICY", "admin");

  it("lets only callers with the custom claim admin: true create", async () => {
    await expectCreated(ADMIN);
    await expectCreated(ANONYMOUS_ADMIN);
  });

  it("refuses signed-in users without the claim with permission-denied naming the policy, and writes nothing", async () => {
    await expectRefused(USER, "permission-denied", /^createCounter is limited to admins \(CREATE_POLICY=admin\): it requires the custom claim admin: true$/);
    await expectRefused(ANONYMOUS, "permission-denied", /CREATE_POLICY=admin/);
    await expectRefused(GOOGLE, "permission-denied", /CREATE_POLICY=admin/);
  });

  it("refuses before validating the input, so a refused caller learns nothing about ids", async () => {
    const error = await httpsErrorOf(call(createCounter, { counterId: "bad id!", numShards: 1.5 }, USER));
    expect(error.code).toBe("permission-denied");
  });

  it("does not limit incrementCounter: signed-in users still count on an admin's counter", async () => {
    const counterId = uniqueId("policy-inc");
    await call(createCounter, { counterId, numShards: 1 }, ADMIN);
    await expect(call(incrementCounter, { counterId }, ANONYMOUS)).resolves.toMatchObject({ applied: true });
  });

  describe("with ALLOW_UNAUTHENTICATED=true", () => {
    withParam("ALLOW_UNAUTHENTICATED", "true");

    it("refuses a caller with no user with unauthenticated", async () => {
      await expectRefused(null, "unauthenticated", /^createCounter requires a signed-in user$/);
    });
  });
});

describe("an invalid CREATE_POLICY", () => {
  withParam("CREATE_POLICY", "everyone");

  it("refuses every create with internal, even an admin's, and writes nothing", async () => {
    await expectRefused(ADMIN, "internal", /^internal error$/);
    await expectRefused(USER, "internal", /^internal error$/);
  });

  it("stops nothing but createCounter", async () => {
    const counterId = uniqueId("policy-bad-inc");
    process.env.CREATE_POLICY = "admin";
    await call(createCounter, { counterId, numShards: 1 }, ADMIN);
    process.env.CREATE_POLICY = "everyone";
    await expect(call(incrementCounter, { counterId, delta: 2 }, USER)).resolves.toMatchObject({ applied: true });
  });

  it("is an HttpsError, never a silent fallback to a policy", async () => {
    const error = await call(createCounter, { counterId: uniqueId("policy-bad") }, ADMIN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpsError);
  });
});
