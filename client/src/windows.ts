// Windowed counters in the client, as pure functions over plain data and an injected clock: UTC day
// strings, the window for the client's current UTC day from the parent's `rollup.days`, which of the
// client's own increments fall in a window's span, and when the next UTC midnight is. No Firebase import,
// so it is unit-tested on its own (client/test/windows.test.ts).
//
// The backend (docs/api.md) writes `windows` ({ day, today, last7Days, last30Days }) and `rollup.days`
// (the non-zero per-UTC-day sums from windows.day − 30 on; near midnight also the next day, which a
// writer whose clock ran ahead already counted for) with every rollup commit, exact as of
// `rollup.readTime`, the same coverage rule as `total`. Windows move at UTC midnight without a write,
// so the parent may still hold an older day's values: the client sums `rollup.days` over the span ending
// at its own current UTC day D instead, which is exact whatever `windows.day` is as long as D >=
// windows.day (rollup.days holds every later day a covered delta counted for). A client clock behind windows.day (seconds
// of skew) shows windows.day's values as they are.
//
// The functions keep their own copy of the day arithmetic and of the `rollup.days` reading rule
// (functions/src/model/windows.ts): this package is built and published on its own, so it
// cannot import theirs. client/test/same-days.test.ts runs both over one table of cases.
import { uncoveredDelta, type OwnIncrement, type Time } from "./coverage.js";

/** The windows a windowed counter keeps. */
export type WindowName = "today" | "last7Days" | "last30Days";

/** How many UTC days each window spans, ending at (and including) its day. */
export const WINDOW_DAYS: Readonly<Record<WindowName, number>> = { today: 1, last7Days: 7, last30Days: 30 };

export function isWindowName(value: unknown): value is WindowName {
  return typeof value === "string" && Object.prototype.hasOwnProperty.call(WINDOW_DAYS, value);
}

const DAY_MS = 86_400_000;

/** The UTC day ("YYYY-MM-DD") of a time in ms since the epoch. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The UTC day of a Firestore time (a day is whole seconds, so the nanoseconds never move it). */
export function dayOfTime(time: Time): string {
  return dayOf(time.seconds * 1000);
}

/** Whether `value` is a real UTC day "YYYY-MM-DD" (2027-02-29 is not). */
export function isDay(value: unknown): value is string {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(ms) && dayOf(ms) === value;
}

/** The day `n` days after `day` (before it for a negative `n`). */
export function addDays(day: string, n: number): string {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);
}

/** Ms from `nowMs` until the next UTC midnight: in (0, 24 h]; a full day at midnight itself. */
export function msUntilNextUtcMidnight(nowMs: number): number {
  return DAY_MS - (((nowMs % DAY_MS) + DAY_MS) % DAY_MS);
}

/** The first day of the window ending at `day`. */
export function spanStart(window: WindowName, day: string): string {
  return addDays(day, 1 - WINDOW_DAYS[window]);
}

/** What a windowed parent document holds for the client, each part null when it is missing or malformed. */
export interface ServerWindows {
  /** `windows.day`: the UTC day the stored values are for. */
  day: string | null;
  /** The `windows.*` values that are safe integers. */
  values: Partial<Record<WindowName, number>>;
  /** `rollup.days`: day → sum; null when absent, or when any key is not a day or any sum not a safe integer. */
  days: Readonly<Record<string, number>> | null;
}

/**
 * Reads the windows of a parent document (anything with `get(field)`, as the SDK's DocumentSnapshot),
 * or null when the counter is not windowed (`windowed` is not true).
 */
export function readServerWindows(snap: { get(field: string): unknown }): ServerWindows | null {
  if (snap.get("windowed") !== true) return null;
  const windows = asRecord(snap.get("windows"));
  const values: Partial<Record<WindowName, number>> = {};
  for (const window of Object.keys(WINDOW_DAYS) as WindowName[]) {
    const value = windows?.[window];
    if (Number.isSafeInteger(value)) values[window] = value as number;
  }
  const day = windows?.day;
  return { day: isDay(day) ? day : null, values, days: readDays(snap.get("rollup.days")) };
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function readDays(value: unknown): Record<string, number> | null {
  const record = asRecord(value);
  if (record === null) return null;
  const days: Record<string, number> = {};
  for (const [day, sum] of Object.entries(record)) {
    if (!isDay(day) || !Number.isSafeInteger(sum)) return null;
    days[day] = sum as number;
  }
  return days;
}

/** Σ days[d] for d in the window ending at `day` (a missing day is 0). */
export function sumWindow(days: Readonly<Record<string, number>>, window: WindowName, day: string): number {
  const from = spanStart(window, day);
  let sum = 0;
  for (const [d, value] of Object.entries(days)) if (d >= from && d <= day) sum += value;
  return sum;
}

/** A window's value from the server's data: `day` is the UTC day it is for; `value` null when unreadable. */
export interface ServerWindow {
  day: string;
  value: number | null;
}

/**
 * The window to show at `nowMs`, as the server's data has it. Its day is the client's current UTC day D,
 * or `windows.day` when the client's clock is behind it. The value is summed from `rollup.days` (exact
 * for any D >= windows.day); without a readable `rollup.days` it is `windows[window]` if that is for the
 * same day; otherwise (or without a readable `windows.day`, which bounds what `rollup.days` holds) null.
 */
export function serverWindow(server: ServerWindows, window: WindowName, nowMs: number): ServerWindow {
  const today = dayOf(nowMs);
  if (server.day === null) return { day: today, value: null };
  const day = server.day > today ? server.day : today;
  if (server.days !== null) return { day, value: sumWindow(server.days, window, day) };
  const value = server.day === day ? server.values[window] : undefined;
  return { day, value: value ?? null };
}

/**
 * The own increments that belong to the window ending at `day`: an answered one by the UTC day of its
 * `writeTime` (the backend's day for it, but for the milliseconds between its clock and the commit), one
 * still unanswered on `day` itself (it is being applied now). Which of them the total already holds is
 * coverage.ts's question.
 */
export function ownInWindow(own: Iterable<OwnIncrement>, window: WindowName, day: string): OwnIncrement[] {
  const from = spanStart(window, day);
  const inside: OwnIncrement[] = [];
  for (const increment of own) {
    const at = increment.writeTime === null ? day : dayOfTime(increment.writeTime);
    if (at >= from && at <= day) inside.push(increment);
  }
  return inside;
}

/** What a window watcher shows: `value` = `windowTotal` + `pending`, both null when the window is unreadable. */
export interface WindowShown {
  /** The UTC day the window ends at. */
  day: string;
  /** The server's window (serverWindow). */
  windowTotal: number | null;
  /** The own increments of the window's span that the snapshot does not cover. */
  pending: number;
  value: number | null;
}

/**
 * The window to show at `nowMs` for a snapshot covering every write up to `coveredUntil`: the server's
 * window plus the own increments of its span not covered. Undefined while that is not known (an own
 * call in flight may or may not be in the snapshot: coverage.ts's uncoveredDelta is null).
 */
export function windowToShow(
  server: ServerWindows,
  window: WindowName,
  nowMs: number,
  coveredUntil: Time | null,
  own: Iterable<OwnIncrement>,
): WindowShown | undefined {
  const { day, value } = serverWindow(server, window, nowMs);
  const pending = uncoveredDelta(coveredUntil, ownInWindow(own, window, day));
  if (pending === null) return undefined;
  if (value === null) return { day, windowTotal: null, pending: 0, value: null };
  return { day, windowTotal: value, pending, value: value + pending };
}
