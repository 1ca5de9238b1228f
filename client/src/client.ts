// The app-side client: one object with increment() and watch() for counters (increments.ts),
// setMember() and watchMember() for unique counters (membership.ts), over the client's one retry policy
// (retry.ts), and rank() and watchRank() for counters on a leaderboard (rank.ts). It checks what a caller passes before anything is sent or listened to.
import { httpsCallable, type Functions } from "firebase/functions";
import type { Firestore } from "firebase/firestore";
import { counterIdProblem } from "./failure.js";
import { createIncrements, randomRequestId, type CounterView, type IncrementOutcome, type IncrementRequest, type WatchOptions } from "./increments.js";
import { createMembership, SetMemberError, type MemberView, type SetMemberOutcome, type SetMemberRequest, type WatchMemberOptions } from "./membership.js";
import { attachInternals } from "./internals.js";
import { retryPolicy } from "./retry.js";
import { createRanks, type RankValue } from "./rank.js";
import { isWindowName } from "./windows.js";

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
  /** The clock, in ms since the epoch (default Date.now): the UTC day a watched window ends at. */
  now?: () => number;
}

export interface CounterClient {
  /**
   * Adds `delta` (default 1) to the counter, once. Watchers show it at once; the call is retried with the
   * same request id on transient failures. Rejects with an `IncrementError` on a permanent failure
   * or when attempts run out; watchers then stop showing the delta.
   * Pass `requestId` only to resume an action whose outcome is unknown (`error.maybeApplied`).
   */
  increment(counterId: string, delta?: number, options?: { requestId?: string }): Promise<IncrementOutcome>;
  /**
   * Calls `onValue` with the number to show: the server `total` plus this client's own increments not in
   * it yet, never counting one twice or missing one. With `options.window` ("today", "last7Days",
   * "last30Days"; windowed counters only): that window for the client's current UTC day, exact the same
   * way, re-evaluated at each UTC midnight; `view.window` and `view.day` say which. A counter that does
   * not exist is `null`, told to `onError` as a {@link CounterNotFoundError} (the watch goes on: a counter
   * created later shows at once); with `options.autoCreated` (ids the server's AUTO_CREATE creates on
   * their first increment) it is 0 plus this client's own increments instead. Returns the unsubscribe
   * function.
   */
  watch(
    counterId: string,
    onValue: (value: number | null, view: CounterView) => void,
    onError?: (error: Error) => void,
    options?: WatchOptions,
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
   * from the server that tells the count. A counter that does not exist is `null` and told to `onError`
   * (a {@link CounterNotFoundError}), or, with `options.autoCreated` (AUTO_CREATE makes it on its first
   * like), 0 plus this user's like. Returns the unsubscribe function.
   */
  watchMember(
    counterId: string,
    uid: string,
    onValue: (value: number | null, view: MemberView) => void,
    onError?: (error: Error) => void,
    options?: WatchMemberOptions,
  ): () => void;
  /**
   * The counter's rank on its leaderboard (LEADERBOARDS): `{ rank, of, total }`, rank being 1 + the counters of
   * the board whose total is greater (ties share a rank), of the `of` counters on it. 2 document reads and at
   * most one count(). Rejects with a {@link CounterNotFoundError} for a counter that does not exist, and a
   * {@link NotOnBoardError} for one on no board.
   */
  rank(counterId: string): Promise<RankValue>;
  /**
   * Calls `onValue` with the counter's rank as it changes (its total moved, or another counter of its board):
   * exact once the rollup settles, and at most about one interval behind. `null` while there is none to show,
   * told to `onError` (a {@link CounterNotFoundError}, once per absence; a {@link NotOnBoardError}). Each change
   * costs a count() (and the read of what changed). Returns the unsubscribe function.
   */
  watchRank(counterId: string, onValue: (value: RankValue | null) => void, onError?: (error: Error) => void): () => void;
  /** Stops every watch. Increments and setMember calls already started still finish. */
  dispose(): void;
}

export function createCounterClient(options: CounterClientOptions): CounterClient {
  const retry = retryPolicy(options);
  const incrementCallable = httpsCallable<IncrementRequest, unknown>(options.functions, "incrementCounter");
  const increments = createIncrements({
    firestore: options.firestore,
    call: options.call ?? (async (request: IncrementRequest) => (await incrementCallable(request)).data),
    retry,
    newRequestId: options.newRequestId ?? randomRequestId,
    now: options.now ?? (() => Date.now()),
  });
  const setMemberCallable = httpsCallable<SetMemberRequest, unknown>(options.functions, "setMember");
  const membership = createMembership({
    firestore: options.firestore,
    call: options.callSetMember ?? (async (request: SetMemberRequest) => (await setMemberCallable(request)).data),
    retry,
  });

  const watch: CounterClient["watch"] = (counterId, onValue, onError, watchOptions) => {
    checkWatchArguments(counterId, onValue, onError);
    checkWatchOptions(watchOptions);
    return increments.watch(counterId, onValue, onError, watchOptions);
  };

  async function setMember(counterId: string, member: boolean): Promise<SetMemberOutcome> {
    const problem = counterIdProblem(counterId) ?? (typeof member === "boolean" ? undefined : "member must be a boolean");
    if (problem !== undefined) throw new SetMemberError("invalid-argument", String(counterId), member, false, { reason: problem });
    return membership.setMember(counterId, member);
  }

  const watchMember: CounterClient["watchMember"] = (counterId, uid, onValue, onError, memberOptions) => {
    checkWatchArguments(counterId, onValue, onError);
    if (typeof uid !== "string" || uid === "" || uid.includes("/")) throw new TypeError("uid must be the signed-in user's uid (a non-empty string without /)");
    checkOptions(memberOptions, ["autoCreated"]);
    return membership.watchMember(counterId, uid, onValue, onError, memberOptions);
  };

  const ranks = createRanks(options.firestore);

  async function rank(counterId: string): Promise<RankValue> {
    const problem = counterIdProblem(counterId);
    if (problem !== undefined) throw new TypeError(problem);
    return ranks.rank(counterId);
  }

  const watchRank: CounterClient["watchRank"] = (counterId, onValue, onError) => {
    checkWatchArguments(counterId, onValue, onError);
    return ranks.watchRank(counterId, onValue, onError);
  };

  function dispose(): void {
    increments.dispose();
    membership.dispose();
    ranks.dispose();
  }

  const client: CounterClient = { increment: increments.increment, watch, setMember, watchMember, rank, watchRank, dispose };
  return attachInternals(client, {
    firestore: options.firestore,
    functions: options.functions,
    listening: () => ({ watch: increments.listening(), watchMember: membership.listening() }),
    listeningRanks: () => ranks.listening(),
  });
}

/** A watch with a bad argument is a programming error, thrown at once (nothing is listened to). */
function checkWatchArguments(counterId: unknown, onValue: unknown, onError: unknown): void {
  const problem = counterIdProblem(counterId);
  if (problem !== undefined) throw new TypeError(problem);
  if (typeof onValue !== "function") throw new TypeError("onValue must be a function");
  if (onError !== undefined && typeof onError !== "function") throw new TypeError("onError must be a function or undefined");
}

function checkWatchOptions(options: unknown): void {
  checkOptions(options, ["window", "autoCreated"]);
  const { window } = (options ?? {}) as { window?: unknown };
  if (window !== undefined && !isWindowName(window)) throw new TypeError('options.window must be "today", "last7Days" or "last30Days"');
}

/** A watch's options: an object of the known keys, `autoCreated` a boolean. */
function checkOptions(options: unknown, keys: string[]): void {
  if (options === undefined) return;
  if (typeof options !== "object" || options === null) throw new TypeError("options must be an object or undefined");
  const unknown = Object.keys(options).find((key) => !keys.includes(key));
  if (unknown !== undefined) throw new TypeError(`options.${unknown.slice(0, 32)} is not an option (the options are ${keys.join(", ")})`);
  const { autoCreated } = options as { autoCreated?: unknown };
  if (autoCreated !== undefined && typeof autoCreated !== "boolean") throw new TypeError("options.autoCreated must be a boolean");
}
