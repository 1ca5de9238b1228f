// COUNTER_KINDS (shards, maxDelta, callers) through the JS SDK, the functions emulator and the real rollup: the param is set in
// functions/.env.local and the functions reloaded (touching lib/index.js makes the emulator read the .env
// files again: test/helpers/local-params.ts), then restored. Its pattern names ids no other test uses.
import { getApps } from "firebase-admin/app";
import { FunctionsError } from "firebase/functions";
import { functionsErrorCode, isTransportFailure, signedInClient, type Client } from "../../test/helpers/client";
import { e2eAdminDb, waitFor } from "../../test/helpers/admin";
import { pathsUnderIn, shardSumIn } from "../../test/helpers/documents";
import { localParam, type LocalParam } from "../../test/helpers/local-params";
import { untilPublished } from "../../test/helpers/published-params";
import * as adminEntry from "../src/admin";

jest.setTimeout(300_000);

const RELOAD_MS = 120_000;
const SETTLE_MS = 15_000;
/** 7, not DEFAULT_SHARDS (1): a create without numShards tells which value the functions run with. */
const KINDS = "e2e-kind-{id}-views=shards:7;maxDelta:1,e2e-kind-{id}-stars=callers:add,e2e-kind-{id}-score=callers:none";
const db = e2eAdminDb();

let user: Client;
let admin: Client;
let kindsParam: LocalParam;
let serial = 0;
const savedKinds = process.env.COUNTER_KINDS;

const viewsId = () => `e2e-kind-${Date.now()}x${serial++}-views`;
const total = async (counterId: string) => (await db.doc(`counters/${counterId}`).get()).get("total") as unknown;

