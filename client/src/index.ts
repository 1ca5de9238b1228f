// @firestore-exact-counter/client: increment with safe retries, watch with exact optimistic totals.
export {
  createCounterClient,
  IncrementError,
  randomRequestId,
  TRANSIENT_CODES,
  type CounterClient,
  type CounterClientOptions,
  type CounterView,
  type IncrementOutcome,
  type IncrementRequest,
} from "./client.js";
export { compareTimes, isCovered, uncoveredDelta, type OwnIncrement, type Time } from "./coverage.js";
