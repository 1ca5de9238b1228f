// reshardCounter (admin): a new number of shards, the same sum (counters/reshard.ts, redistributeShards).
// Not bound by COUNTER_KINDS: an admin may reshard a counter of a declared kind (a hot one, say), so no
// rule of the params applies and the write runs directly.
import { redistributeShards } from "../counters/reshard";
import { reshardCounterInput } from "../model/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const reshardCounter = validatedOnCall({
  name: "reshardCounter",
  schema: reshardCounterInput,
  admin: true,
  handler: (input) => redistributeShards(countersDb(), input.counterId, input.numShards),
});
