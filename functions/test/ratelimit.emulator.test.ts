// The per-caller rate limit and App Check replay refusal through the wrapped callables, against the real
// Firestore emulator: a caller past its bucket gets resource-exhausted and nothing is written; other
// callers are not affected. Each test uses callers of its own (buckets are per uid).
import { randomUUID } from "node:crypto";
import { ADMIN, call, documentsUnder, functions, httpsErrorOf, shardSum, uniqueId, withParam, type Caller } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { fft } from "../../test/helpers/wrapped";

const { createCounter, incrementCounter, setMember } = functions;

beforeAll(requireEmulators);

const someone = (): Caller => ({ uid: `rl-${randomUUID().slice(0, 8)}` });

describe("RATE_LIMIT_PER_MINUTE=60, RATE_LIMIT_BURST=3", () => {
  withParam("RATE_LIMIT_PER_MINUTE", "60");
  withParam("RATE_LIMIT_BURST", "3");
  withParam("CREATE_POLICY", "signed-in");

  it("lets a caller make 3 increments at once, refuses the 4th with resource-exhausted and does not write it", async () => {
    const counterId = uniqueId("rl-inc");
    await call(createCounter, { counterId, numShards: 2 }, ADMIN);
    const bot = someone();
    for (let i = 0; i < 3; i++) await call(incrementCounter, { counterId, delta: 10 }, bot);
    const error = await httpsErrorOf(call(incrementCounter, { counterId, delta: 10 }, bot));
    expect(error.code).toBe("resource-exhausted");
    expect(error.message).toBe("incrementCounter: too many calls from this user; try again in a few seconds");
    expect(await shardSum(counterId)).toBe(30);
  });

  it("does not limit another caller", async () => {
    const counterId = uniqueId("rl-other");
    await call(createCounter, { counterId, numShards: 1 }, ADMIN);
    const bot = someone();
    for (let i = 0; i < 3; i++) await call(incrementCounter, { counterId }, bot);
    await expect(call(incrementCounter, { counterId }, bot)).rejects.toMatchObject({ code: "resource-exhausted" });
    await expect(call(incrementCounter, { counterId }, someone())).resolves.toMatchObject({ applied: true });
  });

  it("gives a refused caller a token back after a second (60 per minute)", async () => {
    const counterId = uniqueId("rl-refill");
    await call(createCounter, { counterId, numShards: 1 }, ADMIN);
    const bot = someone();
    for (let i = 0; i < 3; i++) await call(incrementCounter, { counterId }, bot);
    await expect(call(incrementCounter, { counterId }, bot)).rejects.toMatchObject({ code: "resource-exhausted" });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await expect(call(incrementCounter, { counterId }, bot)).resolves.toMatchObject({ applied: true });
  });

  it("limits createCounter: the 4th create is refused and writes nothing", async () => {
    const bot = someone();
    for (let i = 0; i < 3; i++) await call(createCounter, { counterId: uniqueId("rl-create"), numShards: 1 }, bot);
    const counterId = uniqueId("rl-create");
    await expect(call(createCounter, { counterId, numShards: 200 }, bot)).rejects.toMatchObject({ code: "resource-exhausted" });
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("limits setMember", async () => {
    const counterId = uniqueId("rl-member");
    await call(createCounter, { counterId, numShards: 1, unique: true }, ADMIN);
    const bot = someone();
    for (const member of [true, false, true]) await call(setMember, { counterId, member }, bot);
    await expect(call(setMember, { counterId, member: false }, bot)).rejects.toMatchObject({ code: "resource-exhausted" });
    expect(await documentsUnder(counterId)).toContain(`counters/${counterId}/members/${bot.uid}`);
  });
});

describe("RATE_LIMIT_PER_MINUTE=0", () => {
  withParam("RATE_LIMIT_PER_MINUTE", "0");
  withParam("RATE_LIMIT_BURST", "1");

  it("does not limit", async () => {
    const counterId = uniqueId("rl-off");
    await call(createCounter, { counterId, numShards: 1 }, ADMIN);
    const bot = someone();
    for (let i = 0; i < 10; i++) await call(incrementCounter, { counterId }, bot);
    expect(await shardSum(counterId)).toBe(10);
  });
});

describe("a consumed App Check token (CONSUME_APP_CHECK_TOKEN)", () => {
  it("is refused with unauthenticated and nothing is written", async () => {
    const counterId = uniqueId("replay");
    await call(createCounter, { counterId, numShards: 1 }, ADMIN);
    const wrapped = fft.wrap(incrementCounter) as unknown as (request: unknown) => Promise<unknown>;
    const auth = { uid: "replayer", token: { uid: "replayer", firebase: { sign_in_provider: "password" } } };
    const error = await httpsErrorOf(wrapped({ data: { counterId }, auth, app: { appId: "1:1:web:1", token: {}, alreadyConsumed: true } }));
    expect(error.code).toBe("unauthenticated");
    expect(error.message).toMatch(/already used \(replay protection\)/);
    expect(await shardSum(counterId)).toBe(0);
    await expect(wrapped({ data: { counterId }, auth, app: { appId: "1:1:web:1", token: {}, alreadyConsumed: false } })).resolves.toMatchObject({ applied: true });
  });
});
