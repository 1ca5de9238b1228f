// rollupTotal, on every write of a shard: keeps the parent's total exact. Here the event becomes a shard
// write (as a callable's entry parses its request); rollup/index.ts runs it through the steps. It reads
// only what the rollup uses (ROLLUP_INTERVAL_MS, MIRRORS, the database: deps.ts), so a bad callable
// setting never stops totals.
// Sizing (config/params.ts): a claiming invocation waits up to one rollup interval, so concurrency and
// MAX_INSTANCES bound how many counters can be rolled up at once; see docs/deploying.md.
import * as logger from "firebase-functions/logger";
import { onDocumentWritten, type Change, type DocumentSnapshot, type FirestoreEvent } from "firebase-functions/v2/firestore";
import { databaseId, ROLLUP_CPU, rollupConcurrency, rollupMemoryMb, rollupMinInstances, rollupTimeoutSeconds } from "../config/params";
import { SHARD_DOCUMENT_PATTERN } from "../model/paths";
import { isPermanentError } from "../model/errors";
import { shardStateOf } from "../model/shards";
import { rollupShardWrite } from "../rollup/index";
import { microsCeil, parseRfc3339Micros } from "../model/time";
import { BoundedMemo } from "../rollup/commit";
import type { ClaimMemo, LeadMemo, ParentMemo, RollupDeps, ShardWrite } from "../rollup/types";
import { rollupDeps } from "./deps";
import { EVERY_FUNCTION } from "./options";

// This instance's memos: module state, so one per instance (the benchmark loads this module once per
// simulated instance). Claims held by its running invocations, its leading edges, and the parents its
// commits left (rollup/types.ts).
const claims: ClaimMemo = new Map();
const leads: LeadMemo = new BoundedMemo();
const parents: ParentMemo = new BoundedMemo();

async function onShardWritten(event: ShardEvent): Promise<void> {
  await rollupShardEvent(event, rollupDeps({ claims, leads, parents }));
}

export const rollupTotal = onDocumentWritten(
  {
    ...EVERY_FUNCTION,
    document: SHARD_DOCUMENT_PATTERN,
    retry: true,
    database: databaseId,
    timeoutSeconds: rollupTimeoutSeconds,
    memory: rollupMemoryMb,
    cpu: ROLLUP_CPU,
    concurrency: rollupConcurrency,
    // Warm instances cost money around the clock; 0 by default (docs/deploying.md, "Cold starts").
    minInstances: rollupMinInstances,
  },
  onShardWritten,
);

// Failures: a transient one (Firestore unavailable, contention that did not settle) throws, and the platform
// retries the event; a permanent one (a Firestore INVALID_ARGUMENT) is logged at ERROR with the event's
// context and the event completes, since a retry could only fail again, for 24 h.
/** What the trigger hands over: a shard's change, and the ids its path names. */
export type ShardEvent = FirestoreEvent<Change<DocumentSnapshot> | undefined, { counterId: string; shardId: string }>;

export async function rollupShardEvent(event: ShardEvent, deps: RollupDeps): Promise<void> {
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
    writtenAtExact: change.after.exists && change.after.updateTime !== undefined && change.after.updateTime.nanoseconds % 1000 === 0,
    before: shardStateOf(change.before.exists ? change.before.data() : undefined),
    after: shardStateOf(change.after.exists ? change.after.data() : undefined),
  };
  try {
    await rollupShardWrite(write, deps);
  } catch (error) {
    if (!isPermanentError(error)) throw error;
    logger.error("rollup failed for good; the event is not retried", {
      counterId,
      shardId,
      eventId: event.id,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The commit time of the write, rounded up to a microsecond: the new document's update time, or for a
 * delete the event time (never earlier than just after the deleted version's update time).
 */
function writtenAtUs(before: DocumentSnapshot, after: DocumentSnapshot, eventTime: string): number {
  if (after.exists && after.updateTime !== undefined) return microsCeil(after.updateTime);
  const fromEvent = parseRfc3339Micros(eventTime);
  const afterBefore = before.exists && before.updateTime !== undefined ? microsCeil(before.updateTime) + 1 : 0;
  return Math.max(fromEvent ?? Date.now() * 1000, afterBefore);
}
