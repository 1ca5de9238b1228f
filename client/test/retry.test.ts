// increment()'s retry policy with an injected transport: which failures are retried, with which key and
// backoff, and what a caller gets back. (With the real SDK and emulators: client.emulator.test.ts.)
import { deleteApp, initializeApp, type FirebaseApp } from "firebase/app";
import { getFirestore } from "firebase/firestore";
import { FunctionsError, getFunctions } from "firebase/functions";
import { createCounterClient, IncrementError, randomRequestId, type IncrementRequest } from "../src";

let app: FirebaseApp;

beforeAll(() => {
  app = initializeApp({ projectId: "demo-client-unit", apiKey: "demo-api-key" }, "client-retry-unit");
});

afterAll(async () => {
  await deleteApp(app);
});

const answer = { counterId: "c", shard: 2, applied: true, writeTime: { seconds: 1_800_000_000, nanoseconds: 5_000 } };

/** A client whose transport answers from a script of outcomes, recording requests and sleeps. */
function scripted(outcomes: (Error | Record<string, unknown>)[], maxAttempts = 5) {
  const requests: IncrementRequest[] = [];
  const sleeps: number[] = [];
  const client = createCounterClient({
    functions: getFunctions(app),
    firestore: getFirestore(app),
    maxAttempts,
    baseDelayMs: 100,
    maxDelayMs: 1_000,
    random: () => 1 - Number.EPSILON, // the top of each jitter range
    sleep: (ms) => {
      sleeps.push(Math.round(ms));
      return Promise.resolve();
    },
    call: (request) => {
      requests.push(request);
      const next = outcomes.shift() ?? new Error("script ran out");
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
  });
  return { client, requests, sleeps };
}

const failure = (code: string) => new FunctionsError(code as never, `simulated ${code}`);

describe("increment retries", () => {
  it.each(["unavailable", "deadline-exceeded", "resource-exhausted", "aborted", "internal"])(
    "retries %s with the same requestId and exponential backoff with jitter",
    async (code) => {
      const { client, requests, sleeps } = scripted([failure(code), failure(code), failure(code), answer]);
      const outcome = await client.increment("c", 3);
      expect(outcome).toEqual({ counterId: "c", requestId: requests[0]!.requestId, writeTime: answer.writeTime, shard: 2, attempts: 4 });
      expect(new Set(requests.map((r) => JSON.stringify(r))).size).toBe(1);
      expect(requests[0]).toMatchObject({ counterId: "c", delta: 3 });
      expect(sleeps).toEqual([100, 200, 400]);
    },
  );

  it.each(["invalid-argument", "not-found", "permission-denied", "unauthenticated", "failed-precondition"])(
    "does not retry %s: rejects with its code, not applied",
    async (code) => {
      const { client, requests } = scripted([failure(code)]);
      const error = (await client.increment("c").catch((e: unknown) => e)) as IncrementError;
      expect(error).toBeInstanceOf(IncrementError);
      expect(error).toMatchObject({ code, counterId: "c", requestId: requests[0]!.requestId, maybeApplied: false });
      expect(requests).toHaveLength(1);
    },
  );

  it("reports maybeApplied when a permanent failure follows a lost answer, and when attempts run out", async () => {
    const late = scripted([failure("unavailable"), failure("unauthenticated")]);
    await expect(late.client.increment("c")).rejects.toMatchObject({ code: "unauthenticated", maybeApplied: true });
    const exhausted = scripted(Array.from({ length: 3 }, () => failure("unavailable")), 3);
    await expect(exhausted.client.increment("c")).rejects.toMatchObject({ code: "unavailable", maybeApplied: true });
    expect(exhausted.requests).toHaveLength(3);
    expect(exhausted.sleeps).toEqual([100, 200]);
  });

  it("retries an answer without a writeTime and an error without a callable code, with the same requestId", async () => {
    const { client, requests } = scripted([{ counterId: "c", applied: true }, new TypeError("network down"), answer]);
    await expect(client.increment("c")).resolves.toMatchObject({ writeTime: answer.writeTime, attempts: 3 });
    expect(new Set(requests.map((r) => r.requestId)).size).toBe(1);
    const never = scripted([{ counterId: "c" }, { counterId: "c" }], 2);
    await expect(never.client.increment("c")).rejects.toMatchObject({ code: "unknown", maybeApplied: true });
  });

  it("caps the backoff at maxDelayMs", async () => {
    const { client, sleeps } = scripted([...Array.from({ length: 6 }, () => failure("unavailable")), answer], 7);
    await client.increment("c");
    expect(sleeps).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it("resumes an action with the requestId it is given", async () => {
    const { client, requests } = scripted([answer]);
    await expect(client.increment("c", 1, { requestId: "tap-7" })).resolves.toMatchObject({ requestId: "tap-7" });
    expect(requests).toEqual([{ counterId: "c", delta: 1, requestId: "tap-7" }]);
  });

  it("rejects a delta that is not a non-zero integer before calling anything", async () => {
    const { client, requests } = scripted([answer]);
    for (const delta of [0, 1.5, Number.NaN]) await expect(client.increment("c", delta)).rejects.toThrow(RangeError);
    expect(requests).toHaveLength(0);
  });

  it("makes one fresh crypto-random requestId per call", async () => {
    const { client, requests } = scripted([answer, answer]);
    await client.increment("c");
    await client.increment("c");
    expect(requests[0]!.requestId).not.toBe(requests[1]!.requestId);
    for (const r of requests) expect(r.requestId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const many = new Set(Array.from({ length: 1000 }, randomRequestId));
    expect(many.size).toBe(1000);
  });
});
