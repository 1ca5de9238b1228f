// COUNTER_KINDS through the wrapped callables against the real Firestore emulator: a counter whose id
// matches a kind gets the declared shard count whoever creates it, a caller asking for another is refused,
// increments beyond the kind's maxDelta are refused, reshard stays an admin's choice, other ids behave as
// before, and a bad rule refuses createCounter and incrementCounter with internal (logged) for the ids it
// could match, and for those only: every other counter, the rollup and the other callables go on. Every
// refusal writes nothing.
import {
  ADMIN,
  USER,
  call,
  db,
  deliver,
  documentsUnder,
  functions,
  httpsErrorOf,
  readCounter,
  shardSum,
  uniqueId,
  withParam,
  writeShard,
} from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { captureErrorLogs } from "../../test/helpers/rollup";
import { requestRef } from "../src/model/paths";

const { createCounter, incrementCounter, setMember, resetCounter, reshardCounter, deleteCounter } = functions;

beforeAll(requireEmulators);
jest.setTimeout(120_000);

interface Created {
  counterId: string;
  numShards: number;
  unique: boolean;
}

/** The ids of a counter's shard documents, sorted numerically. */
async function shardIdsOf(counterId: string): Promise<string[]> {
  const prefix = `counters/${counterId}/shards/`;
  return (await documentsUnder(counterId))
    .filter((path) => path.startsWith(prefix))
    .map((path) => path.slice(prefix.length))
    .sort((a, b) => Number(a) - Number(b));
}

const range = (n: number) => Array.from({ length: n }, (_, i) => String(i));

async function expectRefused(promise: Promise<unknown>, code: string, message: string | RegExp): Promise<void> {
  const error = await httpsErrorOf(promise);
  expect(error.code).toBe(code);
  if (typeof message === "string") expect(error.message).toBe(message);
  else expect(error.message).toMatch(message);
}

// `kind-*` ids are this file's own.
const KINDS = "kind-{id}-likes=shards:20,kind-{id}-views=shards:50;maxDelta:1,kind-{id}-clicks=maxDelta:5";

