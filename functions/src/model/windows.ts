// Days and counts over time (docs/windows.md): UTC days, and a windowed counter's counts per day. A
// windowed counter keeps, besides its total, the net count of each UTC day, and shows `windows.today`,
// `windows.last7Days` and `windows.last30Days` for one day. Pure: the
// rollup (rollup/commit.ts) and the midnight commit (rollup/midnight.ts) call these with their clock; the Firestore
// store sums the days these name.
//
// WHERE THE DAYS ARE. An increment on a windowed counter adds its delta to `days.{day}` of the shard it
// picks, in the same write as `count` (counters/shard-writes.ts): still one document written. `day` is the
// UTC date of the incrementing instance's clock. The parent keeps `rollup.days`, the net count of every
// day of the last 31 (KEPT_DAYS) that is not 0, exact at `rollup.readTime`, and `windows`, the three sums
// for one day.
//
// WHY SUMMING A FEW DAYS IS EXACT. A rollup cannot sum 30 day fields in the one aggregation query that sums
// `count` (a query holds at most 5 aggregations, and summing several fields in one query needs a composite
// index, which cannot name fields that change with the date). It does not need to: a delta's write commits
// within DAY_CLOSES_AFTER_MS of the clock reading that chose its day (the function that writes it times out
// long before), so a day X is *closed* once a read time passes the end of X plus that bound: no write for X
// commits after it. The invariant, after a commit whose sum was read at R on a rollup clock whose day is D:
//   for every day X <= D (of the KEPT_DAYS ending with D), rollup.days[X] = Σ over shards of days.X at R.
// The next sum, read at R' with clock day D', sums every day from dayOf(R - DAY_CLOSES_AFTER_MS) to D' at R'
// (openDays) and keeps the others: a kept day X ended at or before R - DAY_CLOSES_AFTER_MS, so every write
// for X committed at or before R, and its sum at R' is its sum at R. Days summed are recomputed, never
// accumulated: a duplicated, late or reordered event changes nothing, exactly as for `total` (plan.ts).
// The newest day a sum reads comes from its read time R', not only from its clock: a writer whose clock is
// ahead (by up to CLOCK_AHEAD_MS) can commit a write for D' + 1 at or before R' while the rollup's clock still
// says D', and R' covers that write, so no later event may come to sum it. Every write at or before R' chose
// a day at most dayOf(R' + CLOCK_AHEAD_MS), so the sum reads up to max(D', that day) and keeps that day on
// the parent; its windows move at the next midnight (windowsMoveAtMs), when the midnight commit shows it.
// (Found by the model check: a write at 00:00:00.000 for the new day, rolled up 3 ms later by an instance
// whose clock was a few ms behind, was covered and then never summed.)
// Rollup instances' clocks differ too, so consecutive commits near midnight can be for different days, in
// either order: a commit for D' + 1 keeps the days from D' - 29 on, all that the windows of D' need, so a
// later commit for D' finds the oldest day of its month on the parent (KEPT_DAYS is one more than a window).
//
// THE WINDOWS OF A LATER DAY NEED NO SUM. Every day after the newest one a sum read at R has summed is 0 at
// R: a write for such a day chose it on a clock past its midnight, so it committed after that midnight
// minus CLOCK_AHEAD_MS, which is after R (or the sum would have read the day, above). With the invariant,
// `rollup.days` (absent days at 0) is then the count at R of every day from the oldest it keeps on, and the
// windows of any later day span only those: computed from `rollup.days` alone, they count exactly the
// deltas whose writes committed at or before R, the coverage rule `total` is held to with the same R. That
// is what the midnight commit writes (movedWindows, rollup/midnight.ts): no sum, the total and its read
// time as they are, the days as they are (the oldest dropped); the next rollup sums what came after R.
//
// Usually one day is open (two in the first hour after midnight, or in the last minute before it): one
// more aggregation query, read at the same read time as the total in a read-only transaction (sum.ts).

// UTC DAYS. A day is its "YYYY-MM-DD" string, the UTC date of a clock reading in milliseconds. Every caller
// passes its clock. (The client keeps the same functions in client/src/windows.ts; client/test/same-days.test.ts
// holds the two copies together.)
const DAY_MS = 86_400_000;

