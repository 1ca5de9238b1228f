// documentCounters-<name>: one Firestore trigger per document pattern that DOCUMENT_COUNTERS names
// (model/document-triggers.ts), on every write of those documents: the event becomes a change, which
// documents/trigger.ts brings to each rule's counter, exactly, whatever the delivery (kept by recount or by
// records: docs/documents.md). Exported by the main entry as one group, built when the module loads from the
// param's value then (index.ts): empty while the param is empty, so nothing more is deployed. The benchmark
// drives these handlers as deployed: the main entry loaded with the param set, each trigger of the group
// wrapped with firebase-functions-test and given recorded before/after snapshots. On a busy counter the
// trigger's invocation may own the promise its commit made and carry the chain (rollup/trail.ts).
import * as logger from "firebase-functions/logger";
import type { CloudFunction } from "firebase-functions/v2";
import { onDocumentWritten, type Change, type DocumentSnapshot, type FirestoreEvent } from "firebase-functions/v2/firestore";
import { databaseId, rollupTimeoutSeconds } from "../config/params";
import { documentNewCounterRule, documentRules } from "../config/read";
import { firestoreDocumentStore } from "../documents/firestore-store";
import { countDocumentChange, type DocumentChange, type TriggerDeps } from "../documents/trigger";
import { versionAt, versionJustAfter } from "../model/time";
import { parseDocumentCounterRules } from "../model/document-rules";
import { documentTriggers } from "../model/document-triggers";
import { BoundedMemo } from "../rollup/commit";
import type { NowMemo, ParentMemo } from "../rollup/types";
import { countersDb, rollupDeps } from "./deps";
import { EVERY_FUNCTION } from "./options";
import { eventWriteTimeUs } from "./write-time";

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
// its commits at once and the parents it last read or wrote (rollup/types.ts).
const leads: NowMemo = new BoundedMemo();
const parents: ParentMemo = new BoundedMemo();

/** Documents (and rule fields) warned about on this instance: one warning each. */
const warned = new BoundedMemo<true>();

function warnOnce(key: string, message: string, fields: Record<string, unknown>): void {
  if (warned.has(key)) return;
  warned.set(key, true);
  logger.warn(message, fields);
}

/**
 * One event of the trigger for the pattern `key`: a change of a watched document, through every rule of that
 * pattern (documents/trigger.ts). A transient failure throws, and the platform delivers the event again.
 */
export async function countDocumentEvent(key: string, event: DocumentEvent): Promise<void> {
  const change = event.data;
  if (change === undefined || (!change.before.exists && !change.after.exists)) {
    // A delete of a document that never existed (or was already gone): a write with neither side, which
    // changes no count. Nothing is wrong, so nothing louder than a debug line.
    logger.debug("document event with neither side: nothing to count", { eventId: event.id });
    return;
  }
  const { before, after } = change;
  const write: DocumentChange = {
    path: (after.exists ? after : before).ref.path,
    before: before.exists ? before.data() : undefined,
    after: after.exists ? after.data() : undefined,
    version: after.exists ? versionAt(after.updateTime!) : versionJustAfter(before.updateTime!),
    writtenAtUs: eventWriteTimeUs(change, event.time),
    eventId: event.id,
  };
  const deps: TriggerDeps = {
    store: firestoreDocumentStore(countersDb()),
    rollup: () => rollupDeps({ leads, parents }),
    // The shape params are read only when a counter is created: a bad one refuses that creation (logged), no other.
    newCounter: (id: string) => documentNewCounterRule()(id),
    warnOnce,
    nowMs: Date.now,
  };
  await countDocumentChange(write, documentRules().filter((r) => r.document.key === key), deps);
}
