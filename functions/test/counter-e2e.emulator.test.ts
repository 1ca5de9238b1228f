// End to end, as a mobile/web app uses the backend: the Firebase JS SDK signs in through the Auth
// emulator, calls the callables served by the functions emulator, and reads the total with getDoc. The
// rollup runs as the real trigger, fed by the Firestore emulator.
import { FunctionsError } from "firebase/functions";
import { E2E_PROJECT, signedInClient, withConcurrency, type Client } from "../../test/helpers/client";
import { requireFunctionsEmulator } from "../../test/helpers/emulators";

const LAG_BOUND_MS = 30_000; // generous: the emulator on 2 cores; the README reports measured lag

jest.setTimeout(180_000);

let client: Client;

beforeAll(async () => {
  client = await signedInClient();
});

afterAll(async () => {
  await client?.close();
});

describe("a signed-in app", () => {
  it("creates a counter, makes 100 mixed increments, and reads the exact total soon after", async () => {
    const counterId = `e2e-${Date.now()}`;
    await expect(client.call("createCounter", { counterId, numShards: 5 })).resolves.toEqual({ counterId, numShards: 5, unique: false, windowed: false });
    expect(await client.readCounter(counterId)).toMatchObject({ numShards: 5, total: 0 });

    const deltas = Array.from({ length: 100 }, (_, i) => (i % 5 === 4 ? -3 : i % 7) || 2);
    const expected = deltas.reduce((a, b) => a + b, 0);
    const started = Date.now();
    const results = await withConcurrency(
      4,
      deltas.map((delta) => () => client.call<{ applied: boolean; shard: number }>("incrementCounter", { counterId, delta })),
    );
    const lastIncrementAt = Date.now();
    expect(results.every((r) => r.applied && r.shard >= 0 && r.shard < 5)).toBe(true);

    let parent = await client.readCounter(counterId);
    while (parent?.total !== expected && Date.now() - lastIncrementAt < LAG_BOUND_MS) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      parent = await client.readCounter(counterId);
    }
    const lagMs = Date.now() - lastIncrementAt;
    const commits = (parent?.rollup as { commits?: number } | undefined)?.commits;
    console.log(
      `100 increments in ${lastIncrementAt - started} ms; total exact ${lagMs} ms after the last one; ` +
        `rollup wrote the parent ${commits} times`,
    );
    expect(parent?.total).toBe(expected);
    expect(lagMs).toBeLessThan(LAG_BOUND_MS);
    // Coalesced: about one parent write per interval, not one per increment.
    const intervals = Math.ceil((Date.now() - started) / Number(process.env.ROLLUP_INTERVAL_MS)) + 2;
    expect(commits).toBeLessThanOrEqual(intervals);
    expect(commits).toBeLessThan(100);
  });

  it("gets not-found for an unknown counter and invalid-argument for a bad delta", async () => {
    const missing = await client.call("incrementCounter", { counterId: `nope-${Date.now()}` }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(FunctionsError);
    expect((missing as FunctionsError).code).toBe("functions/not-found");
    const bad = await client.call("incrementCounter", { counterId: "x", delta: 1.5 }).catch((e: unknown) => e);
    expect((bad as FunctionsError).code).toBe("functions/invalid-argument");
    expect((bad as FunctionsError).message).toMatch(/delta/);
  });
});

describe("incrementCounter's writeTime through the real SDK", () => {
  type Answer = { counterId: string; shard: number; applied: boolean; writeTime: { seconds: number; nanoseconds: number } };
  const isTime = (w: unknown) =>
    typeof w === "object" &&
    w !== null &&
    Object.keys(w).sort().join() === "nanoseconds,seconds" &&
    Number.isSafeInteger((w as { seconds: unknown }).seconds) &&
    Number.isInteger((w as { nanoseconds: unknown }).nanoseconds) &&
    (w as { nanoseconds: number }).nanoseconds >= 0 &&
    (w as { nanoseconds: number }).nanoseconds <= 999_999_999;

  it("answers { counterId, shard, applied, writeTime } with writeTime as plain integers, the same on a replay", async () => {
    const counterId = `e2e-wt-${Date.now()}`;
    await client.call("createCounter", { counterId, numShards: 2 });
    const first = await client.call<Answer>("incrementCounter", { counterId, delta: 2, requestId: "e2e-wt-1" });
    expect(Object.keys(first).sort()).toEqual(["applied", "counterId", "shard", "writeTime"]);
    expect(first).toMatchObject({ counterId, applied: true });
    expect(isTime(first.writeTime)).toBe(true);
    expect(Math.abs(first.writeTime.seconds * 1000 - Date.now())).toBeLessThan(10 * 60_000); // a plausible epoch time
    const replay = await client.call<Answer>("incrementCounter", { counterId, delta: 2, requestId: "e2e-wt-1" });
    expect(replay).toEqual({ counterId, shard: first.shard, applied: false, writeTime: first.writeTime });
    const plain = await client.call<Answer>("incrementCounter", { counterId });
    expect(isTime(plain.writeTime)).toBe(true);
    const after = (a: Answer, b: Answer) =>
      a.writeTime.seconds > b.writeTime.seconds ||
      (a.writeTime.seconds === b.writeTime.seconds && a.writeTime.nanoseconds > b.writeTime.nanoseconds);
    expect(after(plain, first)).toBe(true);
  });
});

describe("the callable HTTP protocol", () => {
  it("refuses a __proto__ key in the raw request body, which the decoder would turn into a prototype", async () => {
    const host = await requireFunctionsEmulator();
    const counterId = `e2e-proto-${Date.now()}`;
    const response = await fetch(`http://${host}/${E2E_PROJECT}/us-central1/createCounter`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await client.user.getIdToken()}` },
      body: `{"data":{"counterId":"${counterId}","__proto__":{"numShards":5}}}`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { status: "INVALID_ARGUMENT", message: 'unknown field "__proto__": not part of this request' },
    });
    expect(await client.readCounter(counterId)).toBeUndefined();
  });
});