/** The UTC day of a time in milliseconds: "2026-11-26". */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The first millisecond of a UTC day. */
export function dayStartMs(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`);
}

/** The day `n` days after `day` (n may be negative). */
export function addDays(day: string, n: number): string {
  return dayOf(dayStartMs(day) + n * DAY_MS);
}

/** The first millisecond of the UTC day after the one `ms` falls in: when windows next move. */
export function nextMidnightMs(ms: number): number {
  return dayStartMs(dayOf(ms)) + DAY_MS;
}

/** The days from `first` to `last`, both included, oldest first (empty when first > last). */
export function daysFrom(first: string, last: string): string[] {
  const days: string[] = [];
  for (let d = first; d <= last; d = addDays(d, 1)) days.push(d);
  return days;
}

/** A "YYYY-MM-DD" string that names a real UTC day. */
export function isDay(value: unknown): value is string {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const start = dayStartMs(value);
  return Number.isFinite(start) && dayOf(start) === value;
}

/** The windows a parent shows, and how many days each spans (ending with `windows.day`). */
export const WINDOW_DAYS = { today: 1, last7Days: 7, last30Days: 30 } as const;
export type WindowName = keyof typeof WINDOW_DAYS;
export const WINDOW_NAMES = Object.keys(WINDOW_DAYS) as WindowName[];

/**
 * The days a parent keeps and a sum may read, ending with the summing clock's day: the longest window and
 * the day before it. Instances' clocks differ by seconds (CLOCK_AHEAD_MS), so near midnight one commits
 * for the next day while the next commit, on a clock that is right, is still for the day before: that one
 * needs the oldest day of its own month, which the first would have dropped as out of its 30 days, and a
 * day once closed is never summed again.
 */
export const KEPT_DAYS = WINDOW_DAYS.last30Days + 1;

/**
 * A bound on the time from the clock reading that chose a delta's day to the commit of its write: every
 * function that applies deltas times out well within it (at most 9 minutes for the callables).
 */
export const DAY_CLOSES_AFTER_MS = 3_600_000;

/** A bound on how far an instance's clock runs ahead of Firestore's commit times (NTP-synced: milliseconds). */
export const CLOCK_AHEAD_MS = 60_000;

/** `windows` on the parent: the day, and the three sums for it. */
export interface Windows {
  day: string;
  today: number;
  last7Days: number;
  last30Days: number;
}

/** Net counts by day ("YYYY-MM-DD" → count); a day absent counts 0, and no day is stored at 0. */
export type DayCounts = Record<string, number>;

/** A windowed parent's days as the rollup reads them: `rollup.days`, exact at `sinceUs`, and when its windows move. */
export interface DaysRead {
  days: DayCounts;
  /**
   * The read time the days are exact at: `rollup.readTime`, else the reset's or the creation's time; 0 when
   * `rollup.days` cannot be read (every day is open then, and summed again).
   */
  sinceUs: number;
  /** `rollup.windowsMoveAt`: when the windows on the parent next move by themselves; null when they do not. */
  moveAtMs: number | null;
}

/** What a commit writes of a windowed counter: `windows`, `rollup.days` and `rollup.windowsMoveAt`. */
export interface WindowsState {
  windows: Windows;
  days: DayCounts;
  /** When the windows next move by themselves (windowsMoveAtMs); null: they do not. */
  moveAtMs: number | null;
}

/**
 * The days a sum read at `readUs` on a clock at `nowMs` must read (see the header), oldest first: from the
 * first day still open since `sinceUs` (at most KEPT_DAYS back) to the newest day a write covered by the read
 * can have chosen; today always among them.
 */
export function openDays(sinceUs: number, nowMs: number, readUs: number): string[] {
  const today = dayOf(nowMs);
  const oldest = addDays(today, 1 - KEPT_DAYS);
  let first = dayOf(Math.floor(sinceUs / 1000) - DAY_CLOSES_AFTER_MS);
  if (first < oldest) first = oldest;
  if (first > today) first = today;
  const newest = dayOf(Math.max(nowMs, Math.floor(readUs / 1000)) + CLOCK_AHEAD_MS);
  return daysFrom(first, newest > today ? newest : today);
}

/**
 * A windowed parent's days when none of them can be trusted (`rollup.days` unreadable, or a reconcile's
 * repair): every kept day open, so the next sum reads them all again.
 */
export function everyDayOpen(moveAtMs: number | null): DaysRead {
  return { days: {}, sinceUs: 0, moveAtMs };
}

/** A windowed counter's commit on one clock reading: the days its sum must read, and the windows that sum gives. */
export interface DayPlan {
  /** The days a sum read at `readUs` must read (openDays). */
  open: (readUs: number) => string[];
  /**
   * The open days of a sum read at `readUs` from one shard's own `days` (a counter of one shard: the
   * rollup's snapshot sum), as an aggregation would sum them: what is not a number counts 0. Null when a day
   * holds a number no exact sum can take (the shards are summed then).
   */
  fromShard: (stored: Record<string, unknown>, readUs: number) => DayCounts | null;
  /** What the commit writes of the windows: the days after the sum (daysAfter), their windows and when they next move. */
  after: (summed: DayCounts) => WindowsState;
}

/** The day plan of a commit onto a parent whose days are `kept`, on a clock at `nowMs` (read once, before the sum). */
export function dayPlan(kept: DaysRead, nowMs: number): DayPlan {
  const today = dayOf(nowMs);
  const open = (readUs: number) => openDays(kept.sinceUs, nowMs, readUs);
  return {
    open,
    fromShard: (stored, readUs) => {
      const days: DayCounts = {};
      for (const day of open(readUs)) {
        const value = stored[day];
        if (typeof value === "number" && !Number.isSafeInteger(value)) return null;
        days[day] = typeof value === "number" ? value : 0;
      }
      return days;
    },
    after: (summed) => {
      const days = daysAfter(kept.days, summed, today);
      return { windows: windowsOf(days, today), days, moveAtMs: windowsMoveAtMs(days, today) };
    },
  };
}

/**
 * The days after a sum: the open days as summed, the others as kept, from the 30th day before `today` (the
 * KEPT_DAYS ending with it) to the newest day summed (a day after `today` is kept for the windows of the days to come).
 */
export function daysAfter(kept: DayCounts, summed: DayCounts, today: string): DayCounts {
  const oldest = addDays(today, 1 - KEPT_DAYS);
  const newest = Object.keys(summed).reduce((a, b) => (b > a ? b : a), today);
  const days: DayCounts = {};
  for (const [day, count] of Object.entries({ ...kept, ...summed })) {
    if (day >= oldest && day <= newest && count !== 0) days[day] = count;
  }
  return days;
}

/**
 * The windows of a day `today` after the last sum, from the days on the parent alone (see the header: the
 * windows of a later day need no sum): what the midnight commit writes. The days older than the KEPT_DAYS
 * ending with `today` are dropped; none is added, and a later day is kept.
 */
export function movedWindows(days: DayCounts, today: string): WindowsState {
  const oldest = addDays(today, 1 - KEPT_DAYS);
  const kept: DayCounts = {};
  for (const [day, count] of Object.entries(days)) if (day >= oldest && count !== 0) kept[day] = count;
  return { windows: windowsOf(kept, today), days: kept, moveAtMs: windowsMoveAtMs(kept, today) };
}

/** The windows of `day` from the net counts by day. */
export function windowsOf(days: DayCounts, day: string): Windows {
  // Days are "YYYY-MM-DD": their order as strings is their order in time. (The midnight commit computes this
  // for every windowed counter: a few string comparisons, not a date per day of each window.)
  const span = (n: number) => {
    const first = addDays(day, 1 - n);
    let sum = 0;
    for (const [d, count] of Object.entries(days)) if (d >= first && d <= day) sum += count;
    return sum;
  };
  return { day, today: span(WINDOW_DAYS.today), last7Days: span(WINDOW_DAYS.last7Days), last30Days: span(WINDOW_DAYS.last30Days) };
}

/**
 * When these windows next change by themselves: the next UTC midnight if any day they span, or a later day
 * already counted, is not 0 (today's count leaves `today`, the oldest day leaves its window, tomorrow's
 * enters), else null. The midnight commit (rollup/midnight.ts) finds the counters to commit again by this
 * time, `rollup.windowsMoveAt`.
 */
export function windowsMoveAtMs(days: DayCounts, day: string): number | null {
  const oldest = addDays(day, 1 - WINDOW_DAYS.last30Days);
  const moves = Object.entries(days).some(([d, count]) => d >= oldest && count !== 0);
  return moves ? nextMidnightMs(dayStartMs(day)) : null;
}

/**
 * `rollup.days` as the parent holds it, read by one rule with the client (client/src/windows.ts,
 * client/test/same-days.test.ts): null unless it is a record of real days with safe integer counts. A
 * record with one bad entry cannot tell which days it is exact for, so none is trusted: the rollup sums
 * every kept day again (DaysRead.sinceUs 0), and the client shows no window from it.
 */
export function dayCountsOf(value: unknown): DayCounts | null {
  const days = shardDaysOf(value);
  return days !== null && Object.keys(days).length === Object.keys(value as object).length ? days : null;
}

/**
 * A shard's `days`: its real days with safe integer counts, anything else left out (a reset or reshard
 * moves what it can read, and the next rollup sums the open days again from the shards).
 */
export function shardDaysOf(value: unknown): DayCounts | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const days: DayCounts = {};
  for (const [day, count] of Object.entries(value as Record<string, unknown>)) {
    if (isDay(day) && typeof count === "number" && Number.isSafeInteger(count)) days[day] = count;
  }
  return days;
}
