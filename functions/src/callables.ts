// The callable functions: each one names its input schema and delegates to the counter store (or, for
// membership of unique counters, to counters/members.ts). What the params declare per counter id
// (UNIQUE_COUNTERS, COUNTER_KINDS) is decided here, before the store writes anything.
import { validatedOnCall } from "./callable";
import { counterKindFor, createPolicy, mirrorTargetsFor, uniqueCounterPatterns } from "./config";
import { countersDb } from "./firestore";
import {
  counterOnlyInput,
  createCounterInput,
  incrementCounterInput,
  reshardCounterInput,
  setMemberInput,
} from "./counters/schema";
import * as kinds from "./counters/kinds";
import * as members from "./counters/members";
import * as store from "./counters/store";

export const createCounter = validatedOnCall({
  name: "createCounter",
  schema: createCounterInput,
  // A counter is created by someone: whatever CREATE_POLICY says, and even where ALLOW_UNAUTHENTICATED
  // lets signed-out callers increment, a caller with no user never creates one (DESIGN.md).
  signedIn: true,
  policy: createPolicy,
  rateLimited: true,
  handler: (input, { config }) => {
    const db = countersDb();
    // The id is chosen here, not in the store, because UNIQUE_COUNTERS and COUNTER_KINDS apply to auto ids too.
    const counterId = input.counterId ?? store.newCounterId(db);
    const unique = members.uniqueFor(counterId, input.unique, uniqueCounterPatterns());
    const numShards = kinds.shardsFor(counterId, input.numShards, counterKindFor(counterId, config)) ?? config.defaultShards;
    return store.createCounter(db, counterId, numShards, { unique, mirrors: mirrorTargetsFor(counterId) });
  },
});

export const incrementCounter = validatedOnCall({
  name: "incrementCounter",
  schema: incrementCounterInput,
  rateLimited: true,
  handler: (input, { config }) => {
    const delta = input.delta ?? 1;
    kinds.checkDelta(input.counterId, delta, counterKindFor(input.counterId, config));
    return store.incrementCounter(countersDb(), input.counterId, delta, {
      requestId: input.requestId,
      requestTtlMs: config.requestTtlMs,
    });
  },
});

export const setMember = validatedOnCall({
  name: "setMember",
  schema: setMemberInput,
  signedIn: true,
  rateLimited: true,
  handler: (input, { uid }) => {
    if (uid === null) throw new Error("setMember ran without a signed-in user"); // validatedOnCall refuses that first
    return members.setMember(countersDb(), input.counterId, uid, input.member);
  },
});

export const resetCounter = validatedOnCall({
  name: "resetCounter",
  schema: counterOnlyInput,
  admin: true,
  handler: (input) => store.resetCounter(countersDb(), input.counterId, { mirrors: mirrorTargetsFor(input.counterId) }),
});

// Not bound by COUNTER_KINDS: an admin may reshard a counter of a declared kind (a hot one, say).
export const reshardCounter = validatedOnCall({
  name: "reshardCounter",
  schema: reshardCounterInput,
  admin: true,
  handler: (input) => store.reshardCounter(countersDb(), input.counterId, input.numShards),
});

export const deleteCounter = validatedOnCall({
  name: "deleteCounter",
  schema: counterOnlyInput,
  admin: true,
  handler: (input) => store.deleteCounter(countersDb(), input.counterId, { mirrors: mirrorTargetsFor(input.counterId) }),
});
