// What the callables that create and move counters run: the operations under the params' rules
// (operations.ts: ruledCreate, ruledIncrement, ruledSetMember) after COUNTER_KINDS' `callers` of the
// counter's id allows the call (model/kinds.ts, checkCallers). A refusal comes before anything is read or
// written, so AUTO_CREATE never creates a counter the call may not move. The admin entry runs the ruled
// operations directly: the app's own code is not bound by `callers`.
import type { Firestore } from "firebase-admin/firestore";
import { newCounterId, type CreateResult } from "./create";
import type { IncrementResult } from "./increment";
import type { SetMemberResult } from "./members";
import { ruledCreate, ruledIncrement, ruledSetMember } from "./operations";
import { checkCallers, type ClientCall } from "../model/kinds";
import type { Settings, Requested } from "../model/settings";

function checkClient(settings: Settings, counterId: string, call: ClientCall): void {
  const limits = settings.limits();
  checkCallers(counterId, call, settings.callersKindFor(counterId, limits), limits.maxDelta);
}

export async function clientCreate(db: Firestore, settings: Settings, input: Requested & { counterId?: string | undefined }): Promise<CreateResult> {
  // An auto id is drawn here so that the kind of the id the counter gets is the one checked.
  const counterId = input.counterId ?? newCounterId(db);
  checkClient(settings, counterId, { op: "create" });
  return await ruledCreate(db, settings, { ...input, counterId });
}

export async function clientIncrement(
  db: Firestore,
  settings: Settings,
  input: { counterId: string; delta?: number | undefined; requestId?: string | undefined },
): Promise<IncrementResult> {
  checkClient(settings, input.counterId, { op: "increment", delta: input.delta ?? 1 });
  return await ruledIncrement(db, settings, input);
}

export async function clientSetMember(db: Firestore, settings: Settings, input: { counterId: string; member: boolean }, uid: string): Promise<SetMemberResult> {
  checkClient(settings, input.counterId, { op: "setMember", member: input.member });
  return await ruledSetMember(db, settings, input, uid);
}
