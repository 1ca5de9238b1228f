// deleteCounter (admin): the counter and its mirrored field go at once; what it leaves behind is removed
// within the call's budget, then by cleanupDeletedCounter (counters/delete.ts, counters/deletion.ts).
import { mirrorTargetsFor } from "../config/read";
import { deleteCounter as remove } from "../counters/delete";
import { counterOnlyInput } from "../counters/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const deleteCounter = validatedOnCall({
  name: "deleteCounter",
  schema: counterOnlyInput,
  admin: true,
  handler: (input) => remove(countersDb(), input.counterId, { mirrors: mirrorTargetsFor(input.counterId) }),
});
