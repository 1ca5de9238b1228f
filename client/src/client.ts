// The app-side client: increment() with one idempotency key per call and safe retries, and watch(),
// which shows `total` plus this client's own increments the total does not contain yet, exactly
// (see coverage.ts for the rule and its argument).
import { doc, onSnapshot, type DocumentSnapshot, type Firestore } from "firebase/firestore";
import { httpsCallable, type Functions } from "firebase/functions";
import { asTime, isCovered, readCounterSnapshot, uncoveredDelta, type OwnIncrement, type Time } from "./coverage.js";
import { counterIdProblem, failureMessage, reasonOf } from "./failure.js";
import { createMembership, SetMemberError, type MemberView, type SetMemberOutcome, type SetMemberRequest } from "./membership.js";

/** The data `incrementCounter` receives. */
export interface IncrementRequest {
  counterId: string;
  delta: number;
  requestId: string;
}

export interface CounterClientOptions {
  /** Where `incrementCounter` is served: `getFunctions(app, REGION)`. */
  functions: Functions;
  /** The counters' database: `getFirestore(app)` (or the named database). */
  firestore: Firestore;
  /**
   * Sends one `incrementCounter` call and resolves with the response data. Default:
   * `httpsCallable(functions, "incrementCounter")`. Tests wrap it to lose responses.
   */
  call?: (request: IncrementRequest) => Promise<unknown>;
  /** Sends one `setMember` call (default: `httpsCallable(functions, "setMember")`). Tests wrap it. */
  callSetMember?: (request: SetMemberRequest) => Promise<unknown>;
  /** Attempts per increment, the first included (default 8). */
  maxAttempts?: number;
  /** Backoff before retry n (1-based) is up to `min(maxDelayMs, baseDelayMs * 2^(n-1))` (defaults 250, 8000). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Waits between attempts (default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1) (default Math.random). Not used for request ids. */
  random?: () => number;
  /** Makes a request id (default: 22 crypto-random characters of [A-Za-z0-9_-]). */
  newRequestId?: () => string;
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

export interface CounterClient {
  /**
   * Adds `delta` (default 1) to the counter, once. Watchers show it at once; the call is retried with the
   * same request id on transient failures. Rejects with an {@link IncrementError} on a permanent failure
   * or when attempts run out; watchers then stop showing the delta.
   * Pass `requestId` only to resume an action whose outcome is unknown (`error.maybeApplied`).
   */
  increment(counterId: string, delta?: number, options?: { requestId?: string }): Promise<IncrementOutcome>;
  /**
   * Calls `onValue` with the number to show: the server `total` plus this client's own increments not in
   * it yet, never counting one twice or missing one. Returns the unsubscribe function.
   */
  watch(
    counterId: string,
    onValue: (value: number | null, view: CounterView) => void,
    onError?: (error: Error) => void,
  ): () => void;
  /**
   * Unique counters (likes): makes the signed-in user a member (`true`) or not (`false`). Watchers of
   * `watchMember` show it at once. Calls for one counter go out one at a time, so the last one decides;
   * transient failures are retried like increments (setMember is idempotent: no request id needed).
   * Rejects with a {@link SetMemberError} on a refusal or when attempts run out; watchers then go back.
   */
  setMember(counterId: string, member: boolean): Promise<SetMemberOutcome>;
  /**
   * Calls `onValue` with the count to show and `view.member`, the user's membership to show ("you like
   * this"), both updated at once on a tap and exact by the coverage rule (member-coverage.ts). `uid` is
   * the signed-in user's: their `counters/{counterId}/memberships/{uid}` (membership record) and
   * `members/{uid}` are listened to with the counter. Nothing is called before a snapshot of the three
   * from the server that tells the count. Returns the unsubscribe function.
   */
  watchMember(
    counterId: string,
    uid: string,
    onValue: (value: number | null, view: MemberView) => void,
    onError?: (error: Error) => void,
  ): () => void;
  /** Stops every watch. Increments and setMember calls already started still finish. */
  dispose(): void;
}

/**
 * Codes retried with the same request id. `internal` is included: the JS SDK reports a network failure as
 * `internal`, and the server reports unexpected (often transient) errors so. `unknown` is also what a
 * rejection without a callable code (or an answer without a writeTime) counts as. A retry is safe
 * because the request id makes it idempotent. Everything else is a refusal: invalid-argument, not-found,
 * permission-denied, unauthenticated, failed-precondition, already-exists, out-of-range, unimplemented,
 * cancelled, data-loss.
 */
export const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  "unavailable",
  "deadline-exceeded",
  "resource-exhausted",
  "aborted",
  "internal",
  "unknown",
]);

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

interface Watcher {
  onValue: (value: number | null, view: CounterView) => void;
  onError: ((error: Error) => void) | undefined;
  last: string | undefined;
}

