// createCounter: a signed-in caller that CREATE_POLICY admits creates a counter. What the params declare
// per counter id (UNIQUE_COUNTERS, WINDOWED_COUNTERS, COUNTER_KINDS, MIRRORS) is decided here, before anything is written.
import { counterKindFor, createPolicy, mirrorTargetsFor, uniqueCounterPatterns, windowedCounterPatterns } from "../config/read";
import { createCounter as create, newCounterId } from "../counters/create";
import { shardsFor } from "../counters/kinds";
import { uniqueFor } from "../counters/members";
import { reservedFlag } from "../counters/patterns";
import { createCounterInput } from "../counters/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const createCounter = validatedOnCall({
  name: "createCounter",
  schema: createCounterInput,
  // A counter is created by someone: whatever CREATE_POLICY says, and even where ALLOW_UNAUTHENTICATED
  // lets signed-out callers increment, a caller with no user never creates one (docs/api.md).
  signedIn: true,
  policy: createPolicy,
  rateLimited: true,
  handler: (input, { config }) => {
    const db = countersDb();
    // The id is chosen here, not in create.ts, because the patterns and COUNTER_KINDS apply to auto ids too.
    const counterId = input.counterId ?? newCounterId(db);
    const unique = uniqueFor(counterId, input.unique, uniqueCounterPatterns());
    const windowed = reservedFlag("windowed", "WINDOWED_COUNTERS", counterId, input.windowed, windowedCounterPatterns());
    const numShards = shardsFor(counterId, input.numShards, counterKindFor(counterId, config)) ?? config.defaultShards;
    return create(db, counterId, numShards, { unique, windowed, mirrors: mirrorTargetsFor(counterId) });
  },
});
