// rollupTotal, on every write of a shard: keeps the parent's total exact. Here the event becomes a shard
// write (as a callable's entry parses its request); rollup/index.ts runs it through the steps. It reads
// only what the rollup uses (ROLLUP_INTERVAL_MS, MIRRORS, the database: deps.ts), so a bad callable
// setting never stops totals.
// Sizing (config/params.ts): a busy counter's owner waits between its commits for as long as the counter
// stays busy (handing over before the timeout), so concurrency and MAX_INSTANCES bound how many busy
// counters can be rolled up at once; see docs/deploying.md.
import * as logger from "firebase-functions/logger";
import { onDocumentWritten, type Change, type DocumentSnapshot, type FirestoreEvent } from "firebase-functions/v2/firestore";
import { databaseId, ROLLUP_CPU, rollupConcurrency, rollupMemoryMb, rollupMinInstances, rollupTimeoutSeconds } from "../config/params";
import { SHARD_DOCUMENT_PATTERN } from "../model/paths";
import { isPermanentError } from "../model/errors";
import { shardStateOf } from "../model/shards";
import { rollupShardWrite } from "../rollup/index";
import { microsCeil } from "../model/time";
import { BoundedMemo } from "../rollup/commit";
import type { NowMemo, ParentMemo, RollupDeps, ShardWrite } from "../rollup/types";
import { rollupDeps } from "./deps";
import { EVERY_FUNCTION } from "./options";
import { eventWriteTimeUs } from "./write-time";

// This instance's memos: module state, so one per instance (the benchmark loads this module once per
// simulated instance). Its commits at once, and the parents it last read or wrote (rollup/types.ts).
const leads: NowMemo = new BoundedMemo();
const parents: ParentMemo = new BoundedMemo();

async function onShardWritten(event: ShardEvent): Promise<void> {
  await rollupShardEvent(event, rollupDeps({ leads, parents }));
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
    writtenAtUs: eventWriteTimeUs(change, event.time),
    writtenAtExact: change.after.exists && change.after.updateTime !== undefined && change.after.updateTime.nanoseconds % 1000 === 0,
    ...shardCreated(change),
    before: shardStateOf(change.before.exists ? change.before.data() : undefined),
    after: shardStateOf(change.after.exists ? change.after.data() : undefined),
  };
  await rollupOrLogPermanent(write, deps, "rollup failed for good; the event is not retried", { counterId, shardId, eventId: event.id });
}

/**
 * Runs the rollup of `write` (a shard's, or a board entry's: entry/rollupBoard.ts). A transient failure throws
 * (the platform retries the event); a permanent one is logged at ERROR as `message` with the event's
 * `context`, and the event completes.
 */
export async function rollupOrLogPermanent(write: ShardWrite, deps: RollupDeps, message: string, context: Record<string, string>): Promise<void> {
  try {
    await rollupShardWrite(write, deps);
  } catch (error) {
    if (!isPermanentError(error)) throw error;
    logger.error(message, { ...context, error: error instanceof Error ? error.message : String(error) });
  }
}

/** When the written shard document was created (the rollup's memo tells incarnations apart by it: rollup/plan.ts). */
export function shardCreated(change: Change<DocumentSnapshot>): { shardCreatedUs?: number } {
  const doc = change.after.exists ? change.after : change.before;
  return doc.exists && doc.createTime !== undefined ? { shardCreatedUs: microsCeil(doc.createTime) } : {};
}

