// The midnight commit at the scale the docs promise (docs/windows.md, "At scale"): the real commitMidnight
// over 100,000 windowed counters, each touched once yesterday, in a store where every Firestore call takes
// 50 ms of a simulated clock (no real sleeping; test/helpers/model/sim.ts). The scheduled run starts 5 s after UTC
// midnight (Cloud Scheduler's minute, a cold start); every counter's windows must show the new day, exactly,
// within 10 minutes of midnight. The printed line says how long it took and how many counters a run of this
// speed moves in 10 minutes.
import { logger } from "../../test/helpers/logger";
import { addDays, type DayCounts, dayStartMs, nextMidnightMs, type Windows, windowsOf } from "../src/model/windows";
import { commitMidnight } from "../src/rollup/midnight";
import type { ParentView } from "../src/rollup/plan";
import type { CommitFields, CommitResult, CountRead, MidnightPage, ParentRead, PromisePage, RollupStore, StaleClaims, SumRead } from "../src/rollup/store";
import type { RollupDeps } from "../src/rollup/types";
import { Sim } from "../../test/helpers/model/sim";

beforeEach(() => {
  for (const level of ["debug", "info", "warn", "error"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

const CALL_MS = 50;
const YESTERDAY = "2027-03-14";
const TODAY = addDays(YESTERDAY, 1);
const MIDNIGHT_MS = dayStartMs(TODAY);
/** Cloud Scheduler fires on the minute; the run starts after a cold start. */
const RUN_STARTS_MS = MIDNIGHT_MS + 5_000;
const DEADLINE_MS = MIDNIGHT_MS + 600_000;

interface Parent {
  windows: Windows;
  days: DayCounts;
  moveAtMs: number | null;
  updateUs: number;
  readUs: number;
  total: number;
  /** Mirror targets' values, when the counter is mirrored: field → value. */
  mirrors: Record<string, number> | null;
}

/**
 * Windowed counters in memory behind a 50 ms network: each one with one view yesterday, rolled up then, so
 * its windows for yesterday are (1, 1, 1) and move at midnight. Every call of the store and of the query
 * takes CALL_MS; a transaction (a move with mirrors) takes two calls, its read and its commit.
 */
class SlowStore implements RollupStore {
  readonly parents = new Map<string, Parent>();
  readonly ids: string[];
  calls = 0;
  lastWriteMs = 0;
  private clock = 0;

  constructor(
    private readonly sim: Sim,
    count: number,
    mirrored: boolean,
  ) {
    const readUs = (dayStartMs(YESTERDAY) + 43_200_000) * 1000;
    for (let i = 0; i < count; i++) {
      const days = { [YESTERDAY]: 1 };
      this.parents.set(`post-${String(i).padStart(6, "0")}-views`, {
        windows: windowsOf(days, YESTERDAY),
        days,
        moveAtMs: MIDNIGHT_MS,
        updateUs: readUs + 1000,
        readUs,
        total: 1,
        mirrors: mirrored ? { views: 1, views7d: 1 } : null,
      });
    }
    this.ids = [...this.parents.keys()].sort();
  }

  private async call(): Promise<void> {
    this.calls++;
    await this.sim.sleep(CALL_MS);
  }

  private write(p: Parent): void {
    p.updateUs = this.sim.now() + ++this.clock;
    this.lastWriteMs = Math.max(this.lastWriteMs, Math.floor(this.sim.now() / 1000));
  }

  parentRead(counterId: string): ParentRead {
    const p = this.parents.get(counterId)!;
    const days = { days: { ...p.days }, sinceUs: p.readUs, moveAtMs: p.moveAtMs };
    const view: ParentView = { parentExists: true, coveredUntilUs: p.readUs, lastCommitUs: p.updateUs, recordedIntervalMs: 1000, numShards: 1, load: null, days };
    return { view, version: String(p.updateUs), observedUs: this.sim.now() };
  }

  async midnightCounters(atMs: number, limit: number, after?: object): Promise<MidnightPage> {
    await this.call();
    const from = after === undefined ? 0 : (after as { index: number }).index + 1;
    const counters: MidnightPage["counters"] = [];
    let index = from;
    for (; index < this.ids.length && counters.length < limit; index++) {
      const p = this.parents.get(this.ids[index]!)!;
      if (p.moveAtMs !== null && p.moveAtMs <= atMs) counters.push({ counterId: this.ids[index]!, parent: this.parentRead(this.ids[index]!) });
    }
    return { counters, reads: Math.max(1, counters.length), next: index >= this.ids.length ? null : { index: index - 1 } };
  }

  async readParent(counterId: string): Promise<ParentRead> {
    await this.call();
    return this.parentRead(counterId);
  }

  async sum(counterId: string, _numShards: number | null, days?: (readUs: number) => readonly string[]): Promise<SumRead> {
    await this.call();
    const p = this.parents.get(counterId)!;
    const readUs = this.sim.now();
    const counts: DayCounts = {};
    for (const day of days?.(readUs) ?? []) counts[day] = p.days[day] ?? (day === YESTERDAY ? 1 : 0);
    return { sum: { overflow: false, total: p.total, writes: null, readUs, days: counts }, aggregations: 1 + Object.keys(counts).length, reads: 0 };
  }

  async commit(counterId: string, parent: ParentRead, sum: { total: number; readUs: number }, fields: CommitFields): Promise<CommitResult> {
    await this.call();
    const p = this.parents.get(counterId)!;
    if (String(p.updateUs) !== parent.version) return { kind: "changed" };
    p.readUs = sum.readUs;
    if (fields.windows !== undefined) Object.assign(p, { windows: fields.windows.windows, days: fields.windows.days, moveAtMs: fields.windows.moveAtMs });
    if (p.mirrors !== null) p.mirrors = { views: sum.total, views7d: p.windows.last7Days };
    this.write(p);
    return { kind: "committed", version: String(p.updateUs), commitUs: p.updateUs };
  }

  async moveWindows(counterId: string, parent: ParentRead, moved: { windows: Windows; days: DayCounts; moveAtMs: number | null }): Promise<{ kind: "committed" | "changed" | "gone"; targetWrites: number; reads: number }> {
    await this.call();
    const p = this.parents.get(counterId)!;
    if (p.mirrors !== null) await this.call(); // a transaction: its read, then its commit
    if (String(p.updateUs) !== parent.version) return { kind: "changed", targetWrites: 0, reads: 1 };
    Object.assign(p, { windows: moved.windows, days: moved.days, moveAtMs: moved.moveAtMs });
    let targetWrites = 0;
    if (p.mirrors !== null && p.mirrors.views7d !== moved.windows.last7Days) {
      p.mirrors = { ...p.mirrors, views7d: moved.windows.last7Days };
      targetWrites = 1;
    }
    this.write(p);
    return { kind: "committed", targetWrites, reads: p.mirrors === null ? 0 : 2 };
  }

  count(): Promise<CountRead> {
    throw new Error("the midnight commit counts no documents");
  }
  promisesDue(): Promise<PromisePage> {
    throw new Error("the midnight commit sweeps nothing");
  }
  readSweepMark(): Promise<number | null> {
    throw new Error("the midnight commit sweeps nothing");
  }
  writeSweepMark(): Promise<void> {
    throw new Error("the midnight commit sweeps nothing");
  }
  deleteClaim(): Promise<boolean> {
    throw new Error("the midnight commit claims nothing");
  }
  staleClaims(): Promise<StaleClaims> {
    throw new Error("the midnight commit sweeps nothing");
  }
}

async function midnightRun(count: number, mirrored: boolean): Promise<SlowStore> {
  const sim = new Sim(RUN_STARTS_MS * 1000);
  const store = new SlowStore(sim, count, mirrored);
  const now = () => Math.floor(sim.now() / 1000);
  const deps: RollupDeps = { store, intervalMs: 1000, staleAfterMs: 10_000, nowMs: now, sleep: (ms) => sim.sleep(ms) };
  let ended: "done" | Error | undefined;
  commitMidnight(deps).then(
    () => (ended = "done"),
    (error: unknown) => (ended = error instanceof Error ? error : new Error(String(error))),
  );
  await sim.run(20_000_000);
  expect(ended).toBe("done");
  const tookS = (store.lastWriteMs - MIDNIGHT_MS) / 1000;
  console.log(
    `${count} windowed counters${mirrored ? " with mirrors" : ""}, ${CALL_MS} ms a Firestore call: the last moved ${tookS.toFixed(0)} s after midnight ` +
      `(${store.calls} calls, ${Math.round(count / (tookS - 5))} counters a second)`,
  );
  return store;
}

function expectMoved(store: SlowStore): void {
  const expected = windowsOf({ [YESTERDAY]: 1 }, TODAY);
  let moved = 0;
  for (const p of store.parents.values()) {
    if (p.windows.day === TODAY && p.windows.today === expected.today && p.windows.last7Days === expected.last7Days && p.windows.last30Days === expected.last30Days) moved++;
  }
  expect(moved).toBe(store.parents.size);
  expect(store.lastWriteMs).toBeLessThanOrEqual(DEADLINE_MS);
  expect([...store.parents.values()].every((p) => p.moveAtMs === nextMidnightMs(MIDNIGHT_MS))).toBe(true);
}

describe("the midnight commit at scale (virtual time, 50 ms a Firestore call)", () => {
  it("moves 100,000 windowed counters touched yesterday within 10 minutes of UTC midnight", async () => {
    expectMoved(await midnightRun(100_000, false));
  });

  it("moves 100,000 mirrored counters (a transaction each: two calls) within 10 minutes too", async () => {
    const store = await midnightRun(100_000, true);
    expectMoved(store);
    expect([...store.parents.values()].every((p) => p.mirrors?.views === 1 && p.mirrors.views7d === 1)).toBe(true);
  });
});