/** What the client knows about one counter. */
interface CounterState {
  own: Map<string, OwnIncrement>;
  /** The newest coveredUntil of any snapshot received (the bound in-flight calls are sent after). */
  seenUntil: Time | null;
  latest: { exists: boolean; total: number; coveredUntil: Time | null } | undefined;
  watchers: Set<Watcher>;
  unsubscribe: (() => void) | undefined;
}

export function createCounterClient(options: CounterClientOptions): CounterClient {
  const callable = httpsCallable<IncrementRequest, unknown>(options.functions, "incrementCounter");
  const call = options.call ?? (async (request: IncrementRequest) => (await callable(request)).data);
  const maxAttempts = options.maxAttempts ?? 8;
  const baseDelayMs = options.baseDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 8_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const newRequestId = options.newRequestId ?? randomRequestId;
  const counters = new Map<string, CounterState>();
  const setMemberCallable = httpsCallable<SetMemberRequest, unknown>(options.functions, "setMember");
  const membership = createMembership({
    firestore: options.firestore,
    call: options.callSetMember ?? (async (request: SetMemberRequest) => (await setMemberCallable(request)).data),
    retry: (attempt) => retrying(attempt, { maxAttempts, baseDelayMs, maxDelayMs, sleep, random }),
  });

  function stateOf(counterId: string): CounterState {
    let state = counters.get(counterId);
    if (state === undefined) {
      state = { own: new Map(), seenUntil: null, latest: undefined, watchers: new Set(), unsubscribe: undefined };
      counters.set(counterId, state);
    }
    return state;
  }

  function forgetIfIdle(counterId: string, state: CounterState): void {
    if (state.watchers.size === 0 && state.own.size === 0) counters.delete(counterId);
  }

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
    const key = JSON.stringify(view);
    for (const watcher of state.watchers) {
      if (watcher.last === key) continue;
      watcher.last = key;
      watcher.onValue(value, view);
    }
  }

  function onCounterSnapshot(counterId: string, state: CounterState, snap: DocumentSnapshot): void {
    const read = readCounterSnapshot(snap, state.seenUntil);
    if (read.kind === "malformed") {
      for (const watcher of state.watchers) watcher.onError?.(new Error(`counters/${counterId} has no integer total`));
      return;
    }
    if (read.kind === "stale") return;
    state.seenUntil = read.seenUntil;
    state.latest = read.state;
    for (const [requestId, own] of state.own) {
      if (own.writeTime !== null && isCovered(read.state.coveredUntil, own.writeTime)) state.own.delete(requestId);
    }
    publish(counterId, state);
  }

  async function increment(counterId: string, delta = 1, opts?: { requestId?: string }): Promise<IncrementOutcome> {
    const requestId = opts?.requestId ?? newRequestId();
    // Refused before anything is sent or shown, with the error every other refusal gets.
    const refuse = (code: string, reason: string) => new IncrementError(code, String(counterId), String(requestId), false, { reason });
    const problem = counterIdProblem(counterId) ?? deltaProblem(delta) ?? requestIdProblem(requestId);
    if (problem !== undefined) throw refuse("invalid-argument", problem);
    const state = stateOf(counterId);
    if (state.own.has(requestId)) throw refuse("failed-precondition", `request ${requestId} is already in flight`);
    state.own.set(requestId, { delta, writeTime: null, sentAfter: state.seenUntil });
    publish(counterId, state);

    let mayHaveApplied = false;
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = parseAnswer(await call({ counterId, delta, requestId }));
        // Unexpected, so treated as transient (code "unknown"): the same key makes a retry safe.
        if (answer === null) throw new Error("incrementCounter answered without a writeTime and a shard");
        settle(counterId, state, requestId, { delta, writeTime: answer.writeTime });
        return { counterId, requestId, writeTime: answer.writeTime, shard: answer.shard, attempts: attempt };
      } catch (error) {
        if (error instanceof IncrementError) throw error;
        const code = codeOf(error);
        const transient = TRANSIENT_CODES.has(code);
        if (transient && attempt < maxAttempts) {
          mayHaveApplied = true;
          const capMs = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
          await sleep(capMs / 2 + (random() * capMs) / 2);
          continue;
        }
        settle(counterId, state, requestId, null);
        throw new IncrementError(code, counterId, requestId, mayHaveApplied || transient, { cause: error });
      }
    }
  }

  /** Records an answered call (its write time) or takes a failed one's delta back, and republishes. */
  function settle(counterId: string, state: CounterState, requestId: string, answered: OwnIncrement | null): void {
    if (answered === null || (answered.writeTime !== null && isCovered(state.latest?.coveredUntil ?? null, answered.writeTime))) {
      state.own.delete(requestId);
    } else {
      state.own.set(requestId, answered);
    }
    publish(counterId, state);
    forgetIfIdle(counterId, state);
  }

  /** The last watcher is gone: stop the listener. Keep seenUntil and own increments while calls are in flight; drop the rest. */
  function stopListening(counterId: string, state: CounterState): void {
    state.unsubscribe?.();
    state.unsubscribe = undefined;
    state.latest = undefined;
    forgetIfIdle(counterId, state);
  }

  function watch(
    counterId: string,
    onValue: (value: number | null, view: CounterView) => void,
    onError?: (error: Error) => void,
  ): () => void {
    checkWatchArguments(counterId, onValue, onError);
    const state = stateOf(counterId);
    const watcher: Watcher = { onValue, onError, last: undefined };
    state.watchers.add(watcher);
    if (state.unsubscribe === undefined) {
      state.unsubscribe = onSnapshot(
        doc(options.firestore, "counters", counterId),
        (snap) => onCounterSnapshot(counterId, state, snap),
        (error) => {
          for (const w of state.watchers) w.onError?.(error);
        },
      );
    } else {
      publish(counterId, state); // a second watcher gets the current value at once
    }
    return () => {
      if (!state.watchers.delete(watcher)) return;
      if (state.watchers.size === 0) stopListening(counterId, state);
    };
  }

  function dispose(): void {
    for (const [counterId, state] of counters) {
      state.watchers.clear();
      stopListening(counterId, state);
    }
    membership.dispose();
  }

  async function setMember(counterId: string, member: boolean): Promise<SetMemberOutcome> {
    const problem = counterIdProblem(counterId) ?? (typeof member === "boolean" ? undefined : "member must be a boolean");
    if (problem !== undefined) throw new SetMemberError("invalid-argument", String(counterId), member, false, { reason: problem });
    return membership.setMember(counterId, member);
  }

  const watchMember: CounterClient["watchMember"] = (counterId, uid, onValue, onError) => {
    checkWatchArguments(counterId, onValue, onError);
    if (typeof uid !== "string" || uid === "" || uid.includes("/")) throw new TypeError("uid must be the signed-in user's uid (a non-empty string without /)");
    return membership.watchMember(counterId, uid, onValue, onError);
  };

  return { increment, watch, setMember, watchMember, dispose };
}

