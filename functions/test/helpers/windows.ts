// Windowed counters in the emulator tests: a day clock that crosses UTC midnight at any hour the tests run,
// increments applied on that clock with the event the trigger would get, and what the shards and the
// parent hold. The day clock runs ahead of the real one (the read times the rollup records stay real):
// model/windows.ts says why a clock ahead is safe.
import { incrementCounter, type IncrementResult } from "../../src/counters/increment";
import { counterRef, shardsRef } from "../../src/model/paths";
import { type DayCounts, dayOf, nextMidnightMs } from "../../src/model/windows";
import type { RollupDeps, ShardWrite } from "../../src/rollup/types";
import { db } from "./functions";
import { rollupDeps, shardWriteOfIncrement } from "./rollup";

const TTL_MS = 3_600_000;

export interface DayClock {
  now: () => number;
  set: (ms: number) => void;
  /** The UTC midnight the clock starts a minute before. */
  midnight: number;
}

/**
 * A day clock ahead of the real one, which tests move forward; starts a minute before a UTC midnight: what a
 * test does "before midnight" stays on that day however slow a shared machine is (2 s were not enough under
 * load: the day changed under a test before it moved the clock).
 */
export function dayClock(): DayClock {
  const real = Date.now();
  const midnight = nextMidnightMs(real + 120_000); // at least two minutes ahead, whatever the hour
  let ahead = midnight - 60_000 - real;
  return {
    now: () => Date.now() + ahead,
    set: (ms) => {
      ahead = ms - Date.now();
    },
    midnight,
  };
}

export interface Applied {
  write: ShardWrite;
  day: string;
  delta: number;
}

/** incrementCounter on the day clock; its event as the trigger would get it. */
export async function increment(counterId: string, delta: number, clock: () => number): Promise<Applied> {
  const before = clock();
  const result: IncrementResult = await incrementCounter(db, counterId, delta, { requestTtlMs: TTL_MS, now: clock });
  expect(result.applied).toBe(true);
  return { write: shardWriteOfIncrement(counterId, result, delta), day: dayOf(before), delta };
}

/** What the shards say, day by day: the truth the windows must match once events settle. */
export async function shardDays(counterId: string): Promise<DayCounts> {
  const days: DayCounts = {};
  for (const doc of (await shardsRef(db, counterId).get()).docs) {
    for (const [day, count] of Object.entries((doc.get("days") as Record<string, number> | undefined) ?? {})) {
      days[day] = (days[day] ?? 0) + count;
    }
  }
  for (const [day, count] of Object.entries(days)) if (count === 0) delete days[day];
  return days;
}

export async function parent(counterId: string): Promise<Record<string, unknown>> {
  return (await counterRef(db, counterId).get()).data()!;
}

/** The rollup's dependencies with the day clock. */
export function deps(clock: () => number, overrides: Partial<RollupDeps> = {}): RollupDeps {
  return rollupDeps({ dayClockMs: clock, ...overrides });
}
