// A shard write event, as the rollup takes it: the event becomes a ShardWrite (what the orchestrator,
// index.ts, and the model check work with) and runs through the rollup. Failures: a transient one
// (Firestore unavailable, contention that did not settle) throws, and the platform retries the event; a
// permanent one (a Firestore INVALID_ARGUMENT) is logged at ERROR with the event's context and the event
// completes, since a retry could only fail again, for 24 h.
import * as logger from "firebase-functions/logger";
import type { Change, DocumentSnapshot, FirestoreEvent } from "firebase-functions/v2/firestore";
import { isPermanentError } from "../model/errors";
import { rollupShardWrite } from "./index";
import { microsCeil, parseRfc3339Micros } from "./plan";
import type { RollupDeps, ShardWrite } from "./types";

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
    before: change.before.exists ? change.before.data() : undefined,
    after: change.after.exists ? change.after.data() : undefined,
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
