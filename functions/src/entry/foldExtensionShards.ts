// foldExtensionShards, on every write of a document `{collection}/{document}/_counter_shards_/{shardId}`:
// what an old app version of the firestore-counter extension adds to its shard moves into the counter that
// EXTENSION_COUNTERS names for that document and field (extension/fold.ts), in the same atomic write that
// removes it from the shard, so the rollup, growth and windows see it as an increment. Duplicated,
// reordered and retried events move what the shard holds when they read it, never twice. A write to a
// document no rule names is read from the event only: nothing is read from Firestore, nothing written.
// No counter from nowhere: a counter is created only while its document exists (extension/fold.ts); a
// write under a document that does not exist stays in its shard (warned once per instance and document).
// Deployed only while EXTENSION_COUNTERS names something (index.ts; docs/from-the-extension.md).
import { onDocumentWritten, type Change, type DocumentSnapshot, type FirestoreEvent } from "firebase-functions/v2/firestore";
import * as logger from "firebase-functions/logger";
import { databaseId } from "../config/params";
import { documentRules, extensionRules, foldNewCounterRule } from "../config/read";
import { dayOf } from "../model/windows";
import { isPermanentError } from "../model/errors";
import { shardAmount } from "../extension/amounts";
import { foldSource } from "../extension/fold";
import { BoundedMemo } from "../rollup/commit";
import { FOLD_TRIGGER_PATTERN, nearMiss, sourcesFor } from "../model/extension-rules";
import { countersDb } from "./deps";
import { EVERY_FUNCTION } from "./options";

export type ExtensionShardEvent = FirestoreEvent<Change<DocumentSnapshot> | undefined, { collection: string; document: string; shardId: string }>;

export const foldExtensionShards = onDocumentWritten(
  { ...EVERY_FUNCTION, document: FOLD_TRIGGER_PATTERN, database: databaseId, retry: true, timeoutSeconds: 60, memory: "256MiB" },
  onExtensionShardWritten,
);

/**
 * The documents this instance warned about (an id that cannot become a counter id, a document that does not
 * exist): each warned once while remembered. Anyone can write shards under documents of any id, so the memo
 * is bounded (BoundedMemo: the least recently warned forgotten first, and warned again if it comes back).
 */
const warned = new BoundedMemo<true>();

/** Logs `message` for `documentPath` unless this instance warned about it lately. */
function warnOnce(documentPath: string, message: string, fields: Record<string, unknown>): void {
  if (warned.has(documentPath)) return;
  warned.set(documentPath, true);
  logger.warn(message, fields);
}

async function onExtensionShardWritten(event: ExtensionShardEvent): Promise<void> {
  const after = event.data?.after;
  // A removal adds nothing to count (the folds' own removals come back here as events).
  if (after === undefined || !after.exists) return;
  const { collection, document, shardId } = event.params;
  const documentPath = `${collection}/${document}`;
  const rules = extensionRules();
  const sources = sourcesFor(rules, documentPath);
  if (sources.length === 0) {
    if (rules.some((rule) => nearMiss(rule, documentPath))) {
      warnOnce(documentPath, "extension write not folded: the document's id cannot be part of a counter id (A-Z, a-z, 0-9, _ and -, at most 128 characters)", { document: documentPath, shardId });
    }
    return;
  }
  const data = after.data() ?? {};
  for (const source of sources) {
    // This write leaves nothing of that field in the shard: a later write brings its own event.
    if (shardAmount(shardId, data, source.field).kind === "absent") continue;
    try {
      // The shape params are read only when a counter is created: a bad one refuses that fold (logged below), no other.
      const newCounter = (counterId: string) => foldNewCounterRule()(counterId);
      // A document counter takes no amount (the preflight refuses EXTENSION_COUNTERS naming one; this holds even so).
      const report = await foldSource(countersDb(), source, { by: "trigger", shardIds: [shardId], day: dayOf(Date.now()), newCounter, documentRules: documentRules() });
      const fields = { document: documentPath, shardId, field: source.field, counterId: source.counterId, amount: report.amount, eventId: event.id };
      if (report.retryLater) throw new Error(`fold of ${documentPath} ${source.field} into ${source.counterId}: ${report.problems.join("; ")}`);
      if (report.noDocument) warnOnce(documentPath, "extension write not folded: its document does not exist, so no counter is created for it; the amount stays in the shard (migrate-extension can move it)", fields);
      else if (report.problems.length > 0) logger.error("extension amount not folded; it stays in the shard", { ...fields, problems: report.problems });
      else if (report.shards + report.partials > 0 || report.fieldTaken === "taken") {
        logger.info("extension amount folded", { ...fields, fieldTaken: report.fieldTaken === "taken" ? report.fieldValue : null, created: report.created });
      }
    } catch (error) {
      // Retries cannot get past a request Firestore refuses as such; everything else is retried (retry: true).
      if (!isPermanentError(error)) throw error;
      logger.error("extension fold failed for good", { document: documentPath, shardId, counterId: source.counterId, error: error instanceof Error ? error.message : String(error) });
    }
  }
}
