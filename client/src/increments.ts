// Plain counters in the client: increment() with one idempotency key per call, retried by the client's
// retry policy, and watch(), which shows `total` plus this client's own increments the total does not
// contain yet, exactly (see coverage.ts for the rule and its argument), or, with a window, the same for
// the counter's today / last 7 days / last 30 days (windows.ts), re-evaluated at each UTC midnight. This
// file holds the listeners, the calls and the midnight timer; what they change and what a watcher is shown
// is increments-state.ts's, pure.
import { doc, onSnapshot, type Firestore } from "firebase/firestore";
import { asTime, type Time } from "./coverage.js";
import { counterIdProblem, IncrementError } from "./failure.js";
import { freshCounterState, settleOwn, shownTo, takeSnapshot, type CounterState, type CounterView, type CounterWatcher } from "./increments-state.js";
import { tellMissing } from "./missing.js";
import { createRegistry, tell, type Listening } from "./registry.js";
import { retrying, type RetryPolicy } from "./retry.js";
import { msUntilNextUtcMidnight, type WindowName } from "./windows.js";

export { IncrementError } from "./failure.js";
export type { CounterView } from "./increments-state.js";

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
  /** The registry's count of open listeners and their watchers. */
  listening: () => Listening;
}

export function createIncrements(deps: IncrementsDeps): Increments {
  const registry = createRegistry<CounterWatcher, CounterState>({
    create: freshCounterState,
    listen: (counterId, state): (() => void) =>
      onSnapshot(
        doc(deps.firestore, "counters", counterId),
        // With metadata changes: a counter missing from the cache is told missing once the server says so.
        { includeMetadataChanges: true },
        (snap) => {
          const counter = registry.readCounter(counterId, state, snap);
          if (counter === undefined) return;
          takeSnapshot(state, counter, snap);
          publish(counterId, state);
        },
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

  /** Tells each watcher what increments-state.ts says it is to be shown now, if it changed. */
  function publish(counterId: string, state: CounterState): void {
    for (const watcher of state.watchers) {
      const shown = shownTo(counterId, state, watcher, deps.now);
      if (shown === undefined) continue;
      if (shown.found) watcher.toldMissing = false; // found: a later absence is told again
      if (shown.problem === null) watcher.problem = undefined;
      else if (shown.problem !== undefined && watcher.problem !== shown.problem) {
        watcher.problem = shown.problem;
        watcher.onError?.(new Error(shown.problem));
      }
      if (shown.told !== undefined) tell(watcher, shown.told.value, shown.told.view);
      if (shown.missing === true) tellMissing(watcher, counterId);
    }
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
    // An answered call is shown until a snapshot covers its write time; a failed one's delta is taken back.
    settleOwn(state, requestId, "error" in result ? null : { delta, writeTime: result.value.writeTime });
    publish(counterId, state);
    registry.forgetIfIdle(counterId, state);
    if ("error" in result) throw new IncrementError(result.code, counterId, requestId, result.maybeApplied, { cause: result.error });
    return { counterId, requestId, writeTime: result.value.writeTime, shard: result.value.shard, attempts: result.attempts };
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

  return { increment, watch, dispose: registry.dispose, listening: registry.listening };
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
