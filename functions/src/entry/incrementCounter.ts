// incrementCounter: adds a delta (within the counter's kind, COUNTER_KINDS) to a plain counter; a missing
// one that AUTO_CREATE names creates itself first (counters/operations.ts).
import { paramSettings } from "../config/read";
import { incrementWith } from "../counters/operations";
import { incrementCounterInput } from "../model/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const incrementCounter = validatedOnCall({
  name: "incrementCounter",
  schema: incrementCounterInput,
  rateLimited: true,
  handler: (input) => incrementWith(countersDb(), paramSettings, input),
});
