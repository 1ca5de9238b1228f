// documentCounters-<name>: one Firestore trigger per document pattern that DOCUMENT_COUNTERS names
// (model/document-triggers.ts), on every write of those documents. Each event becomes an observation of the
// document per rule that watches it (documents/event.ts), brought to the counter exactly, whatever the
// delivery (documents/apply.ts). Exported by the main entry as one group, built when the module loads from
// the param's value then (index.ts): empty while the param is empty, so nothing more is deployed. The
// benchmark drives these handlers as deployed: the main entry loaded with the param set, each trigger of
// the group wrapped with firebase-functions-test and given recorded before/after snapshots.
// A counted change writes a delta to one shard; rollupTotal gets that shard write's event as it gets every
// one, but that is a second delivery hop (and its slot wait) before the total is exact. So the invocation
// that committed the delta rolls that shard write up itself, at once (rollUpOwnWrite): one more, early
// delivery of a real shard write, which the rollup takes exactly under any duplicated or reordered delivery
// (docs/rollup.md); when rollupTotal's delivery comes, the write is usually covered already (a read of the
// parent, and of the lease when that sum was read less than an interval after the write).
import * as logger from "firebase-functions/logger";
import type { CloudFunction } from "firebase-functions/v2";
import { onDocumentWritten, type Change, type DocumentSnapshot, type FirestoreEvent } from "firebase-functions/v2/firestore";
import { databaseId, rollupTimeoutSeconds } from "../config/params";
import { documentNewCounterRule, documentRules } from "../config/read";
import { countWrite, ownShardWrite, type DocumentWrite } from "../documents/event";
import { firestoreDocumentStore } from "../documents/firestore-store";
import { versionAt, versionJustAfter } from "../model/document-records";
import { parseDocumentCounterRules } from "../model/document-rules";
import { documentTriggers } from "../model/document-triggers";
import { isPermanentError } from "../model/errors";
import { BoundedMemo } from "../rollup/commit";
import { rollupShardWrite } from "../rollup/index";
import type { ClaimMemo, LeadMemo, ParentMemo, ShardWrite } from "../rollup/types";
import { countersDb, rollupDeps } from "./deps";
import { EVERY_FUNCTION } from "./options";

/** A write of a watched document, with the wildcards' values (unused: the path is read from the snapshots). */
export type DocumentEvent = FirestoreEvent<Change<DocumentSnapshot> | undefined, Record<string, string>>;

/**
 * The document triggers for a DOCUMENT_COUNTERS value, by name: {} for an empty one (or none). A value that
 * does not parse throws, naming the rule: a deploy must not drop the triggers of a value it cannot read
 * (the preflight refuses it before).
 */
export function documentCounterTriggers(value: string | undefined): Record<string, CloudFunction<DocumentEvent>> {
  const group: Record<string, CloudFunction<DocumentEvent>> = {};
  for (const trigger of documentTriggers(parseDocumentCounterRules("DOCUMENT_COUNTERS", value ?? ""))) {
    group[trigger.name] = onDocumentWritten(
      // rollupTotal's timeout: the rollup of the trigger's own write may wait for its slot as rollupTotal does.
      { ...EVERY_FUNCTION, document: trigger.path, database: databaseId, retry: true, timeoutSeconds: rollupTimeoutSeconds, memory: "256MiB" },
      (event: DocumentEvent) => countDocumentEvent(trigger.key, event),
    );
  }
  return group;
}

// This instance's rollup memos, kept as rollupTotal.ts keeps its own (module state: one per instance):
// claims held by its running invocations, its leading edges, the parents its commits left (rollup/types.ts).
const claims: ClaimMemo = new Map();
const leads: LeadMemo = new BoundedMemo();
const parents: ParentMemo = new BoundedMemo();

/** Documents (and rule fields) warned about on this instance: one warning each. */
const warned = new BoundedMemo<true>();

