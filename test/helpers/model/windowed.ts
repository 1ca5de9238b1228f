// Windowed counters in the model check (functions/src/model/windows.ts): what a windowed schedule draws besides the
// plain one — the UTC midnight it crosses, writers whose clocks differ from the store's by milliseconds,
// writes that commit up to DAY_CLOSES_AFTER_MS after the clock reading that chose their day, events
// delivered an hour late, the workload jumping days ahead, the midnight commit racing rollups — and the
// properties its windows are held to once events stop:
// - `windows` = the windows of the true per-day counts (the world's ledger, under the coverage rule) for
//   `windows.day`, and `rollup.days` = those counts for the 30 days ending it (the world also checks this
//   at every commit: world.ts, checkDays);
// - after the midnight commit of a later day, the windows for that day, as a reader gets them: `windows`
//   when they are for that day, else summed from `rollup.days` (client/src/windows.ts; what the midnight
//   commit leaves alone must read right that way).
import type { MirrorTarget } from "../../../functions/src/model/mirror-rules";
import { addDays, CLOCK_AHEAD_MS, DAY_CLOSES_AFTER_MS, type DayCounts, dayOf, dayStartMs, KEPT_DAYS, WINDOW_DAYS, WINDOW_NAMES, type Windows, windowsOf } from "../../../functions/src/model/windows";
import { between, chance, pick, type Rng } from "./sim";
import type { WindowedState } from "./world";

export const DAY_MS = 86_400_000;

/** The days a schedule can start just before the end of: a plain day, the ends of a month, a year, a February, and a leap day. */
const MIDNIGHTS = ["2027-01-15", "2026-12-31", "2027-01-31", "2027-02-28", "2027-06-30", "2028-02-28", "2028-02-29"];

/** Days the workload may jump ahead: within a week, around its end, and around the end of the 30-day window. */
const JUMPS = [1, 2, 6, 7, 8, 29, 30, 31, 45];

/** What a windowed schedule draws (printed with the rest of its shape). */
export interface WindowShape {
  /** The schedule starts `leadMs` before the end of this UTC day. */
  lastDay: string;
  leadMs: number;
  /** Only this many writes, all within 150 ms of that midnight (null: the workload as drawn). */
  cluster: number | null;
  /** The writers' clocks, ms off the store's commit clock; each write (and reset) reads one of them. */
  writerSkewsMs: number[];
  /** Chance that a write commits long after the clock reading that chose its day (at most DAY_CLOSES_AFTER_MS). */
  slowChance: number;
  /** Chance that an event is first delivered a minute to 70 minutes late. */
  lateChance: number;
  /** The workload's writes from `jumpAt` on come this many days later (null: no jump). */
  jumpDays: number | null;
  jumpAt: number;
  /** Runs of the midnight commit at random times while the workload runs (besides the ones after each midnight). */
  racingRuns: number;
  /** Largest one-way latency of the midnight commit's calls, ms: a slow one sees rollups commit under it. */
  midnightLatencyMs: number;
  /** The last check's midnight commit runs this many days after the day the schedule ends on. */
  finalDays: number;
  /** A mirror target that holds a window, added to the schedule's mirrors (when it has any). */
  windowMirror: MirrorTarget | null;
  /**
   * How far each instance's day clock is off the store's, ms (instance i takes entry i): its windows are for
   * the UTC day of that clock. Up to CLOCK_AHEAD_MS ahead, and as far behind, so that near midnight
   * consecutive commits are for different days in either order.
   */
  daySkewsMs: number[];
}

const WINDOW_MIRRORS: MirrorTarget[] = [
  { path: "posts/p", field: "views7d", value: "last7Days" },
  { path: "feeds/p", field: "today", value: "today" },
];

/** A windowed schedule's draws; `writes`: the workload's size as drawn (a cluster is smaller). */
export function windowShapeOf(rng: Rng, writes: number): WindowShape {
  const cluster = chance(rng, 0.15) ? between(rng, 1, 3) : null;
  const lead = pick(rng, ["at", "seconds", "minutes"] as const);
  return {
    lastDay: pick(rng, MIDNIGHTS),
    leadMs: cluster !== null ? between(rng, 150, 3000) : lead === "at" ? between(rng, 0, 2000) : lead === "seconds" ? between(rng, 2000, 60_000) : between(rng, 60_000, 600_000),
    cluster,
    writerSkewsMs: Array.from({ length: between(rng, 1, 3) }, () => between(rng, -50, 50)),
    slowChance: pick(rng, [0, 0.05, 0.2]),
    lateChance: pick(rng, [0, 0.05, 0.2]),
    jumpDays: cluster === null && writes >= 2 && chance(rng, 0.25) ? pick(rng, JUMPS) : null,
    jumpAt: between(rng, 1, Math.max(1, writes - 1)),
    racingRuns: between(rng, 0, 3),
    midnightLatencyMs: pick(rng, [1, 40, 500]),
    finalDays: pick(rng, [1, 1, 2, 7, 30, 31]),
    windowMirror: chance(rng, 0.5) ? pick(rng, WINDOW_MIRRORS) : null,
    daySkewsMs: chance(rng, 0.5) ? [0, 0, 0, 0] : Array.from({ length: 4 }, () => pick(rng, [0, between(rng, -2000, 2000), between(rng, -CLOCK_AHEAD_MS, CLOCK_AHEAD_MS - 1)])),
  };
}

