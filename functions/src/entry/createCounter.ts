// createCounter: a signed-in caller that CREATE_POLICY admits creates a counter, of the shape the params
// declare for its id (UNIQUE_COUNTERS, WINDOWED_COUNTERS, COUNTER_KINDS, MIRRORS: counters/operations.ts),
// unless COUNTER_KINDS leaves its creation to the app's own functions (callers:none, counters/client-calls.ts).
import { clientCreate } from "../counters/client-calls";
import { createCounterInput } from "../model/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const createCounter = validatedOnCall({
  name: "createCounter",
  schema: createCounterInput,
  // A counter is created by someone: whatever CREATE_POLICY says, and even where ALLOW_UNAUTHENTICATED
  // lets signed-out callers increment, a caller with no user never creates one (docs/api.md).
  signedIn: true,
  policy: (settings) => settings.createPolicy(),
  rateLimited: true,
  handler: (input, { settings }) => clientCreate(countersDb(), settings, input),
});
