// @firestore-exact-counter/client: increment with safe retries, watch with exact optimistic totals, and
// setMember/watchMember for unique counters (likes).
export { createCounterClient, type CounterClient, type CounterClientOptions } from "./client.js";
export {
  IncrementError,
  randomRequestId,
  type CounterView,
  type IncrementOutcome,
  type IncrementRequest,
  type WatchOptions,
} from "./increments.js";
export { type WindowName } from "./windows.js";
export { TRANSIENT_CODES } from "./retry.js";
export { CounterNotFoundError } from "./missing.js";
export {
  SetMemberError,
  SignInRequiredError,
  type MemberView,
  type WatchMemberOptions,
  type SetMemberOutcome,
  type SetMemberRequest,
} from "./membership.js";
export {
  basisOf,
  holds,
  memberValue,
  membershipAt,
  serverMember,
  shownMember,
  type Basis,
  type MemberCut,
  type MembershipRecord,
  type MemberValue,
  type OwnChange,
  type PendingCall,
} from "./member-coverage.js";
export { compareTimes, isCovered, uncoveredDelta, type OwnIncrement, type Time } from "./coverage.js";
