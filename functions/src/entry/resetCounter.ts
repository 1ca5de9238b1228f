// resetCounter (admin): every shard, the total and its mirrors back to 0 (counters/reset.ts).
import { ruledReset } from "../counters/operations";
import { counterOnlyInput } from "../model/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const resetCounter = validatedOnCall({
  name: "resetCounter",
  schema: counterOnlyInput,
  admin: true,
  handler: (input, { settings }) => ruledReset(countersDb(), settings, input.counterId),
});
