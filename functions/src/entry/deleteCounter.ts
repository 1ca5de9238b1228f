// deleteCounter (admin): the counter and its mirrored field go at once; what it leaves behind is removed
// within the call's budget, then by cleanupDeletedCounter (counters/delete.ts, counters/deletion.ts).
import { ruledDelete } from "../counters/operations";
import { counterOnlyInput } from "../model/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const deleteCounter = validatedOnCall({
  name: "deleteCounter",
  schema: counterOnlyInput,
  admin: true,
  handler: (input, { settings }) => ruledDelete(countersDb(), settings, input.counterId),
});
