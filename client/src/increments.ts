// Plain counters in the client: increment() with one idempotency key per call, retried by the client's
// retry policy, and watch(), which shows `total` plus this client's own increments the total does not
// contain yet, exactly (see coverage.ts for the rule and its argument).
import { doc, onSnapshot, type DocumentSnapshot, type Firestore } from "firebase/firestore";
import { asTime, isCovered, uncoveredDelta, type CounterSnapshotState, type OwnIncrement, type Time } from "./coverage.js";
import { counterIdProblem, failureMessage, reasonOf } from "./failure.js";
import { createRegistry, tell, type Watcher } from "./registry.js";
import { retrying, type RetryPolicy } from "./retry.js";

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
  /** value − total: this client's increments not in `total` yet. */
  pending: number;
}

/** An increment that did not succeed. */
export class IncrementError extends Error {
  constructor(
    /** The callable error code without the "functions/" prefix ("not-found", …), or "unknown". */
    readonly code: string,
    readonly counterId: string,
    /** Send it again with `increment(counterId, delta, { requestId })` to settle a `maybeApplied` outcome. */
    readonly requestId: string,
    /**
     * True when an attempt may have applied the delta although no answer said so (a transient failure
     * came first, or attempts ran out). The counter's total then shows whether it did.
     */
    readonly maybeApplied: boolean,
    /** `cause`: the last rejection, whose message (the server's) the message repeats; `reason`: the client's own. */
    options?: { cause?: unknown; reason?: string },
  ) {
    super(failureMessage(`incrementCounter(${counterId})`, code, options?.reason ?? reasonOf(options?.cause)), { cause: options?.cause });
    this.name = "IncrementError";
  }
}

export interface IncrementsDeps {
  firestore: Firestore;
  call: (request: IncrementRequest) => Promise<unknown>;
  retry: RetryPolicy;
  newRequestId: () => string;
}

type CounterWatcher = Watcher<CounterView>;

/** What the client knows about one counter. */
interface CounterState {
  own: Map<string, OwnIncrement>;
  /** The newest coveredUntil of any snapshot received (the bound in-flight calls are sent after). */
  seenUntil: Time | null;
  latest: CounterSnapshotState | undefined;
  watchers: Set<CounterWatcher>;
  unsubscribe: (() => void) | undefined;
}

export interface Increments {
  increment: (counterId: string, delta?: number, options?: { requestId?: string }) => Promise<IncrementOutcome>;
  /** Arguments are checked by the caller. */
  watch: (counterId: string, onValue: (value: number | null, view: CounterView) => void, onError?: (error: Error) => void) => () => void;
  dispose: () => void;
}

export function createIncrements(deps: IncrementsDeps): Increments {
  const registry = createRegistry<CounterWatcher, CounterState>({
    create: () => ({ own: new Map(), seenUntil: null, latest: undefined, watchers: new Set(), unsubscribe: undefined }),
    listen: (counterId, state): (() => void) =>
      onSnapshot(
        doc(deps.firestore, "counters", counterId),
        (snap) => onCounterSnapshot(counterId, state, snap),
        (error) => registry.fail(state, error),
      ),
    publish,
    // Keep seenUntil and own increments while calls are in flight; drop the rest.
    stopped: (state) => {
      state.latest = undefined;
    },
    busy: (state) => state.own.size > 0,
  });

  /** Recomputes the value for the latest snapshot and tells watchers if it changed. */
  function publish(counterId: string, state: CounterState): void {
    const latest = state.latest;
    if (latest === undefined) return;
    let value: number | null = null;
    let pending = 0;
    if (latest.exists) {
      const uncovered = uncoveredDelta(latest.coveredUntil, state.own.values());
      if (uncovered === null) return; // an in-flight call may or may not be in this total: wait for it
      pending = uncovered;
      value = latest.total + uncovered;
    }
    const view: CounterView = { counterId, exists: latest.exists, total: latest.total, coveredUntil: latest.coveredUntil, pending };
    for (const watcher of state.watchers) tell(watcher, value, view);
  }

  function onCounterSnapshot(counterId: string, state: CounterState, snap: DocumentSnapshot): void {
    const counter = registry.readCounter(counterId, state, snap);
    if (counter === undefined) return;
    state.latest = counter;
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

  const watch: Increments["watch"] = (counterId, onValue, onError) => registry.watch(counterId, { onValue, onError, last: undefined });

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
