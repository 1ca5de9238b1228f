// The order the midnight commit visits counters in (model/midnight-order.ts, docs/windows.md "The midnight
// commit at scale"), against the Firestore emulator: 40 windowed counters whose ids count up
// (`...-000` … `...-039`, the worst case for a scan in document-name order) come out of the commit's query
// in an order spread over the ids, each exactly once, also for a run at the midnight's very millisecond; the
// commit moves every one of them, and the values it writes give the next midnight another order.
import type { Timestamp } from "firebase-admin/firestore";
import { logger } from "../../test/helpers/logger";
import { createParentAndShards } from "../src/counters/create";
import { addDays, dayOf } from "../src/model/windows";
import { storedMoveAtUs } from "../src/model/midnight-order";
import { counterRef } from "../src/model/paths";
import { microsFloor } from "../src/model/time";
import { firestoreRollupStore } from "../src/rollup/firestore-store";
import { commitMidnight } from "../src/rollup/midnight";
import type { RollupStore } from "../src/rollup/store";
import { rollupShardWrite } from "../src/rollup/index";
import { requireEmulators } from "../../test/helpers/emulators";
import { db, uniqueId } from "../../test/helpers/functions";
import { withConcurrency } from "../../test/helpers/client";
import { dayClock, deps, increment, parent } from "../../test/helpers/windows";

beforeAll(requireEmulators);
beforeEach(() => {
  for (const level of ["debug", "info", "warn"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());
jest.setTimeout(120_000);

const DAY_MS = 86_400_000;
const COUNT = 40;

/** Every counter of `ids` the store's query finds at `atMs`, in the order it finds them (other tests' counters left out). */
async function queryOrder(store: RollupStore, atMs: number, ids: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  let page = await store.midnightCounters(atMs, 7);
  for (;;) {
    found.push(...page.counters.map((c) => c.counterId).filter((id) => ids.includes(id)));
    if (page.next === null) return found;
    page = await store.midnightCounters(atMs, 7, page.next);
  }
}

/** The stored `rollup.windowsMoveAt` of a counter, in microseconds. */
async function storedMoveAt(counterId: string): Promise<number> {
  return microsFloor(((await parent(counterId)).rollup as { windowsMoveAt: Timestamp }).windowsMoveAt);
}

/** How many neighbours of `order` are in ascending name order: COUNT - 1 for a scan in document-name order, about half for a spread one. */
function ascents(order: readonly string[]): number {
  let n = 0;
  for (let i = 1; i < order.length; i++) if (order[i - 1]! < order[i]!) n++;
  return n;
}

it("visits counters whose ids count up in an order spread over them, each once, and moves every one", async () => {
  const clock = dayClock();
  const prefix = uniqueId("seq");
  const ids = Array.from({ length: COUNT }, (_, i) => `${prefix}-${String(i).padStart(3, "0")}`);
  clock.set(clock.midnight + 3_600_000);
  const day1 = dayOf(clock.now());
  const store = firestoreRollupStore(db);
  await withConcurrency(
    8,
    ids.map((id) => async () => {
      await createParentAndShards(db, id, 1, { windowed: true, now: clock.now });
      await rollupShardWrite((await increment(id, 1, clock.now)).write, deps(clock.now));
    }),
  );
  const midnight2 = clock.midnight + DAY_MS;
  // Each stored value is the midnight plus the counter's spread.
  for (const id of ids) expect(await storedMoveAt(id)).toBe(storedMoveAtUs(id, midnight2));

  const order = await queryOrder(store, midnight2, ids);
  expect([...order].sort()).toEqual(ids);
  expect(ascents(order)).toBeLessThan(30);
  console.log(`the query's order at midnight (ascending neighbours: ${ascents(order)} of ${COUNT - 1}): ${order.map((id) => id.slice(-3)).join(" ")}`);

  clock.set(midnight2 + 300_000);
  const report = await commitMidnight({ ...deps(clock.now), store: { ...store, midnightCounters: async (atMs, limit, after) => {
    const page = await store.midnightCounters(atMs, limit, after);
    return { ...page, counters: page.counters.filter((c) => ids.includes(c.counterId)) };
  } } });
  expect(report.outcomes).toEqual({ committed: COUNT });
  const midnight3 = midnight2 + DAY_MS;
  for (const id of ids) {
    const after = await parent(id);
    expect(after.windows).toEqual({ day: addDays(day1, 1), today: 0, last7Days: 1, last30Days: 1 });
    expect(await storedMoveAt(id)).toBe(storedMoveAtUs(id, midnight3));
  }
  // The next midnight's order is another one.
  const next = await queryOrder(store, midnight3, ids);
  expect([...next].sort()).toEqual(ids);
  expect(next).not.toEqual(order);
});

it("finds at the midnight's very millisecond every counter whose value lies microseconds after it", async () => {
  const clock = dayClock();
  const ids = Array.from({ length: 10 }, () => uniqueId("edge"));
  clock.set(clock.midnight + 3_600_000);
  for (const id of ids) {
    await createParentAndShards(db, id, 1, { windowed: true, now: clock.now });
    await rollupShardWrite((await increment(id, 1, clock.now)).write, deps(clock.now));
  }
  const midnight2 = clock.midnight + DAY_MS;
  expect(ids.some((id) => storedMoveAtUs(id, midnight2) > midnight2 * 1000)).toBe(true);
  expect((await queryOrder(firestoreRollupStore(db), midnight2, ids)).sort()).toEqual([...ids].sort());
  expect(await queryOrder(firestoreRollupStore(db), midnight2 - 1, ids)).toEqual([]);
  expect((await counterRef(db, ids[0]!).get()).exists).toBe(true);
});
