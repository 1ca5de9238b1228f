// Shard documents the functions would never write (a manual edit, a bug elsewhere) must not corrupt the
// total. Rule: a count that is not a safe integer (missing, string, null, float, beyond 2^53) counts as 0
// and is logged as an error with the shard's path. A sum beyond 2^53 - 1 is never rounded: the total keeps
// its last exact value and the rollup logs an error.
import { db, deliver, newCounter as newCounterOf, readCounter, rfc3339, type RecordedWrite } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { captureErrorLogs } from "../../test/helpers/rollup";
import { counterRef, shardRef } from "../src/model/paths";
import { randomUUID } from "node:crypto";

beforeAll(requireEmulators);

// Shards written as a console edit writes them carry no `writes`, so no sum of such a counter can tell that
// nothing was applied since the last one (rollup/sum.ts): a chain over it commits every interval until its
// budget runs out (ROLLUP_TIMEOUT_SECONDS less an interval and 10 s; reconcile --fix gives the shards their
// `writes` back). The handler these tests deliver to runs with the shortest timeout the params allow at a
// 1000 ms interval, so its chain hands over after one round instead of 49 s; the functions emulator's own
// rollupTotal sees the same writes, and its chains end when each test deletes its counter (afterEach).
process.env.ROLLUP_TIMEOUT_SECONDS = "12";
const created: string[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((id) => counterRef(db, id).delete()));
});

/** A counter of this file, deleted after its test. */
async function newCounter(prefix: string, numShards: number): Promise<string> {
  const counterId = await newCounterOf(prefix, numShards);
  created.push(counterId);
  return counterId;
}

const errors = captureErrorLogs();

/** Overwrites a shard with arbitrary data (as a console edit would) and records the event. */
async function setShard(counterId: string, shardId: number, data: Record<string, unknown>): Promise<RecordedWrite> {
  const ref = shardRef(db, counterId, shardId);
  const before = await ref.get();
  const result = await ref.set(data);
  const after = await ref.get();
  return { counterId, shardId: String(shardId), before, after, eventId: randomUUID(), time: rfc3339(result.writeTime) };
}

describe("rollupTotal with malformed shard documents", () => {
  it.each([
    ["a string count", { count: "12" }],
    ["a missing count", { other: 5 }],
    ["a null count", { count: null }],
    ["a float count", { count: 2.5 }],
    ["a count beyond 2^53", { count: 2 ** 60 }],
    ["a map as count", { count: { value: 3 } }],
  ])("counts %s as 0 and logs the shard's path", async (_name, data) => {
    const counterId = await newCounter("malformed", 3);
    await deliver(await setShard(counterId, 0, { count: 4 }));
    await deliver(await setShard(counterId, 1, { count: 6 }));
    const bad = await setShard(counterId, 2, data);
    await deliver(bad);
    expect((await readCounter(counterId)).total).toBe(10);
    expect(errors.lines.some((e) => e.includes(`counters/${counterId}/shards/2`) && e.includes("malformed"))).toBe(true);
  });

  it("recovers when the malformed shard is fixed", async () => {
    const counterId = await newCounter("fixed", 2);
    await deliver(await setShard(counterId, 0, { count: 3 }));
    await deliver(await setShard(counterId, 1, { count: "oops" }));
    expect((await readCounter(counterId)).total).toBe(3);
    await deliver(await setShard(counterId, 1, { count: 7 }));
    expect((await readCounter(counterId)).total).toBe(10);
  });

  it("never rounds a sum beyond 2^53 - 1: the total keeps its last exact value", async () => {
    const counterId = await newCounter("overflow", 3);
    await deliver(await setShard(counterId, 0, { count: 2 ** 52 }));
    expect((await readCounter(counterId)).total).toBe(2 ** 52);
    await deliver(await setShard(counterId, 1, { count: 2 ** 52 }));
    expect((await readCounter(counterId)).total).toBe(2 ** 52);
    expect(errors.lines.some((e) => e.includes("beyond 2^53") && e.includes(counterId))).toBe(true);
  });

  it("sums exactly when the running sum passes 2^53 but the total does not", async () => {
    const counterId = await newCounter("near", 3);
    await setShard(counterId, 0, { count: Number.MAX_SAFE_INTEGER - 1 });
    await setShard(counterId, 1, { count: 3 });
    await deliver(await setShard(counterId, 2, { count: -2 }));
    expect((await readCounter(counterId)).total).toBe(Number.MAX_SAFE_INTEGER);
  });
});
