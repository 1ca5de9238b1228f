// cleanupDeletedCounter, on an update of a deletion marker: deleteCounter removes what a deleted counter
// leaves behind for a bounded time and, if documents remain, hands off by moving the marker's `round` up;
// each such update runs one budgeted round here (counters/deletion.ts), which hands off again until
// nothing is left. So a counter with millions of idempotency records or members is deleted in full, and
// no function timeout cuts the work off. Retries on: a round that fails is run again (every step is safe
// to repeat); a duplicated or stale event finds the marker at another round and does nothing.
import { onDocumentUpdated, type Change, type FirestoreEvent, type QueryDocumentSnapshot } from "firebase-functions/v2/firestore";
import * as logger from "firebase-functions/logger";
import { databaseId } from "../config/params";
import { CLEANUP_TIMEOUT_SECONDS, cleanupRound, ROUND_BUDGET_MS } from "../counters/deletion";
import { CLEANUP_DOCUMENT_PATTERN } from "../model/paths";
import { countersDb } from "./deps";
import { EVERY_FUNCTION } from "./options";

type MarkerEvent = FirestoreEvent<Change<QueryDocumentSnapshot> | undefined, { counterId: string }>;

export const cleanupDeletedCounter = onDocumentUpdated(
  { ...EVERY_FUNCTION, document: CLEANUP_DOCUMENT_PATTERN, database: databaseId, retry: true, timeoutSeconds: CLEANUP_TIMEOUT_SECONDS, memory: "256MiB" },
  onMarkerUpdated,
);

async function onMarkerUpdated(event: MarkerEvent): Promise<void> {
  const { counterId } = event.params;
  const before = event.data?.before.get("round") as unknown;
  const round = event.data?.after.get("round") as unknown;
  // Only a handoff starts a round; other updates of the marker (none today) are not ours.
  if (typeof round !== "number" || round === before) return;
  const result = await cleanupRound(countersDb(), counterId, round, ROUND_BUDGET_MS, { nowMs: Date.now });
  if (result.stale) {
    logger.debug("cleanup round skipped: the marker moved on", { counterId, round, eventId: event.id });
    return;
  }
  logger.info(result.done ? "deleted counter cleaned up" : "cleanup round handed off", { counterId, round, removed: result.removed });
}
