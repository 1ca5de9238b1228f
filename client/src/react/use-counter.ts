// useCounter: a counter's value as `watch` shows it (the total, or a window's count, with this client's
// own increments not in it yet: exact and optimistic), and its increment.
import { useCallback, useMemo, useSyncExternalStore } from "react";
import type { CounterClient } from "../client.js";
import type { IncrementOutcome, WatchOptions } from "../increments.js";
import type { WindowName } from "../windows.js";
import { useClient } from "./context.js";
import { optionsProblem, watchStore, type Loaded } from "./store.js";

export interface UseCounterOptions {
  /** Show this window of a windowed counter ("today", "last7Days", "last30Days") instead of its total. */
  window?: WindowName;
  /** The server's AUTO_CREATE makes the counter on its first increment: 0 until then, not an error. */
  autoCreated?: boolean;
  /** The client to use instead of the <CounterClientProvider>'s. */
  client?: CounterClient;
}

export type UseCounterResult = Loaded<{ value: number }> & {
  /** The client's increment (one request id per call, retried): shown at once; its promise settles with the call. */
  increment: (delta?: number) => Promise<IncrementOutcome>;
};

const OPTIONS = ["window", "autoCreated", "client"];

/**
 * `{ status, data: { value }, error, increment }` of `counterId`: "pending" until the counter is first
 * known, then "success" with the value `watch` shows, or "error" (a listener failed; the counter does not
 * exist and `autoCreated` is not set: a CounterNotFoundError; a window of a counter without windows).
 */
export function useCounter(counterId: string, options?: UseCounterOptions): UseCounterResult {
  const client = useClient(`useCounter(${counterId})`, options?.client);
  const problem = optionsProblem(`useCounter(${counterId})`, options, OPTIONS);
  const windowName = options?.window;
  const autoCreated = options?.autoCreated;
  const store = useMemo(
    () =>
      watchStore<{ value: number }>((show, fail) => {
        if (problem !== undefined) throw new TypeError(problem);
        return client.watch(counterId, (value) => show(value === null ? null : { value }), fail, watchOptions(windowName, autoCreated));
      }),
    [client, counterId, windowName, autoCreated, problem],
  );
  const state = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getServerSnapshot);
  const increment = useCallback((delta?: number) => client.increment(counterId, delta), [client, counterId]);
  return useMemo(() => ({ ...state, increment }), [state, increment]);
}

/** The options given, and only those: the client checks their values (and names a bad one). */
function watchOptions(windowName: WindowName | undefined, autoCreated: boolean | undefined): WatchOptions {
  return { ...(windowName !== undefined ? { window: windowName } : {}), ...(autoCreated !== undefined ? { autoCreated } : {}) };
}