describe("createCounter with COUNTER_KINDS", () => {
  withParam("COUNTER_KINDS", KINDS);

  it("gives a matching id exactly the declared shards when numShards is omitted, and creates them all", async () => {
    const counterId = `kind-${uniqueId("p")}-views`;
    await expect(call(createCounter, { counterId })).resolves.toEqual({ counterId, numShards: 50, unique: false, windowed: false });
    expect(await readCounter(counterId)).toMatchObject({ exists: true, numShards: 50, total: 0 });
    expect(await shardIdsOf(counterId)).toEqual(range(50));
  });

  it("accepts numShards equal to the declared count", async () => {
    const counterId = `kind-${uniqueId("p")}-likes`;
    await expect(call(createCounter, { counterId, numShards: 20 })).resolves.toEqual({ counterId, numShards: 20, unique: false, windowed: false });
    expect(await shardIdsOf(counterId)).toEqual(range(20));
  });

  it("refuses another numShards (a squatter's 1, a costly 200) with invalid-argument naming numShards, the id and the declared count, and writes nothing", async () => {
    for (const numShards of [1, 49, 200]) {
      const counterId = `kind-${uniqueId("p")}-views`;
      await expectRefused(
        call(createCounter, { counterId, numShards }),
        "invalid-argument",
        `numShards: counter "${counterId}" is declared with 50 shards (COUNTER_KINDS); omit numShards`,
      );
      expect(await documentsUnder(counterId)).toEqual([]);
    }
  });

  it("refuses the same way for an admin: the declared shape is not a caller's choice", async () => {
    const counterId = `kind-${uniqueId("p")}-likes`;
    await expectRefused(call(createCounter, { counterId, numShards: 1 }, ADMIN), "invalid-argument", /^numShards: counter .* is declared with 20 shards/);
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("leaves numShards to the caller for a kind that declares only maxDelta", async () => {
    const counterId = `kind-${uniqueId("p")}-clicks`;
    await expect(call(createCounter, { counterId, numShards: 3 })).resolves.toMatchObject({ numShards: 3 });
    const other = `kind-${uniqueId("p")}-clicks`;
    await expect(call(createCounter, { counterId: other })).resolves.toMatchObject({ numShards: 1 }); // DEFAULT_SHARDS
  });

  it("leaves ids that match no kind as before: any numShards within MAX_SHARDS, DEFAULT_SHARDS when omitted", async () => {
    const counterId = `kind-${uniqueId("p")}-shares`;
    await expect(call(createCounter, { counterId, numShards: 1 })).resolves.toMatchObject({ numShards: 1 });
    const other = `kind-${uniqueId("p")}-views-2`; // the placeholder cannot stretch past the suffix
    await expect(call(createCounter, { counterId: other })).resolves.toMatchObject({ numShards: 1 }); // DEFAULT_SHARDS
  });

  it("does not make a counter unique: uniqueness comes from UNIQUE_COUNTERS alone", async () => {
    const counterId = `kind-${uniqueId("p")}-likes`;
    await expect(call(createCounter, { counterId, unique: true })).resolves.toEqual({ counterId, numShards: 20, unique: true, windowed: false });
    const plain = `kind-${uniqueId("p")}-likes`;
    await expect(call(createCounter, { counterId: plain })).resolves.toEqual({ counterId: plain, numShards: 20, unique: false, windowed: false });
  });

  describe("with UNIQUE_COUNTERS naming the same ids", () => {
    withParam("UNIQUE_COUNTERS", "kind-{id}-likes");

    it("creates a unique counter with the declared shards", async () => {
      const counterId = `kind-${uniqueId("p")}-likes`;
      await expect(call(createCounter, { counterId })).resolves.toEqual({ counterId, numShards: 20, unique: true, windowed: false });
      await expect(call(setMember, { counterId, member: true })).resolves.toMatchObject({ changed: true });
    });
  });
});

describe("createCounter with COUNTER_KINDS={id}=shards:3 (auto ids)", () => {
  withParam("COUNTER_KINDS", "{id}=shards:3");

  it("gives an auto id the declared shards", async () => {
    const created = await call<Created>(createCounter, {});
    expect(created.numShards).toBe(3);
    expect(await shardIdsOf(created.counterId)).toEqual(range(3));
  });

  it("refuses an auto id with another numShards, naming the id it drew, and writes nothing", async () => {
    const error = await httpsErrorOf(call(createCounter, { numShards: 4 }));
    expect(error.code).toBe("invalid-argument");
    const match = /^numShards: counter "([A-Za-z0-9]{20})" is declared with 3 shards \(COUNTER_KINDS\); omit numShards$/.exec(error.message);
    expect(match).not.toBeNull();
    expect(await documentsUnder(match![1]!)).toEqual([]);
  });
});

describe("incrementCounter with COUNTER_KINDS", () => {
  withParam("COUNTER_KINDS", KINDS);

  it("applies deltas within the kind's maxDelta, both signs, and the default delta", async () => {
    const counterId = `kind-${uniqueId("p")}-views`;
    await call(createCounter, { counterId });
    await expect(call(incrementCounter, { counterId, delta: 1 })).resolves.toMatchObject({ applied: true });
    await expect(call(incrementCounter, { counterId, delta: -1 })).resolves.toMatchObject({ applied: true });
    await expect(call(incrementCounter, { counterId })).resolves.toMatchObject({ applied: true });
    expect(await shardSum(counterId)).toBe(1);
  });

  it("refuses |delta| > maxDelta with invalid-argument naming delta and the limit, and writes nothing (no idempotency record either)", async () => {
    const counterId = `kind-${uniqueId("p")}-views`;
    await call(createCounter, { counterId });
    const before = await documentsUnder(counterId);
    for (const delta of [2, -2, 1000]) {
      await expectRefused(
        call(incrementCounter, { counterId, delta, requestId: `r${delta}` }),
        "invalid-argument",
        `delta must be a non-zero integer from -1 to 1 for counter "${counterId}" (COUNTER_KINDS)`,
      );
      expect((await requestRef(db, counterId, `r${delta}`).get()).exists).toBe(false);
    }
    expect(await documentsUnder(counterId)).toEqual(before);
    expect(await shardSum(counterId)).toBe(0);
  });

  it("bounds each kind by its own maxDelta", async () => {
    const counterId = `kind-${uniqueId("p")}-clicks`;
    await call(createCounter, { counterId, numShards: 2 });
    await expect(call(incrementCounter, { counterId, delta: -5 })).resolves.toMatchObject({ applied: true });
    await expectRefused(call(incrementCounter, { counterId, delta: 6 }), "invalid-argument", /^delta must be a non-zero integer from -5 to 5 /);
    expect(await shardSum(counterId)).toBe(-5);
  });

  it("leaves deltas up to MAX_DELTA to kinds without maxDelta and to ids that match no kind", async () => {
    const likes = `kind-${uniqueId("p")}-likes`;
    await call(createCounter, { counterId: likes });
    await expect(call(incrementCounter, { counterId: likes, delta: 1000 })).resolves.toMatchObject({ applied: true });
    const free = uniqueId("kind-free");
    await call(createCounter, { counterId: free, numShards: 1 });
    await expect(call(incrementCounter, { counterId: free, delta: -1000 })).resolves.toMatchObject({ applied: true });
  });

  it("binds a counter created before the kind was declared too: the delta bound follows the id", async () => {
    const counterId = `kind-${uniqueId("p")}-views`;
    process.env.COUNTER_KINDS = "";
    await call(createCounter, { counterId, numShards: 1 });
    process.env.COUNTER_KINDS = KINDS;
    await expectRefused(call(incrementCounter, { counterId, delta: 2 }), "invalid-argument", /^delta must be a non-zero integer from -1 to 1 /);
    expect(await shardSum(counterId)).toBe(0);
  });
});

describe("reshardCounter with COUNTER_KINDS", () => {
  withParam("COUNTER_KINDS", KINDS);

  it("is not bound by the kind: an admin may reshard a declared counter, and its maxDelta still holds", async () => {
    const counterId = `kind-${uniqueId("p")}-views`;
    await call(createCounter, { counterId });
    await call(incrementCounter, { counterId, delta: 1 });
    await expect(call(reshardCounter, { counterId, numShards: 80 }, ADMIN)).resolves.toEqual({ counterId, numShards: 80 });
    expect(await readCounter(counterId)).toMatchObject({ numShards: 80 });
    expect(await shardSum(counterId)).toBe(1);
    await expectRefused(call(incrementCounter, { counterId, delta: 2 }), "invalid-argument", /COUNTER_KINDS/);
  });
});

describe("an invalid COUNTER_KINDS at run time", () => {
  const BAD = "kind-{id}-likes=shards:20,kind-{id}-views=shards:fifty";
  withParam("COUNTER_KINDS", BAD);
  const errors = captureErrorLogs();

  const badRule = 'COUNTER_KINDS: rule 2 \\"kind-{id}-views=shards:fifty\\" sets shards to \\"fifty\\"';

  it("refuses createCounter with internal for the ids the bad rule could match, logs the rule with the call, and writes nothing", async () => {
    const counterId = `kind-${uniqueId("p")}-views`;
    await expectRefused(call(createCounter, { counterId, numShards: 1 }), "internal", "internal error");
    expect(await documentsUnder(counterId)).toEqual([]);
    expect(errors.lines.some((l) => l.includes("createCounter failed") && l.includes(badRule) && l.includes('"uid":"user-1"'))).toBe(true);
  });

  it("creates every other counter as before: an id a valid rule decides, and an id no rule matches", async () => {
    const likes = `kind-${uniqueId("p")}-likes`;
    await expect(call<Created>(createCounter, { counterId: likes })).resolves.toMatchObject({ numShards: 20 });
    const free = uniqueId("kind-free");
    await expect(call<Created>(createCounter, { counterId: free, numShards: 3 })).resolves.toMatchObject({ numShards: 3 });
    await expect(call(incrementCounter, { counterId: free, delta: 4 })).resolves.toMatchObject({ applied: true });
    expect(await shardSum(free)).toBe(4);
    expect(errors.lines).toEqual([]);
  });

  it("refuses incrementCounter with internal on a counter the bad rule could match, and logs the rule, writing nothing", async () => {
    const counterId = `kind-${uniqueId("p")}-views`;
    process.env.COUNTER_KINDS = "";
    await call(createCounter, { counterId, numShards: 1 });
    process.env.COUNTER_KINDS = BAD;
    await expectRefused(call(incrementCounter, { counterId, delta: 1 }), "internal", "internal error");
    expect(await shardSum(counterId)).toBe(0);
    expect(errors.lines.some((l) => l.includes("incrementCounter failed") && l.includes(badRule) && l.includes(counterId))).toBe(true);
  });

  it("never stops the rollup, setMember or the admin callables", async () => {
    const plain = `kind-${uniqueId("bad-plain")}-views`;
    const unique = `kind-${uniqueId("bad-unique")}-views`;
    process.env.COUNTER_KINDS = "";
    await call(createCounter, { counterId: plain, numShards: 2 });
    await call(createCounter, { counterId: unique, numShards: 1, unique: true });
    process.env.COUNTER_KINDS = BAD;
    await deliver(await writeShard(plain, 1, 7));
    expect(await readCounter(plain)).toMatchObject({ total: 7 });
    await expect(call(setMember, { counterId: unique, member: true }, USER)).resolves.toMatchObject({ changed: true });
    await expect(call(reshardCounter, { counterId: plain, numShards: 3 }, ADMIN)).resolves.toMatchObject({ numShards: 3 });
    await expect(call(resetCounter, { counterId: plain }, ADMIN)).resolves.toEqual({ counterId: plain });
    await expect(call(deleteCounter, { counterId: plain }, ADMIN)).resolves.toEqual({ counterId: plain });
  });

  describe("when the bad rule's pattern does not parse either", () => {
    withParam("COUNTER_KINDS", "kind-{id}-likes=shards:20,kind {id}=shards:5");

    it("refuses every id that gets as far as that rule (it could be any), and none that an earlier rule decides", async () => {
      await expectRefused(call(createCounter, { counterId: uniqueId("kind-any") }), "internal", "internal error");
      await expect(call<Created>(createCounter, { counterId: `kind-${uniqueId("p")}-likes` })).resolves.toMatchObject({ numShards: 20 });
    });
  });
});

describe("COUNTER_KINDS beyond the deployed limits (one deploy lowering MAX_SHARDS or MAX_DELTA)", () => {
  withParam("COUNTER_KINDS", "kind-{id}-views=shards:50;maxDelta:10,kind-{id}-likes=shards:4");
  withParam("MAX_SHARDS", "40");
  withParam("MAX_DELTA", "5");
  const errors = captureErrorLogs();

  it("refuses the rule's own ids with internal: a kind can never give more than MAX_SHARDS or MAX_DELTA allow", async () => {
    const counterId = `kind-${uniqueId("p")}-views`;
    await expectRefused(call(createCounter, { counterId }), "internal", "internal error");
    expect(await documentsUnder(counterId)).toEqual([]);
    expect(errors.lines.some((l) => l.includes("createCounter failed") && l.includes('sets shards to \\"50\\": it must be an integer from 1 to 40 (MAX_SHARDS)'))).toBe(true);
  });

  it("keeps every other counter counting: creates and increments within the new limits", async () => {
    const likes = `kind-${uniqueId("p")}-likes`;
    await expect(call<Created>(createCounter, { counterId: likes })).resolves.toMatchObject({ numShards: 4 });
    await expect(call(incrementCounter, { counterId: likes, delta: 5 })).resolves.toMatchObject({ applied: true });
    const free = uniqueId("kind-free");
    await expect(call<Created>(createCounter, { counterId: free })).resolves.toMatchObject({ numShards: 1 }); // DEFAULT_SHARDS
    await expect(call(incrementCounter, { counterId: free, delta: -5 })).resolves.toMatchObject({ applied: true });
    await expectRefused(call(incrementCounter, { counterId: free, delta: 6 }), "invalid-argument", /delta/);
    expect(await shardSum(likes)).toBe(5);
    expect(await shardSum(free)).toBe(-5);
    expect(errors.lines).toEqual([]);
  });
});
