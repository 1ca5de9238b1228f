// The leading-edge herd (rollup/now.ts) under production-like delivery: the platform pushes
// events concurrently, to several instances. 1,000 increments land on an idle counter, then their events
// are delivered all at once to the real handler over the emulator, spread over 4 simulated instances
// (each with its own memos, up to 80 events at once each, as ROLLUP_CONCURRENCY allows).
import { newCounter, readCounter, shardSum, writeShard, type RecordedWrite } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { withConcurrency } from "../../test/helpers/client";
import { rollupDeps, shardWriteOf } from "../../test/helpers/rollup";
import { rollupShardWrite } from "../src/rollup/index";
import { type NowMemo, type ParentMemo, type RollupOutcome } from "../src/rollup/types";

const EVENTS = 1000;
const SHARDS = 50;
const INSTANCES = 4;
const PER_INSTANCE = 80;

jest.setTimeout(300_000);

beforeAll(requireEmulators);

/** `count` increments of +1 spread over the shards, recorded with their events. */
async function burst(counterId: string, count: number): Promise<RecordedWrite[]> {
  return withConcurrency(
    SHARDS,
    Array.from({ length: count }, (_, i) => () => writeShard(counterId, i % SHARDS, 1)),
  );
}

/** Delivers every event at once, round-robin over simulated instances, each running up to PER_INSTANCE at a time. */
async function deliverConcurrently(writes: RecordedWrite[], memos: boolean): Promise<RollupOutcome[]> {
  const instances = Array.from({ length: INSTANCES }, () => ({ leads: new Map() as NowMemo, parents: new Map() as ParentMemo }));
  const byInstance = instances.map((_, i) => writes.filter((_, j) => j % INSTANCES === i));
  const outcomes = await Promise.all(
    instances.map((instance, i) =>
      withConcurrency(
        PER_INSTANCE,
        byInstance[i]!.map((w) => () => rollupShardWrite(shardWriteOf(w), rollupDeps(memos ? instance : {}))),
      ),
    ),
  );
  return outcomes.flat();
}

function tally(outcomes: RollupOutcome[]): { aggregations: number; reads: number; writes: number; kinds: Record<string, number> } {
  const kinds: Record<string, number> = {};
  for (const o of outcomes) kinds[o.kind] = (kinds[o.kind] ?? 0) + 1;
  return {
    aggregations: outcomes.reduce((n, o) => n + o.ops.aggregations, 0),
    reads: outcomes.reduce((n, o) => n + o.ops.reads, 0),
    writes: outcomes.reduce((n, o) => n + o.ops.writes, 0),
    kinds,
  };
}

describe("a burst on an idle counter, delivered concurrently to several instances", () => {
  it(`sums the shards a handful of times for ${EVENTS} events, writes the parent once, and ends exact`, async () => {
    const counterId = await newCounter("herd", SHARDS);
    const writes = await burst(counterId, EVENTS);
    const outcomes = await deliverConcurrently(writes, true);
    const t = tally(outcomes);
    const parent = await readCounter(counterId);
    console.log(`${EVENTS} events over ${INSTANCES} instances: ${t.aggregations} sums, ${parent.commits} parent writes, ${t.reads} reads; ${JSON.stringify(t.kinds)}`);
    expect(parent.total).toBe(EVENTS);
    expect(await shardSum(counterId)).toBe(EVENTS);
    // At most one leading edge per instance reaches the sum; one commit wins, the others find it.
    expect(t.aggregations).toBeLessThanOrEqual(2 * INSTANCES);
    expect(parent.commits).toBeLessThanOrEqual(2);
  });

  it("would sum once per event that read the parent before the first commit without the instance's lead memo", async () => {
    const counterId = await newCounter("herd-unjoined", SHARDS);
    const writes = await burst(counterId, EVENTS);
    const outcomes = await deliverConcurrently(writes, false);
    const t = tally(outcomes);
    const parent = await readCounter(counterId);
    console.log(`without the memo: ${t.aggregations} sums, ${parent.commits} parent writes, ${t.reads} reads; ${JSON.stringify(t.kinds)}`);
    expect(parent.total).toBe(EVENTS);
    expect(t.aggregations).toBeGreaterThan(4 * INSTANCES);
  });
});
