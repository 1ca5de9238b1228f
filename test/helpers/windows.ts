// Windowed counters in the emulator tests: a day clock that crosses UTC midnight at any hour the tests run,
// increments applied on that clock with the event the trigger would get, and what the shards and the
// parent hold. The day clock runs ahead of the real one (the read times the rollup records stay real):
// functions/src/model/windows.ts says why a clock ahead is safe.
import { addToRandomShard, type IncrementResult } from "../../functions/src/counters/increment";
import { counterRef, shardsRef } from "../../functions/src/model/paths";
import { type DayCounts, dayOf, nextMidnightMs } from "../../functions/src/model/windows";
import type { RollupDeps, ShardWrite } from "../../functions/src/rollup/types";
import { db } from "./functions";
import { rollupDeps, shardWriteOfIncrement } from "./rollup";

const TTL_MS = 3_600_000;

export interface DayClock {
  now: () => number;
  set: (ms: number) => void;
  /** The UTC midnight the clock starts BEFORE_MIDNIGHT_MS before. */
  midnight: number;
}

/**
 * How long before its midnight a day clock starts: the day a test's first writes happen in, however slowly
 * a loaded machine makes them (at 2 s, a busy run once carried a test's "yesterday" across midnight).
 * Tests cross midnight only with `set`.
 */
const BEFORE_MIDNIGHT_MS = 600_000;

/** A day clock ahead of the real one, which tests move forward; starts BEFORE_MIDNIGHT_MS before a UTC midnight. */
export function dayClock(): DayClock {
  const real = Date.now();
  const midnight = nextMidnightMs(real + BEFORE_MIDNIGHT_MS + 60_000); // at least a minute ahead, whatever the hour
  let ahead = midnight - BEFORE_MIDNIGHT_MS - real;
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

/** incrementCounter's write (addToRandomShard) on the day clock; its event as the trigger would get it. */
export async function increment(counterId: string, delta: number, clock: () => number): Promise<Applied> {
  const before = clock();
  const result: IncrementResult = await addToRandomShard(db, counterId, delta, { requestTtlMs: TTL_MS, now: clock });
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
