// Plain counters in the client: increment() with one idempotency key per call, retried by the client's
// retry policy, and watch(), which shows `total` plus this client's own increments the total does not
// contain yet, exactly (see coverage.ts for the rule and its argument), or, with a window, the same for
// the counter's today / last 7 days / last 30 days (windows.ts), re-evaluated at each UTC midnight.
import { doc, onSnapshot, type DocumentSnapshot, type Firestore } from "firebase/firestore";
import { asTime, isCovered, uncoveredDelta, type CounterSnapshotState, type OwnIncrement, type Time } from "./coverage.js";
import { counterIdProblem, IncrementError } from "./failure.js";
import { autoCreatedValue, forgetAnswered, tellMissing } from "./missing.js";
import { createRegistry, tell, type Watcher } from "./registry.js";

export { IncrementError } from "./failure.js";
import { retrying, type RetryPolicy } from "./retry.js";
import { dayOf, msUntilNextUtcMidnight, ownInWindow, readServerWindows, windowToShow, type ServerWindows, type WindowName } from "./windows.js";

/** The data `incrementCounter` receives. */
export interface IncrementRequest {
  counterId: string;
  delta: number;
  requestId: string;
}

/** What a successful increment resolves with. */
export interface IncrementOutcome {
  counterId: string;
  requestId: string;
  /** Commit time of the write that applied the delta (the first one, if a retry was answered `applied: false`). */
  writeTime: Time;
  shard: number;
  /** Calls made, retries included. */
  attempts: number;
}

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

/** The fourth argument of `watch`. */
export interface WatchOptions {
  /** Show this window of a windowed counter instead of its total. */
  window?: WindowName;
  /**
   * The counter is created by its first increment or like (the server's AUTO_CREATE): while it does not
   * exist, show 0 plus this client's own increments, and tell `onError` nothing. Without it, a counter
   * that does not exist is shown as null and told to `onError` (a CounterNotFoundError).
   */
  autoCreated?: boolean;
}

export interface IncrementsDeps {
  firestore: Firestore;
  call: (request: IncrementRequest) => Promise<unknown>;
  retry: RetryPolicy;
  newRequestId: () => string;
  /** The client's clock in ms since the epoch: which UTC day it is for windows. */
  now: () => number;
}

interface CounterWatcher extends Watcher<CounterView> {
  window: WindowName | undefined;
  autoCreated: boolean;
  /** Told that the counter is missing (missing.ts), once per absence. */
  toldMissing: boolean;
  /** The last problem told to onError, so that every snapshot does not repeat it. */
  problem: string | undefined;
}

