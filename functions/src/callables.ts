// The callable functions: each one names its input schema and delegates to the counter store.
import { getFirestore } from "firebase-admin/firestore";
import { validatedOnCall } from "./callable";
import { createCounterInput, incrementCounterInput } from "./counters/schema";
import * as store from "./counters/store";

export const createCounter = validatedOnCall({
  name: "createCounter",
  schema: createCounterInput,
  handler: (input, { config }) =>
    store.createCounter(getFirestore(), input.counterId, input.numShards ?? config.defaultShards),
});

export const incrementCounter = validatedOnCall({
  name: "incrementCounter",
  schema: incrementCounterInput,
  handler: (input, { config }) =>
    store.incrementCounter(getFirestore(), input.counterId, input.delta ?? 1, {
      requestId: input.requestId,
      requestTtlMs: config.requestTtlMs,
    }),
});
