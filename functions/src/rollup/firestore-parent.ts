// The parent document as the rollup reads and writes it over Firestore: its bookkeeping read into a
// ParentView (plan.ts), the fields a windowed commit writes, and the Firestore forms of the times and
// versions the rollup handles as numbers and opaque tokens (store.ts). Shared by the store
// (firestore-store.ts) and the midnight commit's reads and writes (firestore-midnight.ts).
import { Timestamp, type DocumentSnapshot } from "firebase-admin/firestore";
import { WINDOWS_MOVE_AT } from "../model/paths";
import { dayCountsOf, type DaysRead, type WindowsState } from "../model/windows";
import type { Load } from "./growth";
import { MAX_INTERVAL_MS } from "../model/param-rules";
import { microsFloor } from "../model/time";
import type { ParentRead } from "./store";

/** `rollup.load` as the rollup reads it; null when absent or malformed (the next commit measures afresh). */
function loadOf(parent: DocumentSnapshot): Load | null {
  const load = parent.exists ? (parent.get("rollup.load") as unknown) : undefined;
  if (typeof load !== "object" || load === null) return null;
  const { readTime, writes, hotSince, hotWrites, hotStepTime, hotStepFrom } = load as Record<string, unknown>;
  if (!(readTime instanceof Timestamp) || typeof writes !== "number" || !Number.isSafeInteger(writes)) return null;
  const step =
    hotStepTime instanceof Timestamp && typeof hotStepFrom === "number" && Number.isSafeInteger(hotStepFrom) && hotStepFrom >= 1
      ? { atUs: microsFloor(hotStepTime), from: hotStepFrom }
      : null;
  const hot =
    hotSince instanceof Timestamp && typeof hotWrites === "number" && Number.isSafeInteger(hotWrites)
      ? { sinceUs: microsFloor(hotSince), writes: hotWrites, step }
      : null;
  return { readUs: microsFloor(readTime), writes, hot };
}

/** `numShards` if it holds a positive integer; null otherwise. */
function numShardsOf(parent: DocumentSnapshot): number | null {
  const value = parent.exists ? (parent.get("numShards") as unknown) : undefined;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : null;
}

/** The parent's bookkeeping as the rollup reads it. */
export function parentReadOf(parent: DocumentSnapshot): ParentRead {
  return {
    view: {
      parentExists: parent.exists,
      coveredUntilUs: coveredUntilUs(parent),
      // When the rollup last wrote the parent: `rollup.committedAt`.
      lastCommitUs: timeFieldUs(parent, "rollup.committedAt"),
      recordedIntervalMs: recordedIntervalMs(parent),
      numShards: numShardsOf(parent),
      load: loadOf(parent),
      days: daysOf(parent),
      updatedUs: parent.exists ? microsFloor(parent.updateTime!) : null,
    },
    version: parent.exists ? versionOf(parent.updateTime!) : null,
  };
}

/**
 * A windowed parent's days (model/windows.ts): `rollup.days`, exact at `rollup.readTime` (before the first
 * rollup: at the reset, or at the creation). Days that cannot be read are summed again: every day of the
 * last 30 is open then. Null for a counter that is not windowed.
 */
function daysOf(parent: DocumentSnapshot): DaysRead | null {
  if (!parent.exists || parent.get("windowed") !== true) return null;
  const days = dayCountsOf(parent.get("rollup.days"));
  const since = coveredUntilUs(parent) ?? timeFieldUs(parent, "resetAt") ?? (parent.createTime === undefined ? null : microsFloor(parent.createTime));
  const moveAt = timeFieldUs(parent, WINDOWS_MOVE_AT);
  const moveAtMs = moveAt === null ? null : Math.floor(moveAt / 1000);
  if (days === null || since === null) return { days: {}, sinceUs: 0, moveAtMs };
  return { days, sinceUs: since, moveAtMs };
}

/** `rollup.intervalMs` if it holds a valid interval; anything else counts as none recorded. */
function recordedIntervalMs(parent: DocumentSnapshot): number | null {
  const value = parent.exists ? (parent.get("rollup.intervalMs") as unknown) : undefined;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 && value <= MAX_INTERVAL_MS ? value : null;
}

/** The read time of the sum the parent's total holds, in microseconds (rounded down); null if none. */
export function coveredUntilUs(parent: DocumentSnapshot): number | null {
  return timeFieldUs(parent, "rollup.readTime");
}

/** A Timestamp field of the parent in microseconds (rounded down); null if absent. */
function timeFieldUs(parent: DocumentSnapshot, field: string): number | null {
  const value = parent.exists ? (parent.get(field) as unknown) : undefined;
  return value instanceof Timestamp ? microsFloor(value) : null;
}

/** A windowed counter's commit fields: `windows`, `rollup.days` and `rollup.windowsMoveAt`. */
export function windowsFields(windows: WindowsState): Record<string, unknown> {
  return {
    windows: windows.windows,
    "rollup.days": windows.days,
    [WINDOWS_MOVE_AT]: windows.moveAtMs === null ? null : Timestamp.fromMillis(windows.moveAtMs),
  };
}

/** A version token: the exact update time, so a precondition built from it matches to the nanosecond. */
export function versionOf(time: Timestamp): string {
  return `${time.seconds}.${String(time.nanoseconds).padStart(9, "0")}`;
}

export function timestampOf(version: string): Timestamp {
  const [seconds, nanos] = version.split(".");
  return new Timestamp(Number(seconds), Number(nanos));
}

export function timestampOfMicros(us: number): Timestamp {
  const seconds = Math.floor(us / 1_000_000);
  return new Timestamp(seconds, (us - seconds * 1_000_000) * 1000);
}
