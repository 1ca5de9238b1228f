// incrementCounter: adds a delta (within the counter's kind, COUNTER_KINDS: its maxDelta, and its callers,
// counters/client-calls.ts) to a plain counter; a missing one that AUTO_CREATE names creates itself first
// (counters/operations.ts).
import { clientIncrement } from "../counters/client-calls";
import { incrementCounterInput } from "../model/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const incrementCounter = validatedOnCall({
  name: "incrementCounter",
  schema: incrementCounterInput,
  rateLimited: true,
  handler: (input, { settings }) => clientIncrement(countersDb(), settings, input),
});
