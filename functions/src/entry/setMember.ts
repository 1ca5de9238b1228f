// setMember: the signed-in caller joins or leaves a unique counter (counters/members.ts) as COUNTER_KINDS'
// callers allows (counters/client-calls.ts); a missing one that AUTO_CREATE names creates itself first
// (counters/operations.ts).
import { clientSetMember } from "../counters/client-calls";
import { setMemberInput } from "../model/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const setMember = validatedOnCall({
  name: "setMember",
  schema: setMemberInput,
  signedIn: true,
  rateLimited: true,
  handler: (input, { uid, settings }) => {
    if (uid === null) throw new Error("setMember ran without a signed-in user"); // validatedOnCall refuses that first
    return clientSetMember(countersDb(), settings, input, uid);
  },
});
