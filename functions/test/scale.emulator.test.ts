// A counter at MAX_GROWN_SHARDS (1000) shards, as growth can make one (docs/growth.md): reshard up to it,
// increments over every shard, reset, reshard down and up again, reconcile and delete, each through the
// callable or the tool an operator runs, each exact. Each operation is one transaction or batch of up to
// about a thousand writes: Firestore bounds a commit by its size (10 MiB), not by its number of writes,
// and a thousand shard writes are a few dozen KiB.
import type { Timestamp } from "firebase-admin/firestore";
import { ADMIN, call, db, documentsUnder, functions, newCounter, readCounter, shardSum } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { withConcurrency } from "../../test/helpers/client";
import { rollupDeps, shardWriteOfIncrement } from "../../test/helpers/rollup";
import { addToRandomShard, type IncrementResult } from "../src/counters/increment";
import { pause } from "../src/model/backoff";
import { zeroShardsAndTotal } from "../src/counters/reset";
import { counterRef, shardsRef } from "../src/model/paths";
import { rollupShardWrite } from "../src/rollup/index";
import { microsCeil, microsFloor } from "../src/model/time";
import { reconcileCounter } from "../src/reconcile/counter";
import { stuckAfterMsFor } from "../src/reconcile/run";

jest.setTimeout(300_000);

beforeAll(requireEmulators);

const MAX_GROWN = Number(process.env.MAX_GROWN_SHARDS);
const { reshardCounter, resetCounter, deleteCounter } = functions;

async function shardIds(counterId: string): Promise<string[]> {
  return (await shardsRef(db, counterId).select().get()).docs.map((d) => d.id).sort((a, b) => Number(a) - Number(b));
}

const range = (n: number) => Array.from({ length: n }, (_, i) => String(i));

/** `n` increments of +1 through incrementCounter's write (random shards), the last one's event rolled up. */
async function increments(counterId: string, n: number): Promise<void> {
  const results = await withConcurrency(32, Array.from({ length: n }, () => () => addToRandomShard(db, counterId, 1, { requestTtlMs: 3_600_000 })));
  const last = results.reduce((a, b) => (microsCeil(a.writeTime) > microsCeil(b.writeTime) ? a : b));
  // One event after every write: its rollup sums all 1000 shards (the claim path or the leading edge).
  await rollupShardWrite(shardWriteOfIncrement(counterId, last, 1), rollupDeps());
}

describe(`a reset at MAX_GROWN_SHARDS (${MAX_GROWN}) shards while the rollup commits the parent every second`, () => {
  it("commits at its first attempt, though a rollup commit lands between its read and its write, and keeps exactly the increments after its read", async () => {
    const counterId = await newCounter("scale-reset", 200);
    await call(reshardCounter, { counterId, numShards: MAX_GROWN }, ADMIN);
    await increments(counterId, 2000);
    // The rollup as a busy counter sees it: an increment and the real rollup of its event, every second.
    const during: IncrementResult[] = [];
    let commits = 0;
    let running = true;
    const rollups = (async () => {
      while (running) {
        const started = Date.now();
        const result = await addToRandomShard(db, counterId, 1, { requestTtlMs: 3_600_000 });
        during.push(result);
        const outcome = await rollupShardWrite(shardWriteOfIncrement(counterId, result, 1), rollupDeps());
        if (outcome.kind === "committed") commits++;
        await pause(Math.max(0, 1000 - (Date.now() - started)));
      }
    })();
    // Every attempt's write comes after a rollup committed the parent since its read (a read of 1,000
    // shards takes about a second here; in production a commit lands in most of them).
    let attempts = 0;
    try {
      // One increment of the loop committed before the reset starts, so before its read: it must be erased.
      const firstIncrement = (async () => {
        while (during.length === 0 && running) await pause(20);
      })();
      await Promise.race([firstIncrement, rollups]); // the loop's failure, if it fails, is the test's
      await zeroShardsAndTotal(db, counterId, {
        beforeCommit: async () => {
          attempts++;
          const seen = commits;
          while (commits === seen) await pause(20);
        },
      });
    } finally {
      running = false;
      await rollups;
    }
    expect(attempts).toBe(1);
    const parent = await counterRef(db, counterId).get();
    const resetAt = parent.get("resetAt") as Timestamp;
    const readTime = parent.get("rollup.readTime") as Timestamp;
    const after = (r: IncrementResult, t: Timestamp) => microsCeil(r.writeTime) > microsFloor(t);
    // The shards hold exactly the increments committed after the reset's read; the total, exactly those
    // its read time covers (the coverage rule).
    expect(await shardSum(counterId)).toBe(during.filter((r) => after(r, resetAt)).length);
    expect((parent.get("total") as number) + during.filter((r) => after(r, readTime)).length).toBe(await shardSum(counterId));
    expect(during.filter((r) => !after(r, resetAt)).length).toBeGreaterThan(0); // some came before the read, and were erased
    // The rollup's next commit sums the shards: the total settles at them.
    const last = await addToRandomShard(db, counterId, 1, { requestTtlMs: 3_600_000 });
    await rollupShardWrite(shardWriteOfIncrement(counterId, last, 1), rollupDeps());
    expect((await readCounter(counterId)).total).toBe(await shardSum(counterId));
  });
});

