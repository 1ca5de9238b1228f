// The rollup trigger: turns a shard write event into a ShardWrite and hands it to counters/rollup.
// It reads only what the rollup uses (ROLLUP_INTERVAL_MS, the database), so a bad callable setting
// never stops totals. Failures: a transient one (Firestore unavailable, contention that did not settle)
// throws, and the platform retries the event; a permanent one (config.ts falls back on a bad interval;
// a Firestore INVALID_ARGUMENT) is logged at ERROR with the event's context and the event completes,
// since a retry could only fail again, for 24 h.
import { onDocumentWritten, type DocumentSnapshot } from "firebase-functions/v2/firestore";
import * as logger from "firebase-functions/logger";
import { rollupConfig, rollupMirrorTargets } from "./config";
import { countersDb } from "./firestore";
import { pause } from "./counters/backoff";
import { isPermanentError } from "./counters/errors";
import { SHARD_DOCUMENT_PATTERN } from "./counters/paths";
import { databaseId, ROLLUP_CPU, rollupConcurrency, rollupMemoryMb, rollupMinInstances, rollupTimeoutSeconds } from "./params";
import { microsCeil, parseRfc3339Micros } from "./counters/plan";
import { firestoreRollupStore, rollupShardWrite, type ClaimMemo, type LeadMemo, type ShardWrite } from "./counters/rollup";

// Sizing (params.ts): a claiming invocation waits up to one rollup interval, so concurrency and
// maxInstances bound how many counters can be rolled up at once; see docs/deploying.md.
const SIZING = {
  database: databaseId,
  timeoutSeconds: rollupTimeoutSeconds,
  memory: rollupMemoryMb,
  cpu: ROLLUP_CPU,
  concurrency: rollupConcurrency,
  // Warm instances cost money around the clock; 0 by default (docs/deploying.md, "Cold starts").
  minInstances: rollupMinInstances,
};

/** Claims held by this instance's running invocations (counters/rollup/context.ts, ClaimMemo). */
const claims: ClaimMemo = new Map();
/** This instance's leading edges, which concurrent events of an idle counter join (counters/rollup/lead.ts). */
const leads: LeadMemo = new Map();

export const rollupTotal = onDocumentWritten({ document: SHARD_DOCUMENT_PATTERN, retry: true, ...SIZING }, async (event) => {
  const { counterId, shardId } = event.params;
  const change = event.data;
  if (change === undefined) {
    logger.error("shard event without data", { counterId, shardId, eventId: event.id });
    return;
  }
  const write: ShardWrite = {
    eventId: event.id,
    counterId,
    shardId,
    writtenAtUs: writtenAtUs(change.before, change.after, event.time),
    before: change.before.exists ? change.before.data() : undefined,
    after: change.after.exists ? change.after.data() : undefined,
  };
  const { intervalMs, staleAfterMs } = rollupConfig();
  try {
    await rollupShardWrite(write, {
      store: firestoreRollupStore(countersDb(), { mirrors: rollupMirrorTargets }),
      intervalMs,
      staleAfterMs,
      nowMs: Date.now,
      sleep: pause,
      claims,
      leads,
    });
  } catch (error) {
    if (!isPermanentError(error)) throw error;
    logger.error("rollup failed for good; the event is not retried", {
      counterId,
      shardId,
      eventId: event.id,
      error: error instanceof Error ? error.message : String(error),
    });
  }
});

/**
 * The commit time of the write, rounded up to a microsecond: the new document's update time, or for a
 * delete the event time (never earlier than just after the deleted version's update time).
 */
export function writtenAtUs(before: DocumentSnapshot, after: DocumentSnapshot, eventTime: string): number {
  if (after.exists && after.updateTime !== undefined) return microsCeil(after.updateTime);
  const fromEvent = parseRfc3339Micros(eventTime);
  const afterBefore =
    before.exists && before.updateTime !== undefined ? microsCeil(before.updateTime) + 1 : 0;
  return Math.max(fromEvent ?? Date.now() * 1000, afterBefore);
}
