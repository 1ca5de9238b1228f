// The retry policy of increment() and setMember() with an injected transport: which failures are retried,
// with which key and backoff, and what a caller gets back. (With the real SDK and emulators:
// client.emulator.test.ts, membership.emulator.test.ts.)
import { deleteApp, initializeApp, type FirebaseApp } from "firebase/app";
import { getFirestore } from "firebase/firestore";
import { FunctionsError, getFunctions } from "firebase/functions";
import { createCounterClient, IncrementError, SetMemberError, type IncrementRequest, type SetMemberRequest } from "../src";
import { randomRequestId } from "../src/increments";

let app: FirebaseApp;

beforeAll(() => {
  app = initializeApp({ projectId: "demo-client-unit", apiKey: "demo-api-key" }, "client-retry-unit");
});

afterAll(async () => {
  await deleteApp(app);
});

const answer = { counterId: "c", shard: 2, applied: true, writeTime: { seconds: 1_800_000_000, nanoseconds: 5_000 } };

/** A client whose transports (incrementCounter, setMember) answer from one script of outcomes, recording requests and sleeps. */
function scripted(outcomes: (Error | Record<string, unknown>)[], maxAttempts = 5) {
  const requests: IncrementRequest[] = [];
  const memberRequests: SetMemberRequest[] = [];
  const sleeps: number[] = [];
  const next = () => {
    const outcome = outcomes.shift() ?? new Error("script ran out");
    return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
  };
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
      return next();
    },
    callSetMember: (request) => {
      memberRequests.push(request);
      return next();
    },
  });
  return { client, requests, memberRequests, sleeps };
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

  it("says the server's reason in the message, not only the code", async () => {
    const { client } = scripted([new FunctionsError("invalid-argument", "delta must be a non-zero integer from -1000 to 1000 [400]")]);
    await expect(client.increment("c", 5000)).rejects.toMatchObject({
      message: "incrementCounter(c) failed: invalid-argument: delta must be a non-zero integer from -1000 to 1000",
    });
    const network = scripted([failure("internal")], 1);
    await expect(network.client.increment("c")).rejects.toMatchObject({ message: "incrementCounter(c) failed: internal: simulated internal" });
    const bare = scripted([new FunctionsError("internal", "internal")], 1);
    await expect(bare.client.increment("c")).rejects.toMatchObject({ message: "incrementCounter(c) failed: internal" });
  });

  // What JavaScript callers can pass whatever the types say (docs/app.md, "Bad arguments").
  it.each<[string, unknown[], string]>([
    ["a delta of 0", ["c", 0], "delta must be a non-zero integer"],
    ["a fractional delta", ["c", 1.5], "delta must be a non-zero integer"],
    ["a NaN delta", ["c", Number.NaN], "delta must be a non-zero integer"],
    ["a delta given as a string", ["c", "5"], "delta must be a number"],
    ["a counterId that is not a string", [42], "counterId must be a string"],
    ["a counterId with a slash", ["posts/42"], "counterId must be 1-128 characters of A-Z, a-z, 0-9, _ or -"],
    ["an empty counterId", [""], "counterId must be 1-128 characters of A-Z, a-z, 0-9, _ or -"],
    ["a requestId with spaces", ["c", 1, { requestId: "tap 7" }], "requestId must be 1-128 characters of A-Z, a-z, 0-9, _ or -"],
  ])("rejects %s with IncrementError invalid-argument naming the field, before calling or showing anything", async (_, args, reason) => {
    const { client, requests } = scripted([answer]);
    const loose = client as unknown as { increment(...a: unknown[]): Promise<unknown> }; // what plain JavaScript can pass
    const error = (await loose.increment(...args).catch((e: unknown) => e)) as IncrementError;
    expect(error).toBeInstanceOf(IncrementError);
    expect(error).toMatchObject({ code: "invalid-argument", maybeApplied: false });
    expect(error.message).toBe(`incrementCounter(${String(args[0])}) failed: invalid-argument: ${reason}`);
    expect(requests).toHaveLength(0);
  });

  it("rejects a second increment with a requestId still in flight (failed-precondition), sending nothing more", async () => {
    let answerFirst!: (value: unknown) => void;
    const requests: IncrementRequest[] = [];
    const client = createCounterClient({
      functions: getFunctions(app),
      firestore: getFirestore(app),
      call: (request) => {
        requests.push(request);
        return new Promise((resolve) => (answerFirst = resolve));
      },
    });
    const first = client.increment("c", 1, { requestId: "tap-1" });
    await expect(client.increment("c", 1, { requestId: "tap-1" })).rejects.toMatchObject({
      name: "IncrementError",
      code: "failed-precondition",
      message: "incrementCounter(c) failed: failed-precondition: request tap-1 is already in flight",
    });
    answerFirst(answer);
    await expect(first).resolves.toMatchObject({ requestId: "tap-1" });
    expect(requests).toHaveLength(1);
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

describe("setMember and watch arguments", () => {
  function memberClient(outcomes: (Error | Record<string, unknown>)[]) {
    const requests: SetMemberRequest[] = [];
    const client = createCounterClient({
      functions: getFunctions(app),
      firestore: getFirestore(app),
      maxAttempts: 1,
      callSetMember: (request) => {
        requests.push(request);
        const next = outcomes.shift() ?? new Error("script ran out");
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      },
    });
    return { client, requests };
  }

  it("says the server's reason in SetMemberError's message", async () => {
    const { client } = memberClient([new FunctionsError("failed-precondition", 'counter "c" is not a unique counter')]);
    await expect(client.setMember("c", true)).rejects.toMatchObject({
      name: "SetMemberError",
      code: "failed-precondition",
      message: 'setMember(c, true) failed: failed-precondition: counter "c" is not a unique counter',
    });
  });

  it.each<[string, unknown[], string]>([
    ["a member that is not a boolean", ["c", "yes"], "member must be a boolean"],
    ["a counterId with a slash", ["posts/42", true], "counterId must be 1-128 characters of A-Z, a-z, 0-9, _ or -"],
  ])("rejects %s with SetMemberError invalid-argument, sending nothing", async (_, args, reason) => {
    const { client, requests } = memberClient([]);
    const loose = client as unknown as { setMember(...a: unknown[]): Promise<unknown> };
    const error = (await loose.setMember(...args).catch((e: unknown) => e)) as SetMemberError;
    expect(error).toBeInstanceOf(SetMemberError);
    expect(error).toMatchObject({ code: "invalid-argument", maybeApplied: false });
    expect(error.message).toBe(`setMember(${String(args[0])}, ${String(args[1])}) failed: invalid-argument: ${reason}`);
    expect(requests).toHaveLength(0);
  });

  it("throws a TypeError at once for a watch of a bad counterId or without a callback, listening to nothing", () => {
    const { client } = memberClient([]);
    const loose = client as unknown as { watch(...a: unknown[]): unknown; watchMember(...a: unknown[]): unknown };
    expect(() => loose.watch("posts/42", () => undefined)).toThrow(new TypeError("counterId must be 1-128 characters of A-Z, a-z, 0-9, _ or -"));
    expect(() => loose.watch("c")).toThrow(new TypeError("onValue must be a function"));
    expect(() => loose.watchMember("c", "", () => undefined)).toThrow(new TypeError("uid must be the signed-in user's uid (a non-empty string without /)"));
    client.dispose();
  });
});

describe("setMember retries", () => {
  it("retries transient failures with increment's policy and backoff, and reports maybeApplied when a refusal follows one", async () => {
    const { client, memberRequests: requests, sleeps } = scripted([
      failure("unavailable"),
      failure("internal"),
      { changed: true, writeTime: answer.writeTime },
      failure("unavailable"),
      failure("permission-denied"),
    ]);
    await expect(client.setMember("c", true)).resolves.toEqual({ counterId: "c", member: true, changed: true, writeTime: answer.writeTime, attempts: 3 });
    expect(requests).toEqual([1, 2, 3].map(() => ({ counterId: "c", member: true })));
    expect(sleeps).toEqual([100, 200]);
    await expect(client.setMember("c", false)).rejects.toMatchObject({ name: "SetMemberError", code: "permission-denied", maybeApplied: true });
    expect(requests).toHaveLength(5);
    expect(sleeps).toEqual([100, 200, 100]);
  });
});