function warnOnce(key: string, message: string, fields: Record<string, unknown>): void {
  if (warned.has(key)) return;
  warned.set(key, true);
  logger.warn(message, fields);
}

/**
 * One event of the trigger for the pattern `key`: every rule of that pattern, each to its counter
 * (documents/event.ts). A transient failure (Firestore unavailable, a deletion of the counter still cleaning
 * up, contention that did not settle) throws once every rule was tried, and the platform delivers the event
 * again; the rules that were done are covered then.
 */
export async function countDocumentEvent(key: string, event: DocumentEvent): Promise<void> {
  const change = event.data;
  if (change === undefined || (!change.before.exists && !change.after.exists)) {
    logger.error("document event without a document", { eventId: event.id });
    return;
  }
  const { before, after } = change;
  const write: DocumentWrite = {
    path: (after.exists ? after : before).ref.path,
    before: before.exists ? before.data() : undefined,
    after: after.exists ? after.data() : undefined,
    version: after.exists ? versionAt(after.updateTime!) : versionJustAfter(before.updateTime!),
  };
  // The shape params are read only when a counter is created: a bad one refuses that creation (logged below), no other.
  const options = { newCounter: (id: string) => documentNewCounterRule()(id) };
  const store = firestoreDocumentStore(countersDb());
  let failure: Error | undefined;
  // The rollups of this event's shard writes, one per counter it moved, run side by side (none throws).
  const rollups: Promise<void>[] = [];
  for (const rule of documentRules().filter((r) => r.document.key === key)) {
    const fields = { document: write.path, rule: rule.source, eventId: event.id };
    try {
      const outcome = await countWrite(store, rule, write, options);
      if (outcome === null) continue;
      if (outcome.kind === "no-counter") {
        warnOnce(write.path, "document not counted: it cannot name a counter", { ...fields, problem: outcome.problem });
        continue;
      }
      if (outcome.fieldProblem !== undefined) warnOnce(`${rule.position}\u0000${write.path}\u0000field`, "document field not counted", { ...fields, problem: outcome.fieldProblem });
      if (outcome.kind === "unchanged") continue;
      const { report } = outcome;
      const done = { ...fields, counterId: outcome.counterId, counted: outcome.counted, version: write.version };
      if (report.retryLater) throw new Error(`document ${write.path} not counted in ${outcome.counterId} yet: ${report.problem ?? "try again"}`);
      if (report.problem !== undefined) logger.error("document not counted", { ...done, problem: report.problem });
      else if (report.plan.writes.length > 0) logger.debug("document counted", { ...done, delta: report.plan.delta, created: report.created });
      const own = ownShardWrite(outcome, `${event.id}/${rule.position}`);
      if (own !== null) rollups.push(rollUpOwnWrite(own, done));
    } catch (error) {
      if (!isPermanentError(error)) failure ??= error instanceof Error ? error : new Error(String(error));
      else logger.error("document not counted, for good", { ...fields, error: error instanceof Error ? error.message : String(error) });
    }
  }
  await Promise.all(rollups);
  if (failure !== undefined) throw failure;
}

/**
 * Rolls up the shard write this invocation just committed (documents/event.ts, ownShardWrite: the batch's own
 * time for it), as rollupTotal would roll up its event, with this instance's memos. A failure is no loss: the
 * record and the delta are committed, and rollupTotal gets the same shard write (its event is retried until
 * it succeeds), so the total is made exact there. Throwing would only have the platform deliver the
 * document's event again, which finds it counted and rolls nothing up: so warn, and let the invocation succeed.
 */
async function rollUpOwnWrite(write: ShardWrite, fields: Record<string, unknown>): Promise<void> {
  try {
    await rollupShardWrite(write, rollupDeps({ claims, leads, parents }));
  } catch (error) {
    logger.warn("document counted; its rollup failed here and is left to rollupTotal", { ...fields, counterId: write.counterId, error: error instanceof Error ? error.message : String(error) });
  }
}
