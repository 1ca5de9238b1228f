// Counts over time (docs/windows.md): a windowed counter's `windows` equal the sums of its deltas by UTC
// day, under the same coverage rule and the same hostile delivery as `total`, with a clock that crosses
// midnight at any hour the tests run. Against the Firestore emulator, through the store functions the
// callables run and the rollup as the trigger runs it. The day clock runs ahead of the real one (the
// read times the rollup records are real): model/windows.ts says why ahead is safe.
import { logger } from "../../test/helpers/logger";
import { createParentAndShards } from "../src/counters/create";
import { zeroShardsAndTotal } from "../src/counters/reset";
import { redistributeShards } from "../src/counters/reshard";
import { writeMembership } from "../src/counters/members";
import { counterRef, shardsRef } from "../src/model/paths";
import { addDays, dayOf, dayStartMs, windowsOf } from "../src/model/windows";
import { shardStateOf } from "../src/model/shards";
import { rollupShardWrite } from "../src/rollup/index";
import { commitMidnight } from "../src/rollup/midnight";
import type { RollupDeps } from "../src/rollup/types";
import { rollupDeps } from "../../test/helpers/rollup";
import { dayClock, deps, increment, parent, shardDays, type Applied } from "../../test/helpers/windows";
import { requireEmulators } from "../../test/helpers/emulators";
import { ADMIN, call, db, functions, httpsErrorOf, uniqueId, withParam } from "../../test/helpers/functions";
import { firestoreRollupStore } from "../src/rollup/firestore-store";
import { rollupMirrorTargets } from "../src/config/read";
import { reconcile } from "../src/reconcile/run";
import type { CounterReport } from "../src/reconcile/counter";

