// CREATE_POLICY through the JS SDK, the Auth emulator's real ID tokens (anonymous, email/password, a
// custom claim) and the functions emulator. The shipped value comes from functions/.env
// (signed-in, what the example page and npm run seed need); each stricter policy is set in
// functions/.env.local and the functions reloaded (touching lib/index.js makes the emulator read the .env
// files again: test/helpers/local-params.ts), then restored.
import { FunctionsError } from "firebase/functions";
import { functionsErrorCode, signedInClient, type Client } from "../../test/helpers/client";
import { e2eAdminDb } from "../../test/helpers/admin";
import { pathsUnderIn } from "../../test/helpers/documents";
import { localParam, type LocalParam } from "../../test/helpers/local-params";

jest.setTimeout(300_000);

const RELOAD_MS = 120_000;
const db = e2eAdminDb();

let anonymous: Client;
let member: Client;
let admin: Client;
let policy: LocalParam;
let serial = 0;

const freshId = () => `e2e-policy-${Date.now()}-${serial++}`;

/** Sets CREATE_POLICY in .env.local (keeping anything else in it) and reloads the functions. */
function setPolicy(value: string | undefined): void {
  policy.set(value);
}

/** What createCounter answers `client` for a fresh id: "ok" or the error code. */
async function createOutcome(client: Client): Promise<string> {
  return client.call("createCounter", { counterId: freshId(), numShards: 1 }).then(
    () => "ok",
    (e: unknown) => (e instanceof FunctionsError ? e.code : String(e)),
  );
}

/** Polls with the anonymous user until the reload shows (`want` is its outcome under the new policy). */
async function untilReloaded(want: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    const outcome = await createOutcome(anonymous);
    if (outcome === want) return;
    if (Date.now() - started > RELOAD_MS) throw new Error(`the functions did not reload with the new CREATE_POLICY: ${outcome}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  anonymous = await signedInClient(undefined, { anonymous: true });
  member = await signedInClient();
  admin = await signedInClient({ admin: true });
  policy = localParam("CREATE_POLICY");
});

afterAll(async () => {
  try {
    policy.restore();
    // Leave the emulator serving the committed params for the tests that run next.
    await untilReloaded("ok");
  } finally {
    await Promise.all([anonymous, member, admin].map((c) => c?.close()));
  }
});

describe("the shipped CREATE_POLICY (functions/.env: signed-in, open for local use)", () => {
  it("lets an anonymous user create, as the example page and npm run seed do", async () => {
    expect(await createOutcome(anonymous)).toBe("ok");
  });
});

describe("CREATE_POLICY=non-anonymous", () => {
  beforeAll(async () => {
    setPolicy("non-anonymous");
    await untilReloaded("functions/permission-denied");
  });

  it("refuses an anonymous user with permission-denied naming the policy, and writes nothing", async () => {
    const counterId = freshId();
    const error = await anonymous.call("createCounter", { counterId, numShards: 200 }).catch((e: unknown) => e);
    expect((error as FunctionsError).code).toBe("functions/permission-denied");
    expect((error as FunctionsError).message).toMatch(/CREATE_POLICY=non-anonymous/);
    expect(await pathsUnderIn(db, counterId)).toEqual([]);
  });

  it("lets an email/password user create, and the anonymous user still count on it", async () => {
    const counterId = freshId();
    await expect(member.call("createCounter", { counterId, numShards: 1 })).resolves.toMatchObject({ counterId });
    await expect(anonymous.call("incrementCounter", { counterId })).resolves.toMatchObject({ applied: true });
  });
});

describe("CREATE_POLICY=admin", () => {
  beforeAll(async () => {
    setPolicy("admin");
    // The anonymous user is refused under both stricter policies: wait until the member is refused too.
    const started = Date.now();
    while ((await createOutcome(member)) !== "functions/permission-denied") {
      if (Date.now() - started > RELOAD_MS) throw new Error("the functions did not reload with CREATE_POLICY=admin");
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  });

  it("refuses a signed-in user without the admin claim with permission-denied naming the policy, and writes nothing", async () => {
    const counterId = freshId();
    const error = await member.call("createCounter", { counterId }).catch((e: unknown) => e);
    expect((error as FunctionsError).code).toBe("functions/permission-denied");
    // The JS SDK appends the HTTP status (" [403]") to the server's message.
    expect((error as FunctionsError).message).toMatch(/^createCounter is limited to admins \(CREATE_POLICY=admin\): it requires the custom claim admin: true/);
    expect(await pathsUnderIn(db, counterId)).toEqual([]);
    expect(await functionsErrorCode(anonymous.call("createCounter", { counterId }))).toBe("functions/permission-denied");
  });

  it("lets a user with the custom claim admin: true create", async () => {
    const counterId = freshId();
    await expect(admin.call("createCounter", { counterId, numShards: 2 })).resolves.toEqual({ counterId, numShards: 2, unique: false, windowed: false });
  });
});
