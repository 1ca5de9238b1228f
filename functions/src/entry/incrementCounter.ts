// incrementCounter: adds a delta (within the counter's kind, COUNTER_KINDS) to a plain counter.
import { counterKindFor } from "../config/read";
import { incrementCounter as increment } from "../counters/increment";
import { checkDelta } from "../counters/kinds";
import { incrementCounterInput } from "../counters/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const incrementCounter = validatedOnCall({
  name: "incrementCounter",
  schema: incrementCounterInput,
  rateLimited: true,
  handler: (input, { config }) => {
    const delta = input.delta ?? 1;
    checkDelta(input.counterId, delta, counterKindFor(input.counterId, config));
    return increment(countersDb(), input.counterId, delta, { requestId: input.requestId, requestTtlMs: config.requestTtlMs });
  },
});