/** Creates a fresh views counter without numShards until `check` accepts the outcome (the reload is done). */
async function untilReloaded(check: (outcome: unknown) => boolean): Promise<void> {
  const started = Date.now();
  for (;;) {
    const outcome = await user.call("createCounter", { counterId: viewsId() }).catch((e: unknown) => e);
    // A reset by the reload itself is no answer of either the old or the new functions.
    if (!isTransportFailure(outcome) && check(outcome)) return;
    if (Date.now() - started > RELOAD_MS) throw new Error(`the functions did not reload with the new COUNTER_KINDS: ${String(outcome)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Waits until incrementCounter runs with the new COUNTER_KINDS too. A worker started after .env.local changed
 * reads the new values (createCounter's, when it had none idle), while a worker of another function left idle
 * from before serves with the old ones until the emulator has loaded the functions again and stopped it: so a
 * views counter's increment beyond maxDelta:1 must be refused before the tests run (each try on a fresh counter).
 */
async function untilIncrementsBounded(): Promise<void> {
  const started = Date.now();
  for (;;) {
    const counterId = viewsId();
    await user.call("createCounter", { counterId }).catch(() => undefined);
    const outcome = await user.call("incrementCounter", { counterId, delta: 2 }).catch((e: unknown) => e);
    if (outcome instanceof FunctionsError && outcome.code === "functions/invalid-argument") return;
    if (Date.now() - started > RELOAD_MS) throw new Error(`incrementCounter did not reload with the new COUNTER_KINDS: ${String(outcome)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const shardsAre = (n: number) => (outcome: unknown) => (outcome as { numShards?: unknown }).numShards === n;

beforeAll(async () => {
  user = await signedInClient();
  admin = await signedInClient({ admin: true });
  kindsParam = localParam("COUNTER_KINDS");
});

afterAll(async () => {
  try {
    kindsParam.restore();
    if (savedKinds === undefined) delete process.env.COUNTER_KINDS;
    else process.env.COUNTER_KINDS = savedKinds;
    // Leave the emulator serving the committed params for the tests that run next.
    await untilReloaded(shardsAre(Number(process.env.DEFAULT_SHARDS)));
  } finally {
    await user?.close();
    await admin?.close();
  }
});

describe(`COUNTER_KINDS=${KINDS}`, () => {
  beforeAll(async () => {
    kindsParam.set(KINDS);
    await untilReloaded(shardsAre(7));
    await untilIncrementsBounded();
    // The app's own code (the admin entry, in this process) runs with the codebase's values, as it must.
    process.env.COUNTER_KINDS = KINDS;
    await untilPublished(db, { COUNTER_KINDS: KINDS });
  });

  it("creates a matching id with the declared shards, whoever creates it", async () => {
    const counterId = viewsId();
    await expect(user.call("createCounter", { counterId })).resolves.toEqual({ counterId, numShards: 7, unique: false, windowed: false });
    const shards = (await pathsUnderIn(db, counterId)).filter((path) => path.includes("/shards/"));
    expect(shards).toHaveLength(7);
  });

  it("refuses a squatter's numShards: 1 with invalid-argument naming numShards, the id and the declared count, and writes nothing", async () => {
    const counterId = viewsId();
    const error = await user.call("createCounter", { counterId, numShards: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FunctionsError);
    expect((error as FunctionsError).code).toBe("functions/invalid-argument");
    // (the SDK may append the HTTP status: "... [400]")
    expect((error as FunctionsError).message).toContain(`numShards: counter "${counterId}" is declared with 7 shards (COUNTER_KINDS); omit numShards`);
    expect(await pathsUnderIn(db, counterId)).toEqual([]);
  });

  it("refuses a delta beyond maxDelta, naming delta and the limit, and the rollup counts only what was applied", async () => {
    const counterId = viewsId();
    await user.call("createCounter", { counterId });
    await expect(user.call("incrementCounter", { counterId })).resolves.toMatchObject({ applied: true });
    const error = await user.call("incrementCounter", { counterId, delta: 1000 }).catch((e: unknown) => e);
    expect((error as FunctionsError).code).toBe("functions/invalid-argument");
    expect((error as FunctionsError).message).toContain(`delta must be a non-zero integer from -1 to 1 for counter "${counterId}" (COUNTER_KINDS)`);
    await expect(user.call("incrementCounter", { counterId, delta: -1 })).resolves.toMatchObject({ applied: true });
    await expect(user.call("incrementCounter", { counterId, delta: 1 })).resolves.toMatchObject({ applied: true });
    expect(await shardSumIn(db, counterId)).toBe(1);
    expect((await waitFor(() => total(counterId), 1, SETTLE_MS)).value).toBe(1);
  });

  it("lets an admin reshard a declared counter", async () => {
    const counterId = viewsId();
    await user.call("createCounter", { counterId });
    await expect(admin.call("reshardCounter", { counterId, numShards: 30 })).resolves.toEqual({ counterId, numShards: 30 });
  });

  it("callers:add: a client adds, a negative delta is invalid-argument naming delta, and the rollup counts what was added", async () => {
    const counterId = `e2e-kind-${Date.now()}x${serial++}-stars`;
    await user.call("createCounter", { counterId });
    await expect(user.call("incrementCounter", { counterId, delta: 5 })).resolves.toMatchObject({ applied: true });
    const error = await user.call("incrementCounter", { counterId, delta: -5 }).catch((e: unknown) => e);
    expect((error as FunctionsError).code).toBe("functions/invalid-argument");
    expect((error as FunctionsError).message).toContain(`delta must be a positive integer up to 1000 for counter "${counterId}": callers only add to it (COUNTER_KINDS callers:add)`);
    expect((await waitFor(() => total(counterId), 5, SETTLE_MS)).value).toBe(5);
  });

  it("callers:none: clients, an admin among them, neither create nor move it (permission-denied naming COUNTER_KINDS); the admin entry does, and clients read the total", async () => {
    const counterId = `e2e-kind-${Date.now()}x${serial++}-score`;
    for (const client of [user, admin]) {
      expect(await functionsErrorCode(client.call("createCounter", { counterId }))).toBe("functions/permission-denied");
    }
    expect(await pathsUnderIn(db, counterId)).toEqual([]);
    const app = getApps().find((a) => a.name === "e2e-admin")!;
    await adminEntry.createCounter(counterId, { app });
    await adminEntry.incrementCounter(counterId, 40, { app });
    const error = await user.call("incrementCounter", { counterId, delta: 1 }).catch((e: unknown) => e);
    expect((error as FunctionsError).code).toBe("functions/permission-denied");
    expect((error as FunctionsError).message).toContain(`counter "${counterId}" is moved only by the app's own functions (COUNTER_KINDS e2e-kind-{id}-score: callers:none)`);
    expect((await waitFor(async () => (await user.readCounter(counterId))?.total, 40, SETTLE_MS)).value).toBe(40);
  });

  it("leaves other ids as before", async () => {
    const counterId = `e2e-kind-${Date.now()}x${serial++}-likes`;
    await expect(user.call("createCounter", { counterId, numShards: 1 })).resolves.toMatchObject({ numShards: 1 });
    await expect(user.call("incrementCounter", { counterId, delta: 1000 })).resolves.toMatchObject({ applied: true });
  });
});

describe("an invalid COUNTER_KINDS", () => {
  const existing = viewsId();
  const plain = `e2e-kind-plain-${Date.now()}`;
  beforeAll(async () => {
    await user.call("createCounter", { counterId: existing });
    await user.call("createCounter", { counterId: plain, numShards: 1 });
    kindsParam.set("e2e-kind-{id}-views=shards:7;shards:8");
    await untilReloaded((outcome) => outcome instanceof FunctionsError && outcome.code === "functions/internal");
  });

  it("refuses createCounter and incrementCounter with internal for the ids the bad rule could match, and writes nothing", async () => {
    const counterId = viewsId();
    expect(await functionsErrorCode(user.call("createCounter", { counterId }))).toBe("functions/internal");
    expect(await pathsUnderIn(db, counterId)).toEqual([]);
    expect(await functionsErrorCode(user.call("incrementCounter", { counterId: existing }))).toBe("functions/internal");
    expect(await shardSumIn(db, existing)).toBe(0);
  });

  it("leaves every other counter counting", async () => {
    await expect(user.call("incrementCounter", { counterId: plain, delta: 3 })).resolves.toMatchObject({ applied: true });
    expect(await shardSumIn(db, plain)).toBe(3);
    const other = `e2e-kind-other-${Date.now()}`;
    await expect(user.call("createCounter", { counterId: other, numShards: 2 })).resolves.toMatchObject({ numShards: 2 });
  });

  it("leaves the admin callables working", async () => {
    await expect(admin.call("reshardCounter", { counterId: existing, numShards: 2 })).resolves.toEqual({ counterId: existing, numShards: 2 });
  });
});
