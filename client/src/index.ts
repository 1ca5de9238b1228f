// @firestore-exact-counter/client: increment with safe retries, watch with exact optimistic totals,
// setMember/watchMember for unique counters (likes), and rank/watchRank for counters on a leaderboard.
// Exactly what docs/app.md documents ("What the package exports"); the coverage rule's own functions stay
// inside the package. React and React Native hooks: @firestore-exact-counter/client/react (react/index.ts).
export { createCounterClient, type CounterClient, type CounterClientOptions } from "./client.js";
export { IncrementError, type CounterView, type IncrementOutcome, type IncrementRequest, type WatchOptions } from "./increments.js";
export { CounterNotFoundError } from "./missing.js";
export { NotOnBoardError, type RankValue } from "./rank.js";
export {
  SetMemberError,
  SignInRequiredError,
  type MemberView,
  type WatchMemberOptions,
  type SetMemberOutcome,
  type SetMemberRequest,
} from "./membership.js";
export { type WindowName } from "./windows.js";
export { type Time } from "./coverage.js";
