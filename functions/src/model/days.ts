// UTC days, the unit of a windowed counter's counts over time (docs/windows.md): a day is its
// "YYYY-MM-DD" string, the UTC date of a clock reading in milliseconds. Pure: every caller passes its clock.

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
