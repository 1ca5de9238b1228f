// reshardCounter (admin): a new number of shards, the same sum (counters/reshard.ts). Not bound by
// COUNTER_KINDS: an admin may reshard a counter of a declared kind (a hot one, say).
import { reshardWith } from "../counters/operations";
import { reshardCounterInput } from "../model/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const reshardCounter = validatedOnCall({
  name: "reshardCounter",
  schema: reshardCounterInput,
  admin: true,
  handler: (input) => reshardWith(countersDb(), input.counterId, input.numShards),
});
