// setMember: the signed-in caller joins or leaves a unique counter (counters/members.ts).
import { setMember as set } from "../counters/members";
import { setMemberInput } from "../counters/schema";
import { countersDb } from "./deps";
import { validatedOnCall } from "./oncall";

export const setMember = validatedOnCall({
  name: "setMember",
  schema: setMemberInput,
  signedIn: true,
  rateLimited: true,
  handler: (input, { uid }) => {
    if (uid === null) throw new Error("setMember ran without a signed-in user"); // validatedOnCall refuses that first
    return set(countersDb(), input.counterId, uid, input.member);
  },
});
