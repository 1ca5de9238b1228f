// The pure state of plain counters in the client: what it knows about one counter, how a snapshot and
// an answered call change it, and what each watcher is to be shown (the value, and which error to tell).
// No Firebase import, no listener and no timer: increments.ts listens, calls and tells.
import { isCovered, uncoveredDelta, type CounterSnapshotState, type OwnIncrement, type Time } from "./coverage.js";
import { autoCreatedValue, forgetAnswered } from "./missing.js";
import type { Watcher } from "./registry.js";
import { dayOf, ownInWindow, readServerWindows, windowToShow, type ServerWindows, type WindowName } from "./windows.js";

/** What a watcher receives besides the value. */
export interface CounterView {
  counterId: string;
  /** False while `counters/{counterId}` does not exist (then `value` is null). */
  exists: boolean;
  /** The server's `total` this value is based on (0 when the counter does not exist). */
  total: number;
  /** Every increment committed at or before this time is in `total`: max(rollup.readTime, createdAt). */
  coveredUntil: Time | null;
  /** value − total (with a window: value − windowTotal): this client's increments not in it yet. */
  pending: number;
  /** Only with a window: the window the value is for. */
  window?: WindowName;
  /** Only with a window: the UTC day ("YYYY-MM-DD") the window ends at, the client's current UTC day. */
  day?: string;
  /**
   * Only with a window: the window's sum from the server's data (`rollup.days`), covering the same
   * increments as `total`; null when the counter does not exist, is not windowed or its windows are
   * unreadable (then `value` is null too).
   */
  windowTotal?: number | null;
}

export interface CounterWatcher extends Watcher<CounterView> {
  window: WindowName | undefined;
  autoCreated: boolean;
  /** Told that the counter is missing (missing.ts), once per absence. */
  toldMissing: boolean;
  /** The last problem told to onError, so that every snapshot does not repeat it. */
  problem: string | undefined;
}

/** What the client knows about one counter. */
export interface CounterState {
  own: Map<string, OwnIncrement>;
  /** The newest coveredUntil of any snapshot received (the bound in-flight calls are sent after). */
  seenUntil: Time | null;
  latest: CounterSnapshotState | undefined;
  /** Whether the latest snapshot came from the SDK's cache (then a missing counter may still exist on the server). */
  fromCache: boolean;
  /** The latest snapshot's windows (null: not windowed, or the counter does not exist). */
  windows: ServerWindows | null;
  watchers: Set<CounterWatcher>;
  unsubscribe: (() => void) | undefined;
  /** Republishes at the next UTC midnight while a watcher shows a window. */
  midnight: ReturnType<typeof setTimeout> | undefined;
}

/** A counter's state before anything is known of it. */
export function freshCounterState(): CounterState {
  return { own: new Map(), seenUntil: null, latest: undefined, fromCache: false, windows: null, watchers: new Set(), unsubscribe: undefined, midnight: undefined };
}

/**
 * A counter snapshot arrived (newer than any seen): it is the latest, and own increments it covers are
 * in its total now. A deletion forgets the answered ones (they were applied to the counter that is gone).
 */
export function takeSnapshot(state: CounterState, counter: CounterSnapshotState, snap: { get(field: string): unknown; metadata: { fromCache: boolean } }): void {
  if (state.latest?.exists === true && !counter.exists) forgetAnswered(state.own);
  state.latest = counter;
  state.fromCache = snap.metadata.fromCache;
  state.windows = counter.exists ? readServerWindows(snap) : null;
  for (const [requestId, own] of state.own) {
    if (own.writeTime !== null && isCovered(counter.coveredUntil, own.writeTime)) state.own.delete(requestId);
  }
}

/** Records an answered call (its write time), or takes a failed one's delta back (`answered` null). */
export function settleOwn(state: CounterState, requestId: string, answered: OwnIncrement | null): void {
  if (answered === null || (answered.writeTime !== null && isCovered(state.latest?.coveredUntil ?? null, answered.writeTime))) {
    state.own.delete(requestId);
  } else {
    state.own.set(requestId, answered);
  }
}

/** What one watcher is to be shown for the latest snapshot. */
export interface Shown {
  /** The counter exists: a later absence is told again (missing.ts). */
  found: boolean;
  /** The value and view for onValue; undefined while an in-flight call may or may not be in the snapshot. */
  told?: { value: number | null; view: CounterView };
  /** A window that cannot be shown, for onError once (a string); null once it can be shown again. */
  problem?: string | null;
  /** The server says the counter does not exist: tell onError (missing.ts). */
  missing?: boolean;
}

/**
 * What `watcher` is to be shown at `now()`: `total` plus the own increments it does not contain yet (or
 * the same for its window); undefined while nothing exact can be shown (no snapshot yet, or an in-flight
 * call that may or may not be in the total: wait for it).
 */
export function shownTo(counterId: string, state: CounterState, watcher: CounterWatcher, now: () => number): Shown | undefined {
  const latest = state.latest;
  if (latest === undefined) return undefined;
  if (!latest.exists) return missingShown(counterId, state, watcher, now());
  const uncovered = uncoveredDelta(latest.coveredUntil, state.own.values());
  if (uncovered === null) return undefined;
  if (watcher.window !== undefined) return { found: true, ...windowShown(counterId, state, latest, watcher.window, now()) };
  const view: CounterView = { counterId, exists: true, total: latest.total, coveredUntil: latest.coveredUntil, pending: uncovered };
  return { found: true, told: { value: latest.total + uncovered, view } };
}

/** A counter that does not exist (missing.ts): 0 and own increments when auto-created, else null, told once from the server. */
function missingShown(counterId: string, state: CounterState, watcher: CounterWatcher, nowMs: number): Shown {
  const day = dayOf(nowMs);
  const window = watcher.window;
  const base = { counterId, exists: false, total: 0, coveredUntil: null };
  if (watcher.autoCreated) {
    const pending = autoCreatedValue(window === undefined ? state.own.values() : ownInWindow(state.own.values(), window, day));
    return { found: false, told: { value: pending, view: { ...base, pending, ...(window === undefined ? {} : { window, day, windowTotal: 0 }) } } };
  }
  const view = { ...base, pending: 0, ...(window === undefined ? {} : { window, day, windowTotal: null }) };
  return { found: false, told: { value: null, view }, missing: !state.fromCache };
}

/**
 * A window's value (windows.ts): the server's window for the client's current UTC day plus the own
 * increments of its span the snapshot does not cover. A counter that is not windowed, or whose windows
 * are unreadable, is shown as null and told to onError once.
 */
function windowShown(counterId: string, state: CounterState, latest: CounterSnapshotState, window: WindowName, nowMs: number): Omit<Shown, "found"> {
  const base = { counterId, exists: latest.exists, total: latest.total, coveredUntil: latest.coveredUntil, window };
  const shown = state.windows === null ? null : windowToShow(state.windows, window, nowMs, latest.coveredUntil, state.own.values());
  if (shown === undefined) return {}; // an in-flight call may or may not be in this snapshot: wait for it
  if (shown === null || shown.value === null) {
    const problem =
      shown === null
        ? `counters/${counterId} is not a windowed counter (created without windowed: true): it has no window "${window}"`
        : `counters/${counterId} has no readable window "${window}" for ${shown.day} (windows or rollup.days malformed)`;
    return { problem, told: { value: null, view: { ...base, pending: 0, day: shown?.day ?? dayOf(nowMs), windowTotal: null } } };
  }
  return { problem: null, told: { value: shown.value, view: { ...base, pending: shown.pending, day: shown.day, windowTotal: shown.windowTotal } } };
}
