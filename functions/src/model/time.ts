// Times as the backend handles them. A Firestore commit or read time is a Time: whole seconds and
// nanoseconds (firebase-admin's Timestamp is one, and so is a callable's `writeTime` as it crosses the
// protocol). The rollup compares times in whole MICROseconds since the epoch (exact in a JS number until the
// year 2255): a write time is rounded UP and a read time DOWN, so "covered" can only err towards one extra
// rollup, never towards a missed write (rollup/plan.ts). Pure: no Firebase import.

/** A commit or read time: whole seconds and nanoseconds (0..999,999,999) since the epoch. */
export interface Time {
  seconds: number;
  nanoseconds: number;
}

/** A Time as plain integers (what a callable answers: a Timestamp would cross the protocol as an object with methods). */
export function timeOf({ seconds, nanoseconds }: Time): Time {
  return { seconds, nanoseconds };
}

/** Microseconds of a time, rounded down (for read times). */
export function microsFloor({ seconds, nanoseconds }: Time): number {
  return seconds * 1_000_000 + Math.floor(nanoseconds / 1000);
}

/** Microseconds of a time, rounded up (for write times). */
export function microsCeil({ seconds, nanoseconds }: Time): number {
  return seconds * 1_000_000 + Math.ceil(nanoseconds / 1000);
}

/** Microseconds of an RFC 3339 time such as "2026-11-22T10:00:00.123456789Z", rounded up; null if unparsable. */
export function parseRfc3339Micros(text: string): number | null {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (match === null) return null;
  const seconds = Date.parse(`${match[1]}${match[3]}`) / 1000;
  if (!Number.isFinite(seconds)) return null;
  const nanos = Number((match[2] ?? "").padEnd(9, "0"));
  return microsCeil({ seconds, nanoseconds: nanos });
}

/**
 * A document's version, as a string that sorts as the versions do: its update time in RFC 3339 with nine
 * digits of nanoseconds (`2026-11-27T10:00:00.123456789Z`), and `+` after it for "just after" (a delete).
 */
export type Version = string;

/** The version of a document whose update time is `time`. */
export function versionAt(time: Time): Version {
  const iso = new Date(time.seconds * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  return `${iso.slice(0, 19)}.${String(time.nanoseconds).padStart(9, "0")}Z`;
}

/** The version just after `time`: later than it, earlier than any later update time. */
export function versionJustAfter(time: Time): Version {
  return `${versionAt(time)}+`;
}

/**
 * The commit time of a write as its event tells it, microseconds, rounded up: the new document's update time,
 * or for a delete the event's time (never earlier than just after the deleted version's update time).
 */
export function writeTimeUs(after: Time | undefined, before: Time | undefined, eventTime: string, nowMs: number): number {
  if (after !== undefined) return microsCeil(after);
  const fromEvent = parseRfc3339Micros(eventTime);
  const afterBefore = before === undefined ? 0 : microsCeil(before) + 1;
  return Math.max(fromEvent ?? nowMs * 1000, afterBefore);
}
