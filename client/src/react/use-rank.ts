// useRank: a counter's rank on its leaderboard as `watchRank` shows it (docs/leaderboards.md), live.
import { useMemo, useSyncExternalStore } from "react";
import type { CounterClient } from "../client.js";
import type { RankValue } from "../rank.js";
import { useClient } from "./context.js";
import { optionsProblem, watchStore, type Loaded } from "./store.js";

export interface UseRankOptions {
  /** The client to use instead of the <CounterClientProvider>'s. */
  client?: CounterClient;
}

export type UseRankResult = Loaded<RankValue>;

const OPTIONS = ["client"];

/**
 * `{ status, data: { rank, of, total }, error }` of `counterId`: "pending" until the rank is first known, then
 * "success", or "error" (a listener or a count failed; the counter does not exist: a CounterNotFoundError;
 * it is on no board: a NotOnBoardError).
 */
export function useRank(counterId: string, options?: UseRankOptions): UseRankResult {
  const client = useClient(`useRank(${counterId})`, options?.client);
  const problem = optionsProblem(`useRank(${counterId})`, options, OPTIONS);
  const store = useMemo(
    () =>
      watchStore<RankValue>((show, fail) => {
        if (problem !== undefined) throw new TypeError(problem);
        return client.watchRank(counterId, show, fail);
      }),
    [client, counterId, problem],
  );
  return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getServerSnapshot);
}