/** What the client knows about one counter. */
interface CounterState {
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

export interface Increments {
  increment: (counterId: string, delta?: number, options?: { requestId?: string }) => Promise<IncrementOutcome>;
  /** Arguments are checked by the caller. */
  watch: (
    counterId: string,
    onValue: (value: number | null, view: CounterView) => void,
    onError?: (error: Error) => void,
    options?: WatchOptions,
  ) => () => void;
  dispose: () => void;
}

export function createIncrements(deps: IncrementsDeps): Increments {
  const registry = createRegistry<CounterWatcher, CounterState>({
    create: () => ({
      own: new Map(),
      seenUntil: null,
      latest: undefined,
      fromCache: false,
      windows: null,
      watchers: new Set(),
      unsubscribe: undefined,
      midnight: undefined,
    }),
    listen: (counterId, state): (() => void) =>
      onSnapshot(
        doc(deps.firestore, "counters", counterId),
        // With metadata changes: a counter missing from the cache is told missing once the server says so.
        { includeMetadataChanges: true },
        (snap) => onCounterSnapshot(counterId, state, snap),
        (error) => registry.fail(state, error),
      ),
    publish,
    // Keep seenUntil and own increments while calls are in flight; drop the rest.
    stopped: (state) => {
      state.latest = undefined;
      state.windows = null;
      clearTimeout(state.midnight);
      state.midnight = undefined;
    },
    busy: (state) => state.own.size > 0,
  });

  /** Recomputes the value for the latest snapshot and tells watchers if it changed. */
  function publish(counterId: string, state: CounterState): void {
    const latest = state.latest;
    if (latest === undefined) return;
    if (!latest.exists) {
      for (const watcher of state.watchers) publishMissing(counterId, state, watcher);
      return;
    }
    const uncovered = uncoveredDelta(latest.coveredUntil, state.own.values());
    if (uncovered === null) return; // an in-flight call may or may not be in this total: wait for it
    const view: CounterView = { counterId, exists: true, total: latest.total, coveredUntil: latest.coveredUntil, pending: uncovered };
    for (const watcher of state.watchers) {
      watcher.toldMissing = false; // found: a later absence is told again
      if (watcher.window === undefined) tell(watcher, latest.total + uncovered, view);
      else publishWindow(counterId, state, latest, watcher, watcher.window);
    }
  }

  /** A counter that does not exist (missing.ts): 0 and own increments when auto-created, else null, told once from the server. */
  function publishMissing(counterId: string, state: CounterState, watcher: CounterWatcher): void {
    const day = dayOf(deps.now());
    const window = watcher.window;
    const base = { counterId, exists: false, total: 0, coveredUntil: null };
    if (watcher.autoCreated) {
      const pending = autoCreatedValue(window === undefined ? state.own.values() : ownInWindow(state.own.values(), window, day));
      tell(watcher, pending, { ...base, pending, ...(window === undefined ? {} : { window, day, windowTotal: 0 }) });
      return;
    }
    tell(watcher, null, { ...base, pending: 0, ...(window === undefined ? {} : { window, day, windowTotal: null }) });
    if (!state.fromCache) tellMissing(watcher, counterId);
  }

  /**
   * A window's value (windows.ts): the server's window for the client's current UTC day plus the own
   * increments of its span the snapshot does not cover. A counter that is not windowed, or whose windows
   * are unreadable, is shown as null and told to onError once.
   */
  function publishWindow(counterId: string, state: CounterState, latest: CounterSnapshotState, watcher: CounterWatcher, window: WindowName): void {
    const base = { counterId, exists: latest.exists, total: latest.total, coveredUntil: latest.coveredUntil, window };
    const now = deps.now();
    const shown = state.windows === null ? null : windowToShow(state.windows, window, now, latest.coveredUntil, state.own.values());
    if (shown === undefined) return; // an in-flight call may or may not be in this snapshot: wait for it
    if (shown === null || shown.value === null) {
      const problem =
        shown === null
          ? `counters/${counterId} is not a windowed counter (created without windowed: true): it has no window "${window}"`
          : `counters/${counterId} has no readable window "${window}" for ${shown.day} (windows or rollup.days malformed)`;
      if (watcher.problem !== problem) {
        watcher.problem = problem;
        watcher.onError?.(new Error(problem));
      }
      tell(watcher, null, { ...base, pending: 0, day: shown?.day ?? dayOf(now), windowTotal: null });
      return;
    }
    watcher.problem = undefined;
    tell(watcher, shown.value, { ...base, pending: shown.pending, day: shown.day, windowTotal: shown.windowTotal });
  }

  /** Republishes at the client's next UTC midnight (and again each midnight) while a watcher shows a window. */
  function scheduleMidnight(counterId: string, state: CounterState): void {
    if (state.midnight !== undefined || state.unsubscribe === undefined) return;
    if (![...state.watchers].some((watcher) => watcher.window !== undefined)) return;
    // A timer that fires early finds the old day, republishes nothing new and waits the rest.
    state.midnight = setTimeout(() => {
      state.midnight = undefined;
      publish(counterId, state);
      scheduleMidnight(counterId, state);
    }, msUntilNextUtcMidnight(deps.now()));
  }

  function onCounterSnapshot(counterId: string, state: CounterState, snap: DocumentSnapshot): void {
    const counter = registry.readCounter(counterId, state, snap);
    if (counter === undefined) return;
    if (state.latest?.exists === true && !counter.exists) forgetAnswered(state.own);
    state.latest = counter;
    state.fromCache = snap.metadata.fromCache;
    state.windows = counter.exists ? readServerWindows(snap) : null;
    for (const [requestId, own] of state.own) {
      if (own.writeTime !== null && isCovered(counter.coveredUntil, own.writeTime)) state.own.delete(requestId);
    }
    publish(counterId, state);
  }

  async function increment(counterId: string, delta = 1, opts?: { requestId?: string }): Promise<IncrementOutcome> {
    const requestId = opts?.requestId ?? deps.newRequestId();
    // Refused before anything is sent or shown, with the error every other refusal gets.
    const refuse = (code: string, reason: string) => new IncrementError(code, String(counterId), String(requestId), false, { reason });
    const problem = counterIdProblem(counterId) ?? deltaProblem(delta) ?? requestIdProblem(requestId);
    if (problem !== undefined) throw refuse("invalid-argument", problem);
    const state = registry.stateOf(counterId);
    if (state.own.has(requestId)) throw refuse("failed-precondition", `request ${requestId} is already in flight`);
    state.own.set(requestId, { delta, writeTime: null, sentAfter: state.seenUntil });
    publish(counterId, state);

    const result = await retrying(async () => {
      const answer = parseAnswer(await deps.call({ counterId, delta, requestId }));
      // Unexpected, so treated as transient (code "unknown"): the same key makes a retry safe.
      if (answer === null) throw new Error("incrementCounter answered without a writeTime and a shard");
      return answer;
    }, deps.retry);
    if ("error" in result) {
      settle(counterId, state, requestId, null);
      throw new IncrementError(result.code, counterId, requestId, result.maybeApplied, { cause: result.error });
    }
    const { writeTime, shard } = result.value;
    settle(counterId, state, requestId, { delta, writeTime });
    return { counterId, requestId, writeTime, shard, attempts: result.attempts };
  }

  /** Records an answered call (its write time) or takes a failed one's delta back, and republishes. */
  function settle(counterId: string, state: CounterState, requestId: string, answered: OwnIncrement | null): void {
    if (answered === null || (answered.writeTime !== null && isCovered(state.latest?.coveredUntil ?? null, answered.writeTime))) {
      state.own.delete(requestId);
    } else {
      state.own.set(requestId, answered);
    }
    publish(counterId, state);
    registry.forgetIfIdle(counterId, state);
  }

  const watch: Increments["watch"] = (counterId, onValue, onError, options) => {
    const unwatch = registry.watch(counterId, {
      onValue,
      onError,
      last: undefined,
      window: options?.window,
      autoCreated: options?.autoCreated === true,
      toldMissing: false,
      problem: undefined,
    });
    scheduleMidnight(counterId, registry.stateOf(counterId));
    return unwatch;
  };

  return { increment, watch, dispose: registry.dispose };
}

/** delta as increment() can show it and the server accepts it, or why not (the server's words). */
function deltaProblem(delta: unknown): string | undefined {
  if (typeof delta !== "number") return "delta must be a number";
  return Number.isSafeInteger(delta) && delta !== 0 ? undefined : "delta must be a non-zero integer";
}

function requestIdProblem(requestId: unknown): string | undefined {
  return counterIdProblem(requestId)?.replace("counterId", "requestId");
}

/** The fields of an incrementCounter answer the client needs, or null if it does not have them. */
function parseAnswer(data: unknown): { writeTime: Time; shard: number } | null {
  if (typeof data !== "object" || data === null) return null;
  const { writeTime, shard } = data as { writeTime?: unknown; shard?: unknown };
  const time = asTime(writeTime);
  if (time === null || typeof shard !== "number") return null;
  return { writeTime: time, shard };
}

const ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

/**
 * 22 characters of [A-Za-z0-9_-] from `crypto.getRandomValues` (132 random bits). Keys are shared by
 * every user of a counter, so they must not collide: no Math.random fallback. React Native: install
 * `react-native-get-random-values` (it provides `crypto.getRandomValues`) or pass `newRequestId`.
 */
export function randomRequestId(): string {
  const crypto = (globalThis as { crypto?: { getRandomValues?: (array: Uint8Array) => Uint8Array } }).crypto;
  if (crypto?.getRandomValues === undefined) {
    throw new Error("crypto.getRandomValues is not available: install react-native-get-random-values or pass newRequestId");
  }
  const bytes = crypto.getRandomValues(new Uint8Array(22));
  let id = "";
  for (const byte of bytes) id += ID_ALPHABET[byte & 63];
  return id;
}
