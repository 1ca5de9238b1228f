// The six counter operations with the params' rules applied (UNIQUE_COUNTERS, WINDOWED_COUNTERS,
// COUNTER_KINDS, MIRRORS, AUTO_CREATE, EXTENSION_COUNTERS, DOCUMENT_COUNTERS, the limits), on validated input: what a callable's handler runs
// (entry/) and what the admin entry runs (admin.ts), each with the settings of its own source, read once
// per call (model/settings.ts). So both give the same answers and the same refusals (CounterError codes)
// for the same values. Who may call is the callers' business: the callables check auth, policy and rate limits first.
import type { Firestore } from "firebase-admin/firestore";
import type { AutoCreateLookup } from "./auto-create";
import { createCounter, newCounterId, type CreateResult } from "./create";
import { deleteCounter } from "./delete";
import { incrementCounter, type IncrementResult } from "./increment";
import { checkDelta } from "../model/kinds";
import { CounterError } from "../model/errors";
import { setMember, type SetMemberResult } from "./members";
import { resetCounter } from "./reset";
import { reshardCounter } from "./reshard";
import { newCounter, type Settings, type OperationLimits, type Requested } from "../model/settings";

export async function createWith(db: Firestore, settings: Settings, input: Requested & { counterId?: string | undefined }): Promise<CreateResult> {
  const limits = settings.limits();
  // The id is chosen before the shape: the patterns and COUNTER_KINDS apply to auto ids too.
  const counterId = input.counterId ?? newCounterId(db);
  onlyItsDocuments(settings, counterId, "createCounter");
  const counter = newCounter(counterId, input, settings, limits);
  return createCounter(db, counterId, counter.numShards, { ...counter, extension: settings.extensionSourcesFor(counterId) });
}

export async function incrementWith(
  db: Firestore,
  settings: Settings,
  input: { counterId: string; delta?: number | undefined; requestId?: string | undefined },
): Promise<IncrementResult> {
  onlyItsDocuments(settings, input.counterId, "incrementCounter");
  const limits = settings.limits();
  const delta = input.delta ?? 1;
  checkDelta(input.counterId, delta, settings.kindFor(input.counterId, limits));
  return incrementCounter(db, input.counterId, delta, {
    requestId: input.requestId,
    requestTtlMs: limits.requestTtlMs,
    autoCreate: autoCreateOf(settings, input.counterId, limits),
  });
}

export async function setMemberWith(db: Firestore, settings: Settings, input: { counterId: string; member: boolean }, uid: string): Promise<SetMemberResult> {
  onlyItsDocuments(settings, input.counterId, "setMember");
  return setMember(db, input.counterId, uid, input.member, { autoCreate: autoCreateOf(settings, input.counterId) });
}

export async function resetWith(db: Firestore, settings: Settings, counterId: string): Promise<{ counterId: string }> {
  onlyItsDocuments(settings, counterId, "resetCounter");
  return resetCounter(db, counterId, { mirrors: settings.mirrorsFor(counterId) });
}

/** Not bound by COUNTER_KINDS: an admin may reshard a counter of a declared kind (a hot one, say). */
export function reshardWith(db: Firestore, counterId: string, numShards: number): Promise<{ counterId: string; numShards: number }> {
  return reshardCounter(db, counterId, numShards);
}

export async function deleteWith(db: Firestore, settings: Settings, counterId: string): Promise<{ counterId: string }> {
  return deleteCounter(db, counterId, { mirrors: settings.mirrorsFor(counterId), documents: settings.documentRuleFor(counterId) !== undefined });
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