/** delta as increment() can show it and the server accepts it, or why not (the server's words). */
function deltaProblem(delta: unknown): string | undefined {
  if (typeof delta !== "number") return "delta must be a number";
  return Number.isSafeInteger(delta) && delta !== 0 ? undefined : "delta must be a non-zero integer";
}

function requestIdProblem(requestId: unknown): string | undefined {
  return counterIdProblem(requestId)?.replace("counterId", "requestId");
}

/** A watch with a bad argument is a programming error, thrown at once (nothing is listened to). */
function checkWatchArguments(counterId: unknown, onValue: unknown, onError: unknown): void {
  const problem = counterIdProblem(counterId);
  if (problem !== undefined) throw new TypeError(problem);
  if (typeof onValue !== "function") throw new TypeError("onValue must be a function");
  if (onError !== undefined && typeof onError !== "function") throw new TypeError("onError must be a function or undefined");
}

/**
 * The retry policy of increment(), for calls that are safe to repeat: transient codes are retried with
 * equal-jitter exponential backoff; anything else, or the last attempt's failure, is the outcome.
 * `maybeApplied`: a transient failure happened, so an attempt may have reached the server.
 */
async function retrying<T>(
  attempt: () => Promise<T>,
  policy: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number; sleep: (ms: number) => Promise<void>; random: () => number },
): Promise<{ value: T; attempts: number } | { error: unknown; code: string; maybeApplied: boolean }> {
  let transientSeen = false;
  for (let n = 1; ; n++) {
    try {
      return { value: await attempt(), attempts: n };
    } catch (error) {
      const code = codeOf(error);
      const transient = TRANSIENT_CODES.has(code);
      if (transient && n < policy.maxAttempts) {
        transientSeen = true;
        const capMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
        await policy.sleep(capMs / 2 + (policy.random() * capMs) / 2);
        continue;
      }
      return { error, code, maybeApplied: transientSeen || transient };
    }
  }
}

/** The fields of an incrementCounter answer the client needs, or null if it does not have them. */
function parseAnswer(data: unknown): { writeTime: Time; shard: number } | null {
  if (typeof data !== "object" || data === null) return null;
  const { writeTime, shard } = data as { writeTime?: unknown; shard?: unknown };
  const time = asTime(writeTime);
  if (time === null || typeof shard !== "number") return null;
  return { writeTime: time, shard };
}

/** The callable error code of a rejection ("functions/not-found" → "not-found"); "unknown" if none. */
function codeOf(error: unknown): string {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code.replace(/^functions\//, "") : "unknown";
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
