// The callable functions: each one names its input schema and delegates to the counter store.
import { validatedOnCall } from "./callable";
import { countersDb } from "./firestore";
import { counterOnlyInput, createCounterInput, incrementCounterInput, reshardCounterInput } from "./counters/schema";
import * as store from "./counters/store";

export const createCounter = validatedOnCall({
  name: "createCounter",
  schema: createCounterInput,
  handler: (input, { config }) =>
    store.createCounter(countersDb(), input.counterId, input.numShards ?? config.defaultShards),
});

export const incrementCounter = validatedOnCall({
  name: "incrementCounter",
  schema: incrementCounterInput,
  handler: (input, { config }) =>
    store.incrementCounter(countersDb(), input.counterId, input.delta ?? 1, {
      requestId: input.requestId,
      requestTtlMs: config.requestTtlMs,
    }),
});

export const resetCounter = validatedOnCall({
  name: "resetCounter",
  schema: counterOnlyInput,
  admin: true,
  handler: (input) => store.resetCounter(countersDb(), input.counterId),
});

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
  handler: (input) => store.deleteCounter(countersDb(), input.counterId),
});
