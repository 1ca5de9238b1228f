// @firestore-exact-counter/client/react: hooks over the client's exact optimistic state, for React 18 and
// 19 (web and React Native: no DOM API is used). The client's main entry never loads React.
export { CounterClientProvider, type CounterClientProviderProps } from "./context.js";
export { useCounter, type UseCounterOptions, type UseCounterResult } from "./use-counter.js";
export { useLike, type UseLikeOptions, type UseLikeResult } from "./use-like.js";
export { useRank, type UseRankOptions, type UseRankResult } from "./use-rank.js";
export type { HookStatus, Loaded } from "./store.js";
