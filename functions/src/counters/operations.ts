// The counter operations with the params' rules applied (UNIQUE_COUNTERS, WINDOWED_COUNTERS, COUNTER_KINDS,
// MIRRORS, AUTO_CREATE, EXTENSION_COUNTERS, DOCUMENT_COUNTERS, LEADERBOARDS, the limits), on validated input, then their
// writes (create.ts, increment.ts, members.ts, reset.ts, delete.ts): ruledCreate, ruledIncrement,
// ruledSetMember, ruledReset and ruledDelete are what a callable's handler runs (entry/) and what the admin
// entry runs (admin/operations.ts), each with the settings of its own source, read once per call
// (model/settings.ts). So both give the same answers and the same refusals (CounterError codes) for the
// same values. reshardCounter has no rule of the params (COUNTER_KINDS does not bind it): both run its write
// (reshard.ts) directly. Who may call is the callers' business: the callables check auth, policy and rate
// limits first.
import type { Firestore } from "firebase-admin/firestore";
import type { AutoCreateLookup } from "./auto-create";
import { createParentAndShards, newCounterId, type CreateResult } from "./create";
import { deleteParentAndShards } from "./delete";
import { addToRandomShard, type IncrementResult } from "./increment";
import { checkDelta } from "../model/kinds";
import { CounterError } from "../model/errors";
import { writeMembership, type SetMemberResult } from "./members";
import { zeroShardsAndTotal } from "./reset";
import { newCounter, type Settings, type OperationLimits, type Requested } from "../model/settings";

export async function ruledCreate(db: Firestore, settings: Settings, input: Requested & { counterId?: string | undefined }): Promise<CreateResult> {
  const limits = settings.limits();
  // The id is chosen before the shape: the patterns and COUNTER_KINDS apply to auto ids too.
  const counterId = input.counterId ?? newCounterId(db);
  onlyItsDocuments(settings, counterId, "createCounter");
  const counter = newCounter(counterId, input, settings, limits);
  return createParentAndShards(db, counterId, counter.numShards, { ...counter, extension: settings.extensionSourcesFor(counterId) });
}

export async function ruledIncrement(
  db: Firestore,
  settings: Settings,
  input: { counterId: string; delta?: number | undefined; requestId?: string | undefined },
): Promise<IncrementResult> {
  onlyItsDocuments(settings, input.counterId, "incrementCounter");
  const limits = settings.limits();
  const delta = input.delta ?? 1;
  checkDelta(input.counterId, delta, settings.kindFor(input.counterId, limits));
  return addToRandomShard(db, input.counterId, delta, {
    requestId: input.requestId,
    requestTtlMs: limits.requestTtlMs,
    autoCreate: autoCreateOf(settings, input.counterId, limits),
  });
}

export async function ruledSetMember(db: Firestore, settings: Settings, input: { counterId: string; member: boolean }, uid: string): Promise<SetMemberResult> {
  onlyItsDocuments(settings, input.counterId, "setMember");
  return writeMembership(db, input.counterId, uid, input.member, { autoCreate: autoCreateOf(settings, input.counterId) });
}

export async function ruledReset(db: Firestore, settings: Settings, counterId: string): Promise<{ counterId: string }> {
  onlyItsDocuments(settings, counterId, "resetCounter");
  const board = settings.boardFor(counterId);
  return zeroShardsAndTotal(db, counterId, { mirrors: settings.mirrorsFor(counterId), ...(board === undefined ? {} : { board }) });
}

export async function ruledDelete(db: Firestore, settings: Settings, counterId: string): Promise<{ counterId: string }> {
  const board = settings.boardFor(counterId);
  return deleteParentAndShards(db, counterId, {
    mirrors: settings.mirrorsFor(counterId),
    documents: settings.documentRuleFor(counterId) !== undefined,
    ...(board === undefined ? {} : { board }),
  });
}

/** DOCUMENT_COUNTERS: a counter a rule names moves with its documents only, whether it exists yet or not (docs/documents.md). */
function onlyItsDocuments(settings: Settings, counterId: string, operation: string): void {
  const rule = settings.documentRuleFor(counterId);
  if (rule !== undefined) {
    throw new CounterError("failed-precondition", `${operation}: counter "${counterId}" counts documents (DOCUMENT_COUNTERS rule ${JSON.stringify(rule)}); only its documents move it`);
  }
}

/** AUTO_CREATE for `counterId`, looked up (with the counter's shape) only once a call found it missing. */
function autoCreateOf(settings: Settings, counterId: string, known?: OperationLimits): AutoCreateLookup {
  return () => {
    const target = settings.autoCreateFor(counterId);
    if (target === undefined) return undefined;
    return {
      ...target,
      counter: () => ({ ...newCounter(counterId, {}, settings, known ?? settings.limits()), extension: settings.extensionSourcesFor(counterId) }),
    };
  };
}