/** When a windowed schedule starts, in microseconds. */
export function windowedStartUs(win: WindowShape): number {
  return (dayStartMs(addDays(win.lastDay, 1)) - win.leadMs) * 1000;
}

/** The write times (ms after the start) of a windowed schedule: a cluster at midnight, or the workload with its jump. */
export function windowedTimes(rng: Rng, times: number[], win: WindowShape): number[] {
  if (win.cluster !== null) return times.slice(0, win.cluster).map(() => Math.max(0, win.leadMs + between(rng, -150, 150))).sort((a, b) => a - b);
  if (win.jumpDays === null) return times;
  return times.map((t, i) => (i >= win.jumpAt ? t + win.jumpDays! * DAY_MS : t));
}

/**
 * How long after `nowUs` a slow write commits whose clock read `clockMs`: anything up to the bound, and
 * often right at it (a few microseconds before: the world may push a commit time on by as much).
 */
export function slowLagUs(rng: Rng, nowUs: number, clockMs: number): number {
  const boundUs = (clockMs + DAY_CLOSES_AFTER_MS) * 1000 - nowUs - 50;
  if (boundUs <= 0) return 0;
  return chance(rng, 0.3) ? boundUs : between(rng, 0, boundUs);
}

/** The UTC midnights (ms) from the end of `lastDay` up to `untilMs`. */
export function midnightsMs(lastDay: string, untilMs: number): number[] {
  const all: number[] = [];
  for (let m = dayStartMs(addDays(lastDay, 1)); m <= untilMs; m += DAY_MS) all.push(m);
  return all;
}

function show(w: Omit<Windows, "day">): string {
  return `today ${w.today}, last7Days ${w.last7Days}, last30Days ${w.last30Days}`;
}

function sameWindows(a: Omit<Windows, "day">, b: Omit<Windows, "day">): boolean {
  return WINDOW_NAMES.every((name) => a[name] === b[name]);
}

function showDays(days: DayCounts): string {
  const entries = Object.entries(days).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length === 0 ? "{}" : `{ ${entries.map(([d, n]) => `${d}: ${n}`).join(", ")} }`;
}

/**
 * The true counts from the 29th day before `day` on, days at 0 left out: a later day counts as soon as a
 * covered write chose it (a writer's clock ahead of the rollup's near midnight: functions/src/model/windows.ts). The
 * day before those (KEPT_DAYS) as `days` holds it: absent, or its true count.
 */
function keptTruth(truth: DayCounts, day: string, days: DayCounts): DayCounts {
  const kept: DayCounts = {};
  const oldest = addDays(day, 1 - WINDOW_DAYS.last30Days);
  const before = addDays(day, 1 - KEPT_DAYS);
  for (const [d, count] of Object.entries(truth)) if ((d >= oldest || (d === before && d in days)) && count !== 0) kept[d] = count;
  return kept;
}

/** The settled parent against the truth at what it covers: its windows for its own day, and its days. */
export function settledFailures(w: WindowedState, truth: DayCounts): string[] {
  const failures: string[] = [];
  const day = w.windows.day;
  const expected = windowsOf(truth, day);
  if (!sameWindows(w.windows, expected)) failures.push(`windows for ${day}: ${show(w.windows)}, true ${show(expected)} (true days ${showDays(truth)})`);
  const kept = keptTruth(truth, day, w.days);
  if (showDays(w.days) !== showDays(kept)) failures.push(`rollup.days for ${day}: ${showDays(w.days)}, true ${showDays(kept)}`);
  return failures;
}

/** After the midnight commit at `atMs`: the windows of that day as a reader gets them, against the truth. */
export function movedFailures(w: WindowedState, truth: DayCounts, atMs: number): string[] {
  const day = dayOf(atMs);
  const expected = windowsOf(truth, day);
  if (w.windows.day === day) {
    return sameWindows(w.windows, expected) ? [] : [`after the midnight commit, windows for ${day}: ${show(w.windows)}, true ${show(expected)}`];
  }
  const failures: string[] = [];
  if (w.moveAtMs !== null && w.moveAtMs <= atMs) {
    failures.push(`the midnight commit at ${new Date(atMs).toISOString()} left windows for ${w.windows.day} with windowsMoveAt ${new Date(w.moveAtMs).toISOString()}`);
  }
  const read = windowsOf(w.days, day);
  if (!sameWindows(read, expected)) {
    failures.push(
      `after the midnight commit, windows still for ${w.windows.day} (windowsMoveAt ${w.moveAtMs === null ? "null" : new Date(w.moveAtMs).toISOString()}); ` +
        `read for ${day} from rollup.days ${showDays(w.days)}: ${show(read)}, true ${show(expected)} (true days ${showDays(truth)})`,
    );
  }
  return failures;
}