beforeAll(requireEmulators);
beforeEach(() => {
  jest.spyOn(logger, "debug").mockImplementation(() => undefined);
  jest.spyOn(logger, "info").mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

describe("windows by UTC day", () => {
  it("counts each delta for its day across midnight, exact after duplicated, late and reordered events", async () => {
    const clock = dayClock();
    const counterId = uniqueId("win");
    await createParentAndShards(db, counterId, 3, { windowed: true, now: clock.now });
    const created = await parent(counterId);
    expect(created.windowed).toBe(true);
    expect(created.windows).toEqual({ day: dayOf(clock.now()), today: 0, last7Days: 0, last30Days: 0 });

    const yesterday = dayOf(clock.now());
    const late = [await increment(counterId, 2, clock.now), await increment(counterId, 3, clock.now)];
    // One event is delivered now (its sum covers both writes); the other only after midnight.
    await rollupShardWrite(late[0]!.write, deps(clock.now));
    let p = await parent(counterId);
    expect(p.windows).toEqual({ day: yesterday, today: 5, last7Days: 5, last30Days: 5 });

    clock.set(clock.midnight + 1_000);
    const today = dayOf(clock.now());
    expect(today).toBe(addDays(yesterday, 1));
    const after = [await increment(counterId, 5, clock.now), await increment(counterId, -1, clock.now)];
    // Reordered, duplicated and late: the last of today's first, yesterday's late one twice.
    for (const applied of [after[1]!, late[1]!, after[0]!, late[1]!, late[0]!, after[1]!]) {
      await rollupShardWrite(applied.write, deps(clock.now));
    }
    p = await parent(counterId);
    expect(p.total).toBe(9);
    expect(p.windows).toEqual({ day: today, today: 4, last7Days: 9, last30Days: 9 });
    expect((p.rollup as Record<string, unknown>).days).toEqual({ [yesterday]: 5, [today]: 4 });
    expect(await shardDays(counterId)).toEqual({ [yesterday]: 5, [today]: 4 });
  });

  it("moves the windows of a counter nobody touches after midnight (the midnight commit), and skips counters at 0", async () => {
    const clock = dayClock();
    clock.set(clock.midnight + 3_600_000); // 01:00 on day 1
    const counterId = uniqueId("win");
    const quiet = uniqueId("win-quiet");
    await createParentAndShards(db, counterId, 2, { windowed: true, now: clock.now });
    await createParentAndShards(db, quiet, 2, { windowed: true, now: clock.now });
    const day1 = dayOf(clock.now());
    await rollupShardWrite((await increment(counterId, 7, clock.now)).write, deps(clock.now));
    expect((await parent(counterId)).windows).toEqual({ day: day1, today: 7, last7Days: 7, last30Days: 7 });

    // Day 4, 00:05: the midnight commit moves it; today is 0, the week still holds day 1.
    clock.set(clock.midnight + 3 * 86_400_000 + 300_000);
    const report = await commitMidnight(deps(clock.now));
    expect(report.outcomes.committed).toBeGreaterThanOrEqual(1);
    expect((await parent(counterId)).windows).toEqual({ day: addDays(day1, 3), today: 0, last7Days: 7, last30Days: 7 });
    // The quiet counter has nothing to move: never committed, windows still for its creation day.
    expect((await parent(quiet)).windows).toEqual({ day: day1, today: 0, last7Days: 0, last30Days: 0 });

    // Day 8: day 1 has left the week; day 31: it has left the month, and the counter needs no more commits.
    clock.set(clock.midnight + 7 * 86_400_000 + 300_000);
    await commitMidnight(deps(clock.now));
    expect((await parent(counterId)).windows).toEqual({ day: addDays(day1, 7), today: 0, last7Days: 0, last30Days: 7 });
    clock.set(clock.midnight + 30 * 86_400_000 + 300_000);
    await commitMidnight(deps(clock.now));
    const last = await parent(counterId);
    expect(last.windows).toEqual({ day: addDays(day1, 30), today: 0, last7Days: 0, last30Days: 0 });
    expect((last.rollup as Record<string, unknown>).windowsMoveAt).toBeNull();
    expect(last.total).toBe(7);
  });

  it("reset takes every window to 0 with the total; later deltas count from there", async () => {
    const clock = dayClock();
    const counterId = uniqueId("win");
    await createParentAndShards(db, counterId, 3, { windowed: true, now: clock.now });
    for (const delta of [1, 2, 3]) await rollupShardWrite((await increment(counterId, delta, clock.now)).write, deps(clock.now));
    clock.set(clock.midnight + 10_000);
    await rollupShardWrite((await increment(counterId, 4, clock.now)).write, deps(clock.now));
    await zeroShardsAndTotal(db, counterId, { now: clock.now });
    let p = await parent(counterId);
    expect(p.total).toBe(0);
    expect(p.windows).toEqual({ day: dayOf(clock.now()), today: 0, last7Days: 0, last30Days: 0 });
    const again = await increment(counterId, 6, clock.now);
    await rollupShardWrite(again.write, deps(clock.now));
    p = await parent(counterId);
    expect(p.windows).toEqual({ day: dayOf(clock.now()), today: 6, last7Days: 6, last30Days: 6 });
    expect(await shardDays(counterId)).toEqual({ [dayOf(clock.now())]: 6 });
  });

  it("reshard keeps every day's count", async () => {
    const clock = dayClock();
    const counterId = uniqueId("win");
    await createParentAndShards(db, counterId, 4, { windowed: true, now: clock.now });
    const first = dayOf(clock.now());
    for (let i = 0; i < 6; i++) await increment(counterId, 1, clock.now);
    clock.set(clock.midnight + 10_000);
    for (let i = 0; i < 6; i++) await increment(counterId, 2, clock.now);
    await redistributeShards(db, counterId, 1);
    expect(await shardDays(counterId)).toEqual({ [first]: 6, [dayOf(clock.now())]: 12 });
    const last = await increment(counterId, 1, clock.now);
    await rollupShardWrite(last.write, deps(clock.now));
    expect((await parent(counterId)).windows).toEqual({ day: dayOf(clock.now()), today: 13, last7Days: 19, last30Days: 19 });
  });

  it("a unique windowed counter counts joins and leaves by day", async () => {
    const clock = dayClock();
    const counterId = uniqueId("win-likes");
    await createParentAndShards(db, counterId, 2, { unique: true, windowed: true, now: clock.now });
    await writeMembership(db, counterId, "alice", true, { now: clock.now });
    await writeMembership(db, counterId, "bob", true, { now: clock.now });
    clock.set(clock.midnight + 10_000);
    await writeMembership(db, counterId, "alice", false, { now: clock.now });
    await writeMembership(db, counterId, "carol", true, { now: clock.now });
    await writeMembership(db, counterId, "dave", true, { now: clock.now });
    // One event is enough to sum everything written before it.
    const probe = await increment(counterId, 1, clock.now).catch(() => null);
    expect(probe).toBeNull(); // increments are refused on unique counters
    const shards = await shardsRef(db, counterId).get();
    const doc = shards.docs.find((d) => (d.get("count") as number) !== 0)!;
    await rollupShardWrite(
      { eventId: uniqueId("ev"), counterId, shardId: doc.id, writtenAtUs: doc.updateTime.toMillis() * 1000 + 1000, before: shardStateOf({ count: 0 }), after: shardStateOf({ count: 1 }) },
      deps(clock.now),
    );
    const p = await parent(counterId);
    expect(p.total).toBe(3);
    expect(p.windows).toEqual({ day: dayOf(clock.now()), today: 1, last7Days: 3, last30Days: 3 });
  });
});

describe("windows next to the coverage rule", () => {
  it("windows equal windowsOf(the shards' days) for the parent's day whenever events settle", async () => {
    const clock = dayClock();
    const counterId = uniqueId("win");
    await createParentAndShards(db, counterId, 5, { windowed: true, now: clock.now });
    const writes: Applied[] = [];
    for (let step = 0; step < 4; step++) {
      for (let i = 0; i < 5; i++) writes.push(await increment(counterId, (i % 3) + 1, clock.now));
      clock.set(clock.now() + 86_400_000 * (step + 1));
    }
    // The clock started before a midnight and has moved whole days since: put it at noon of its day, so
    // that however long the deliveries take on a busy machine, the commits and the assertion share a day.
    clock.set(dayStartMs(dayOf(clock.now())) + 43_200_000);
    // Every event, newest first, each twice.
    for (const applied of [...writes].reverse()) {
      await rollupShardWrite(applied.write, deps(clock.now));
      await rollupShardWrite(applied.write, deps(clock.now));
    }
    const p = await parent(counterId);
    const windows = p.windows as { day: string };
    expect(p.windows).toEqual(windowsOf(await shardDays(counterId), windows.day));
    expect(windows.day).toBe(dayOf(clock.now()));
  });
});

describe("windowed counters through createCounter", () => {
  withParam("WINDOWED_COUNTERS", "wv-{id}-views");

  it("answers windowed, stores it, and keeps ids WINDOWED_COUNTERS reserves windowed", async () => {
    const asked = uniqueId("wasked");
    await expect(call(functions.createCounter, { counterId: asked, windowed: true }, ADMIN)).resolves.toMatchObject({ counterId: asked, windowed: true });
    expect((await parent(asked)).windowed).toBe(true);
    const plain = uniqueId("wplain");
    await expect(call(functions.createCounter, { counterId: plain }, ADMIN)).resolves.toMatchObject({ windowed: false });
    expect((await parent(plain)).windows).toBeUndefined();

    const reserved = `wv-${uniqueId("p")}-views`;
    await expect(call(functions.createCounter, { counterId: reserved }, ADMIN)).resolves.toMatchObject({ windowed: true });
    const refused = await httpsErrorOf(call(functions.createCounter, { counterId: `wv-${uniqueId("q")}-views`, windowed: false }, ADMIN));
    expect(refused.code).toBe("invalid-argument");
    expect(refused.message).toBe("windowed must be true or omitted: this counter id is reserved for windowed counters (WINDOWED_COUNTERS)");
    const typo = await httpsErrorOf(call(functions.createCounter, { counterId: uniqueId("w"), windowed: "yes" }, ADMIN));
    expect(typo.message).toBe("windowed must be a boolean");
  });
});

describe("trending: a window mirrored onto the app's posts", () => {
  withParam("MIRRORS", "trend-{id}-views=tposts/{id}:views7d@last7Days,trend-{id}-views=tposts/{id}:viewsToday@today,trend-{id}-views=tposts/{id}:views");

  it("orderBy on the mirrored week ranks the posts by this week, not by all time", async () => {
    const clock = dayClock();
    const run = uniqueId("t");
    const mirrored = (): RollupDeps => rollupDeps({ dayClockMs: clock.now, store: firestoreRollupStore(db, { mirrors: rollupMirrorTargets }) });
    // Post a: 9 views 10 days ago, 1 this week. Post b: 4 this week. Post c: 2 today.
    const views: Record<string, number[]> = { a: [9, 1], b: [0, 4], c: [0, 2] };
    for (const post of Object.keys(views)) {
      await db.doc(`tposts/${run}-${post}`).set({ title: post, run });
      await createParentAndShards(db, `trend-${run}-${post}-views`, 2, { windowed: true, now: clock.now, mirrors: [] });
    }
    for (const [step, offsetDays] of [[0, 0], [1, 10]] as const) {
      clock.set(clock.midnight + offsetDays * 86_400_000 + 3_600_000);
      for (const [post, counts] of Object.entries(views)) {
        const id = `trend-${run}-${post}-views`;
        for (let i = 0; i < counts[step]!; i++) await rollupShardWrite((await increment(id, 1, clock.now)).write, mirrored());
      }
    }
    const ranked = await db.collection("tposts").where("run", "==", run).orderBy("views7d", "desc").get();
    expect(ranked.docs.map((d): unknown[] => [d.get("title"), d.get("views7d"), d.get("viewsToday"), d.get("views")])).toEqual([
      ["b", 4, 4, 4],
      ["c", 2, 2, 2],
      ["a", 1, 1, 10],
    ]);
  });
});

describe("reconcile of a windowed counter", () => {
  it("finds windows that differ from the shards' days and repairs them with --fix", async () => {
    const clock = dayClock();
    // 01:00: the day cannot change under the test however slow the machine (the clock starts before a midnight).
    clock.set(clock.midnight + 3_600_000);
    const counterId = uniqueId("win-rec");
    await createParentAndShards(db, counterId, 2, { windowed: true, now: clock.now });
    for (const delta of [2, 3]) await rollupShardWrite((await increment(counterId, delta, clock.now)).write, deps(clock.now));
    const check = async (fix: boolean): Promise<CounterReport> => {
      const reports: CounterReport[] = [];
      for await (const report of reconcile(db, { counterIds: [counterId], fix, nowMs: clock.now })) reports.push(report);
      return reports[0]!;
    };
    expect(await check(false)).toMatchObject({ status: "ok", drift: 0 });
    const day = dayOf(clock.now());
    await counterRef(db, counterId).update({ "windows.today": 99, "rollup.days": { [day]: 99 } });
    expect(await check(false)).toMatchObject({ status: "drift", drift: 0, windows: { summed: { day, today: 5, last7Days: 5, last30Days: 5 } } });
    expect(await check(true)).toMatchObject({ fixed: true });
    const p = await parent(counterId);
    expect(p.windows).toEqual({ day, today: 5, last7Days: 5, last30Days: 5 });
    expect((p.rollup as Record<string, unknown>).days).toEqual({ [day]: 5 });
    expect(await check(false)).toMatchObject({ status: "ok" });
  });
});
