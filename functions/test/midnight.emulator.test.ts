// The midnight commit (rollup/midnight.ts) against the Firestore emulator: windows moved to the new day from
// the parent's own days, with no sum; on mirror targets only the values that changed, while a target that
// appeared since the last commit, or lost its value, gets them (docs/windows.md, docs/mirrors.md); a parent
// whose days cannot be read summed again; a query that fails reported as a failed run.
import type { Timestamp } from "firebase-admin/firestore";
import { logger } from "../../test/helpers/logger";
import { createParentAndShards } from "../src/counters/create";
import { addDays, dayOf } from "../src/model/windows";
import type { MirrorTarget } from "../src/model/mirror-rules";
import { counterRef } from "../src/model/paths";
import { firestoreRollupStore } from "../src/rollup/firestore-store";
import { commitMidnight } from "../src/rollup/midnight";
import type { RollupStore } from "../src/rollup/store";
import type { RollupDeps } from "../src/rollup/types";
import { rollupShardWrite } from "../src/rollup/index";
import { requireEmulators } from "../../test/helpers/emulators";
import { db, uniqueId } from "../../test/helpers/functions";
import { dayClock, deps, increment, parent, shardDays, type DayClock } from "../../test/helpers/windows";

beforeAll(requireEmulators);
beforeEach(() => {
  jest.spyOn(logger, "debug").mockImplementation(() => undefined);
  jest.spyOn(logger, "info").mockImplementation(() => undefined);
  jest.spyOn(logger, "warn").mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

const DAY_MS = 86_400_000;

/** The midnight commit's query of the store. */
type MidnightQuery = RollupStore["midnightCounters"];

/** The dependencies with the store's midnight query replaced by `query`. */
function querying(d: RollupDeps, query: MidnightQuery): RollupDeps {
  return { ...d, store: { ...d.store, midnightCounters: query } };
}

/** Only `counterIds`: the query over the whole emulator would also find other tests' counters. */
function only(counterIds: string[]): MidnightQuery {
  const store = firestoreRollupStore(db);
  return async (atMs, limit, after) => {
    const page = await store.midnightCounters(atMs, limit, after);
    return { ...page, counters: page.counters.filter((c) => counterIds.includes(c.counterId)) };
  };
}

async function updateTime(path: string): Promise<Timestamp | undefined> {
  return (await db.doc(path).get()).updateTime;
}

/** A windowed counter with `views` views on the clock's day 1 (01:00), rolled up with `targets` mirrored. */
async function viewedOnDay1(clock: DayClock, views: number, targets: MirrorTarget[] = []): Promise<string> {
  clock.set(clock.midnight + 3_600_000);
  const counterId = uniqueId("mid");
  await createParentAndShards(db, counterId, 2, { windowed: true, now: clock.now, mirrors: [] });
  const store = firestoreRollupStore(db, { mirrors: () => targets });
  await rollupShardWrite((await increment(counterId, views, clock.now)).write, deps(clock.now, { store }));
  return counterId;
}

describe("the midnight commit", () => {
  it("moves the windows from the parent's own days: no sum, the total and its read time untouched", async () => {
    const clock = dayClock();
    const counterId = await viewedOnDay1(clock, 7);
    const day1 = dayOf(clock.now());
    const before = await parent(counterId);
    clock.set(clock.midnight + DAY_MS + 300_000);
    const report = await commitMidnight(querying(deps(clock.now), only([counterId])));
    expect(report.outcomes).toEqual({ committed: 1 });
    // One write for the parent; no aggregation (the query's read is the only read).
    expect(report.ops).toMatchObject({ aggregations: 0, writes: 1 });
    const after = await parent(counterId);
    expect(after.windows).toEqual({ day: addDays(day1, 1), today: 0, last7Days: 7, last30Days: 7 });
    expect(after.total).toBe(7);
    expect((after.rollup as Record<string, unknown>).readTime).toEqual((before.rollup as Record<string, unknown>).readTime);
    expect((after.rollup as Record<string, unknown>).days).toEqual(await shardDays(counterId));
  });

  it("writes on a mirror target only the values that changed; a target that appeared since the last commit, or lost its value, gets them", async () => {
    const clock = dayClock();
    const id = uniqueId("p");
    const [post, copy, late] = [`midposts/${id}`, `midcopies/${id}`, `midlate/${id}`];
    const targets: MirrorTarget[] = [
      { path: post, field: "views", value: "total" },
      { path: post, field: "views7d", value: "last7Days" },
      { path: post, field: "viewsToday", value: "today" },
      { path: copy, field: "views", value: "total" },
      { path: late, field: "views", value: "total" },
      { path: late, field: "stats.views7d", value: "last7Days" },
    ];
    await db.doc(post).set({ title: "p" });
    await db.doc(copy).set({ title: "c" });
    const counterId = await viewedOnDay1(clock, 7, targets);
    expect((await db.doc(post).get()).data()).toEqual({ title: "p", views: 7, views7d: 7, viewsToday: 7 });
    expect((await db.doc(copy).get()).data()).toEqual({ title: "c", views: 7 });
    // Since that commit the app created `late`, and set the post's title.
    await db.doc(late).set({ title: "l", stats: { shares: 1 } });
    await db.doc(post).update({ title: "p2" });
    const copyWritten = await updateTime(copy);
    const mirrored = deps(clock.now, { store: firestoreRollupStore(db, { mirrors: () => targets }) });

    // Day 2: today leaves the post's viewsToday; the week and the total do not change.
    clock.set(clock.midnight + DAY_MS + 300_000);
    const day2 = await commitMidnight(querying(mirrored, only([counterId])));
    expect(day2.outcomes).toEqual({ committed: 1 });
    expect(day2.ops).toMatchObject({ writes: 3, aggregations: 0 }); // the parent, the post, the late target
    expect((await db.doc(post).get()).data()).toEqual({ title: "p2", views: 7, views7d: 7, viewsToday: 0 });
    expect((await db.doc(late).get()).data()).toEqual({ title: "l", views: 7, stats: { shares: 1, views7d: 7 } });
    expect(await updateTime(copy)).toEqual(copyWritten);

    // Day 3: nothing a target holds changes, so none is written, except the copy whose value the app lost.
    await db.doc(copy).set({ title: "c, edited" });
    const postWritten = await updateTime(post);
    const lateWritten = await updateTime(late);
    clock.set(clock.midnight + 2 * DAY_MS + 300_000);
    const day3 = await commitMidnight(querying(mirrored, only([counterId])));
    expect(day3.outcomes).toEqual({ committed: 1 });
    expect(day3.ops).toMatchObject({ writes: 2 });
    expect(await updateTime(post)).toEqual(postWritten);
    expect(await updateTime(late)).toEqual(lateWritten);
    expect((await db.doc(copy).get()).data()).toEqual({ title: "c, edited", views: 7 });
    expect((await parent(counterId)).windows).toEqual({ day: dayOf(clock.now()), today: 0, last7Days: 7, last30Days: 7 });
  });

  it("a target created after the query found the counter, before its move, gets its values; one deleted then is not created", async () => {
    const clock = dayClock();
    const id = uniqueId("p");
    const [appears, goes] = [`midposts/${id}-new`, `midposts/${id}-old`];
    const targets: MirrorTarget[] = [
      { path: appears, field: "views7d", value: "last7Days" },
      { path: goes, field: "views7d", value: "last7Days" },
    ];
    await db.doc(goes).set({ title: "old" });
    const counterId = await viewedOnDay1(clock, 4, targets);
    clock.set(clock.midnight + DAY_MS + 300_000);
    const find = only([counterId]);
    const racing: MidnightQuery = async (...args) => {
      const page = await find(...args);
      await db.doc(appears).set({ title: "new" });
      await db.doc(goes).delete();
      return page;
    };
    const report = await commitMidnight(querying(deps(clock.now, { store: firestoreRollupStore(db, { mirrors: () => targets }) }), racing));
    expect(report.outcomes).toEqual({ committed: 1 });
    expect((await db.doc(appears).get()).data()).toEqual({ title: "new", views7d: 4 });
    expect((await db.doc(goes).get()).exists).toBe(false);
  });

  it("a rollup that commits after the query found the counter: the move reads the parent again and finds nothing left to move", async () => {
    const clock = dayClock();
    const counterId = await viewedOnDay1(clock, 3);
    clock.set(clock.midnight + DAY_MS + 300_000);
    const find = only([counterId]);
    const racing: MidnightQuery = async (...args) => {
      const page = await find(...args);
      await rollupShardWrite((await increment(counterId, 2, clock.now)).write, deps(clock.now));
      return page;
    };
    const report = await commitMidnight(querying(deps(clock.now), racing));
    expect(report.outcomes).toEqual({ current: 1 });
    expect((await parent(counterId)).windows).toEqual({ day: dayOf(clock.now()), today: 2, last7Days: 5, last30Days: 5 });
  });

  it("sums the days again, as a rollup would, when the parent's rollup.days cannot be read", async () => {
    const clock = dayClock();
    const counterId = await viewedOnDay1(clock, 5);
    await counterRef(db, counterId).update({ "rollup.days": "garbled" });
    clock.set(clock.midnight + DAY_MS + 300_000);
    const report = await commitMidnight(querying(deps(clock.now), only([counterId])));
    expect(report.outcomes).toEqual({ summed: 1 });
    const after = await parent(counterId);
    expect(after.windows).toEqual({ day: dayOf(clock.now()), today: 0, last7Days: 5, last30Days: 5 });
    expect((after.rollup as Record<string, unknown>).days).toEqual(await shardDays(counterId));
  });

  it("moves what a failing query found, then fails the run (an index missing shows as a failed run, not as windows that never move)", async () => {
    const clock = dayClock();
    const counterId = await viewedOnDay1(clock, 1);
    clock.set(clock.midnight + DAY_MS + 300_000);
    const find = only([counterId]);
    let found = false;
    const failing: MidnightQuery = async (...args) => {
      if (found) throw Object.assign(new Error("FAILED_PRECONDITION: The query requires an index"), { code: 9 });
      const page = await find(...args);
      found = page.counters.length > 0;
      return found ? { ...page, next: page.next ?? {} } : page;
    };
    const errors: string[] = [];
    jest.spyOn(logger, "error").mockImplementation((...args: unknown[]) => void errors.push(JSON.stringify(args)));
    await expect(commitMidnight(querying(deps(clock.now), failing))).rejects.toThrow("requires an index");
    expect((await parent(counterId)).windows).toMatchObject({ day: dayOf(clock.now()), today: 0, last7Days: 1 });
    expect(errors.some((e) => e.includes("the midnight commit's query failed"))).toBe(true);
  });
});