describe(`a counter at MAX_GROWN_SHARDS (${MAX_GROWN}) shards`, () => {
  it("reshards up to it, takes increments on all of them, resets, reshards down and up, reconciles and deletes, exactly", async () => {
    const counterId = await newCounter("scale", 200); // MAX_SHARDS: what createCounter may be asked for
    await call(reshardCounter, { counterId, numShards: MAX_GROWN }, ADMIN);
    expect(await shardIds(counterId)).toEqual(range(MAX_GROWN));
    expect((await readCounter(counterId)).numShards).toBe(MAX_GROWN);

    await increments(counterId, 3000);
    expect(await shardSum(counterId)).toBe(3000);
    expect((await readCounter(counterId)).total).toBe(3000);
    const touched = (await shardsRef(db, counterId).where("count", ">", 0).get()).size;
    expect(touched).toBeGreaterThan(900); // 3000 random picks over 1000 shards leave about 50 untouched

    // Reset: one consistent read of all 1000 shards, one transaction (over the parent) subtracting what each held.
    await call(resetCounter, { counterId }, ADMIN);
    expect(await shardSum(counterId)).toBe(0);
    expect((await readCounter(counterId)).total).toBe(0);

    // Down: 990 shards read, folded into 10 and deleted in one transaction; the sum stays.
    await increments(counterId, 500);
    await call(reshardCounter, { counterId, numShards: 10 }, ADMIN);
    expect(await shardIds(counterId)).toEqual(range(10));
    expect(await shardSum(counterId)).toBe(500);
    const writes = (await shardsRef(db, counterId).get()).docs.reduce((n, d) => n + (d.get("writes") as number), 0);
    expect(writes).toBe(3500); // the applied writes (growth's measure) move with the counts

    // Up again, and a drift reconcile finds and repairs at this size.
    await call(reshardCounter, { counterId, numShards: MAX_GROWN }, ADMIN);
    await increments(counterId, 1000);
    await counterRef(db, counterId).update({ total: 7 }); // a hand edit: drift
    const check = await reconcileCounter(db, await counterRef(db, counterId).get(), true, { stuckAfterMs: stuckAfterMsFor(1000), nowMs: Date.now });
    expect(check).toMatchObject({ status: "drift", sum: 1500, drift: 7 - 1500, numShards: MAX_GROWN, strayShards: [], missingShards: [], fixed: true });
    expect((await readCounter(counterId)).total).toBe(1500);

    // Delete: the parent and all 1000 shards in one transaction.
    await call(deleteCounter, { counterId }, ADMIN);
    expect(await documentsUnder(counterId)).toEqual([]);
  });
});
