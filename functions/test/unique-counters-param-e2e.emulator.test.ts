// UNIQUE_COUNTERS through the JS SDK and the functions emulator: the param is set in functions/.env.local
// and the functions reloaded (touching lib/index.js makes the emulator read the .env files again,
// test/helpers/local-params.ts), then restored. Its patterns are ids no other test uses.
import { FunctionsError } from "firebase/functions";
import { functionsErrorCode, isTransportFailure, signedInClient, type Client } from "../../test/helpers/client";
import { e2eAdminDb } from "../../test/helpers/admin";
import { pathsUnderIn } from "../../test/helpers/documents";
import { localParam, type LocalParam } from "../../test/helpers/local-params";

jest.setTimeout(300_000);

const RELOAD_MS = 120_000;
const db = e2eAdminDb();

let user: Client;
let uniqueParam: LocalParam;
let serial = 0;

const reservedId = () => `e2e-reserved-${Date.now()}-${serial++}-likes`;

/** Sets UNIQUE_COUNTERS in .env.local (keeping anything else in it) and reloads the functions. */
function setParam(value: string | undefined): void {
  uniqueParam.set(value);
}

/** Calls createCounter for a fresh reserved id until `check` accepts the outcome (the reload is done). */
async function untilReloaded(check: (outcome: unknown) => boolean): Promise<void> {
  const started = Date.now();
  for (;;) {
    const outcome = await user.call("createCounter", { counterId: reservedId(), numShards: 1 }).catch((e: unknown) => e);
    // A reset by the reload itself is no answer of either the old or the new functions.
    if (!isTransportFailure(outcome) && check(outcome)) return;
    if (Date.now() - started > RELOAD_MS) throw new Error(`the functions did not reload with the new UNIQUE_COUNTERS: ${String(outcome)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const isUnique = (outcome: unknown) => (outcome as { unique?: unknown }).unique === true;

beforeAll(async () => {
  user = await signedInClient();
  uniqueParam = localParam("UNIQUE_COUNTERS");
});

afterAll(async () => {
  try {
    uniqueParam.restore();
    // Leave the emulator serving the committed params for the tests that run next.
    await untilReloaded((outcome) => (outcome as { unique?: unknown }).unique === false);
  } finally {
    await user?.close();
  }
});

describe("UNIQUE_COUNTERS=e2e-reserved-{id}-likes", () => {
  beforeAll(async () => {
    setParam("e2e-reserved-{id}-likes");
    await untilReloaded(isUnique);
  });

  it("makes a matching id unique when unique is omitted, and only setMember moves it", async () => {
    const counterId = reservedId();
    await expect(user.call("createCounter", { counterId, numShards: 2 })).resolves.toEqual({ counterId, numShards: 2, unique: true, windowed: false });
    expect(await functionsErrorCode(user.call("incrementCounter", { counterId, delta: 1000 }))).toBe("functions/failed-precondition");
    await expect(user.call("setMember", { counterId, member: true })).resolves.toMatchObject({ changed: true });
  });

  it("refuses unique: false for a matching id with invalid-argument naming unique, and writes nothing", async () => {
    const counterId = reservedId();
    const error = await user.call("createCounter", { counterId, unique: false }).catch((e: unknown) => e);
    expect((error as FunctionsError).code).toBe("functions/invalid-argument");
    expect((error as FunctionsError).message).toMatch(/^unique must be true or omitted/);
    expect(await pathsUnderIn(db, counterId)).toEqual([]);
  });

  it("leaves an id that does not match plain", async () => {
    const counterId = `e2e-reserved-${Date.now()}-views`;
    await expect(user.call("createCounter", { counterId })).resolves.toMatchObject({ unique: false });
  });
});

describe("an invalid UNIQUE_COUNTERS", () => {
  const plain = `e2e-param-plain-${Date.now()}`;
  beforeAll(async () => {
    await user.call("createCounter", { counterId: plain, numShards: 1 });
    setParam("e2e-reserved-{id}-likes,posts/{id}");
    await untilReloaded((outcome) => outcome instanceof FunctionsError && outcome.code === "functions/internal");
  });

  it("refuses createCounter with internal and writes nothing, and never stops existing counters", async () => {
    const counterId = `e2e-param-other-${Date.now()}`;
    expect(await functionsErrorCode(user.call("createCounter", { counterId }))).toBe("functions/internal");
    expect(await pathsUnderIn(db, counterId)).toEqual([]);
    await expect(user.call("incrementCounter", { counterId: plain, delta: 2 })).resolves.toMatchObject({ applied: true });
  });
});
