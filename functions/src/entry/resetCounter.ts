// resetCounter (admin): every shard, the total and its mirrors back to 0 (counters/reset.ts).
import { mirrorTargetsFor } from "../config/read";
import { resetCounter as reset } from "../counters/reset";
import { counterOnlyInput } from "../counters/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const resetCounter = validatedOnCall({
  name: "resetCounter",
  schema: counterOnlyInput,
  admin: true,
  handler: (input) => reset(countersDb(), input.counterId, { mirrors: mirrorTargetsFor(input.counterId) }),
});
