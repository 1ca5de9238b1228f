// Shards that grow with the load (docs/growth.md), under production-like delivery: increments go through
// incrementCounter's own write (random shard from the shape cache, `writes` + 1 in the same write) at a
// steady rate, and each write's event is delivered at once, concurrently, to the real rollup over the
// emulator, on two simulated instances (the emulator's own trigger delivery is one event at a time, which
// production's is not). The clock is real: growth waits for 10 s of load, as deployed.
import { db, newCounter, readCounter } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { rollupDeps, shardWriteOfIncrement } from "../../test/helpers/rollup";
import { addToRandomShard } from "../src/counters/increment";
import { shardsRef } from "../src/model/paths";
import { rollupShardWrite } from "../src/rollup/index";
import type { NowMemo, ParentMemo, RollupOutcome } from "../src/rollup/types";

jest.setTimeout(180_000);

beforeAll(requireEmulators);

const instances = [0, 1].map(() => ({ leads: new Map() as NowMemo, parents: new Map() as ParentMemo }));

interface Driven {
  counterId: string;
  increments: number;
  sum: number;
  deliveries: Promise<RollupOutcome>[];
}

/**
 * One increment through incrementCounter's write, and its event delivered to the rollup at once (not
 * awaited: the next increment does not wait for the rollup, as in production). The event carries what the
 * rollup reads of it: the shard, the commit time, a count that changed.
 */
async function incrementAndDeliver(driven: Driven, delta: number): Promise<void> {
  const result = await addToRandomShard(db, driven.counterId, delta, { requestTtlMs: 3_600_000 });
  driven.increments++;
  driven.sum += delta;
  const write = shardWriteOfIncrement(driven.counterId, result, delta);
  driven.deliveries.push(rollupShardWrite(write, rollupDeps(instances[driven.increments % instances.length])));
}

async function shardsOf(counterId: string): Promise<{ ids: string[]; count: number; writes: number }> {
  const snap = await shardsRef(db, counterId).get();
  return {
    ids: snap.docs.map((d) => d.id).sort((a, b) => Number(a) - Number(b)),
    count: snap.docs.reduce((n, d) => n + (d.get("count") as number), 0),
    writes: snap.docs.reduce((n, d) => n + (d.get("writes") as number), 0),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe("a counter under load", () => {
  it("grows from 1 shard at 40 increments/s to at least 16 within 30 s, exactly, while one at 1/s stays at 1", async () => {
    const hot: Driven = { counterId: await newCounter("grow-hot", 1), increments: 0, sum: 0, deliveries: [] };
    const calm: Driven = { counterId: await newCounter("grow-calm", 1), increments: 0, sum: 0, deliveries: [] };
    const calls: Promise<void>[] = [];
    const started = Date.now();
    let grewAtMs: number | null = null;
    const shardsSeen: number[] = [];
    // 40 increments a second (one every 25 ms) on the hot counter, one a second on the calm one, until the
    // hot one has 16 shards (and 8 s more: an instance's cached numShards lives 5 s, then its increments
    // spread over the new shards) or 30 s have passed.
    for (let tick = 0; Date.now() - started < 30_000 && (grewAtMs === null || Date.now() - started < grewAtMs + 8_000); tick++) {
      await sleep(started + tick * 25 - Date.now());
      const delta = tick % 10 === 9 ? -2 : 1 + (tick % 3);
      calls.push(incrementAndDeliver(hot, delta));
      if (tick % 40 === 0) {
        calls.push(incrementAndDeliver(calm, 1));
        const numShards = (await readCounter(hot.counterId)).numShards!;
        shardsSeen.push(numShards);
        if (grewAtMs === null && numShards >= 16) grewAtMs = Date.now() - started;
      }
    }
    await Promise.all(calls);
    const outcomes = await Promise.all([...hot.deliveries, ...calm.deliveries]);
    console.log(
      `grew to ${shardsSeen.at(-1)} shards ${grewAtMs} ms after the first increment; numShards once a second: ${shardsSeen.join(" ")}; ` +
        `${hot.increments} increments, ${outcomes.filter((o) => o.kind === "committed").length} commits`,
    );
    expect(grewAtMs).not.toBeNull();
    expect(grewAtMs!).toBeLessThanOrEqual(30_000);

    for (const driven of [hot, calm]) {
      const parent = await readCounter(driven.counterId);
      const shards = await shardsOf(driven.counterId);
      // Every increment counted once; the shards are exactly 0..numShards-1, and count every applied write.
      expect(parent.total).toBe(driven.sum);
      expect(shards.count).toBe(driven.sum);
      expect(shards.ids).toEqual(Array.from({ length: parent.numShards! }, (_, i) => String(i)));
      expect(shards.writes).toBe(driven.increments);
    }
    expect((await readCounter(calm.counterId)).numShards).toBe(1);
    // The new shards took increments once the instance's cached numShards expired (5 s).
    const used = (await shardsRef(db, hot.counterId).where("writes", ">", 0).get()).size;
    expect(used).toBeGreaterThan(10);
  });
});
