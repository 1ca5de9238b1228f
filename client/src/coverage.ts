// The exactness rule, as pure functions over plain times: which of this client's own increments a
// counter snapshot's `total` does not contain yet. No Firebase import, so it is unit-tested on its own.
//
// The backend's coverage rule (docs/api.md, "The coverage rule"): `total` counts exactly the increments
// whose `writeTime` is at or before `rollup.readTime` (increments erased by a reset count as covered: the
// reset moves `rollup.readTime` past them). A counter deleted and created again starts with no `readTime`, and
// every increment of the old counter was committed before its `createdAt`. So a snapshot accounts for
// every increment with `writeTime <= coveredUntil`, where coveredUntil = max(rollup.readTime, createdAt),
// and for none after it.

/** A Firestore commit or read time: whole seconds and nanoseconds (a firestore `Timestamp` is one). */
export interface Time {
  seconds: number;
  nanoseconds: number;
}

/** One of this client's increments, as far as the client knows it. */
export type OwnIncrement =
  | {
      /** The server answered: the commit time of the write that applied `delta`. */
      delta: number;
      writeTime: Time;
    }
  | {
      /** Still in flight (or being retried): the commit time is not known yet. */
      delta: number;
      writeTime: null;
      /**
       * The newest `coveredUntil` of any snapshot this client had received when it first sent the call;
       * null if it had received none. The write commits after the call is sent, and every such snapshot
       * was made before that, so the write's time is later than this bound.
       */
      sentAfter: Time | null;
    };

/** Orders two times: negative, 0 or positive. */
export function compareTimes(a: Time, b: Time): number {
  return a.seconds !== b.seconds ? a.seconds - b.seconds : a.nanoseconds - b.nanoseconds;
}

/** The later of two optional times (null = none). */
export function laterOf(a: Time | null, b: Time | null): Time | null {
  if (a === null) return b;
  if (b === null) return a;
  return compareTimes(a, b) >= 0 ? a : b;
}

/**
 * Whether a snapshot covering every write up to `coveredUntil` contains a write committed at `writeTime`.
 * `coveredUntil` null (no rollup yet and no creation time) covers nothing.
 */
export function isCovered(coveredUntil: Time | null, writeTime: Time): boolean {
  return coveredUntil !== null && compareTimes(writeTime, coveredUntil) <= 0;
}

/**
 * The sum of the own increments a snapshot with this `coveredUntil` does not contain, or null when that
 * cannot be known yet: an in-flight call sent before the client saw a snapshot as new as this one may
 * or may not be in it. Callers then keep showing their previous value until the call settles.
 *
 * - answered, writeTime w: not contained iff w > coveredUntil (the coverage rule);
 * - in flight, sent after bound s: if coveredUntil <= s, then coveredUntil <= s < w: not contained;
 *   if coveredUntil is null: not contained; otherwise: unknown.
 */
export function uncoveredDelta(coveredUntil: Time | null, own: Iterable<OwnIncrement>): number | null {
  let sum = 0;
  for (const increment of own) {
    if (increment.writeTime !== null) {
      if (!isCovered(coveredUntil, increment.writeTime)) sum += increment.delta;
    } else if (coveredUntil === null) {
      sum += increment.delta;
    } else if (increment.sentAfter !== null && compareTimes(coveredUntil, increment.sentAfter) <= 0) {
      sum += increment.delta;
    } else {
      return null;
    }
  }
  return sum;
}

/** A time from an untyped document field or response, or null if it is not one. */
export function asTime(value: unknown): Time | null {
  if (typeof value !== "object" || value === null) return null;
  const { seconds, nanoseconds } = value as { seconds?: unknown; nanoseconds?: unknown };
  if (!Number.isSafeInteger(seconds) || !Number.isInteger(nanoseconds)) return null;
  const nanos = nanoseconds as number;
  if (nanos < 0 || nanos > 999_999_999) return null;
  return { seconds: seconds as number, nanoseconds: nanos };
}

/** A counter document as a watcher keeps it: its total and the time up to which the total accounts. */
export interface CounterSnapshotState {
  exists: boolean;
  total: number;
  coveredUntil: Time | null;
}

/** What a counter snapshot means to a watcher that has seen snapshots covering up to `seenUntil`. */
export type CounterSnapshotRead =
  /** Use it; `seenUntil` is the watcher's new bound. */
  | { kind: "state"; state: CounterSnapshotState; seenUntil: Time | null }
  /** No integer total: report it, keep the last state. */
  | { kind: "malformed" }
  /**
   * Older than one already seen (a cache): skip it, so that own writes already dropped as covered are
   * never needed again.
   */
  | { kind: "stale" };

/**
 * Reads a `counters/{id}` snapshot (anything with `exists()` and `get(field)`, as the SDK's
 * DocumentSnapshot): coveredUntil = max(rollup.readTime, createdAt), the rule in this file's header. Both
 * watchers (increments and membership) read counters through it (registry.ts).
 */
export function readCounterSnapshot(
  snap: { exists(): boolean; get(field: string): unknown },
  seenUntil: Time | null,
): CounterSnapshotRead {
  if (!snap.exists()) return { kind: "state", state: { exists: false, total: 0, coveredUntil: null }, seenUntil };
  const total = snap.get("total");
  if (typeof total !== "number" || !Number.isSafeInteger(total)) return { kind: "malformed" };
  const coveredUntil = laterOf(asTime(snap.get("rollup.readTime")), asTime(snap.get("createdAt")));
  if (seenUntil !== null && (coveredUntil === null || compareTimes(coveredUntil, seenUntil) < 0)) return { kind: "stale" };
  return { kind: "state", state: { exists: true, total, coveredUntil }, seenUntil: coveredUntil };
}
