// The trigger that finishes deleting a counter (counters/cleanup.ts): deleteCounter removes what a
// deleted counter leaves behind for a bounded time and, if documents remain, hands off by moving the
// deletion marker's `round` up; each such update runs one budgeted round here, which hands off again until
// nothing is left. So a counter with millions of idempotency records or members is deleted in full, and
// no function timeout cuts the work off. Retries on: a round that fails is run again (every step is safe
// to repeat); a duplicated or stale event finds the marker at another round and does nothing.
import { onDocumentUpdated } from "firebase-functions/v2/firestore";
import * as logger from "firebase-functions/logger";
import { countersDb } from "./firestore";
import { CLEANUP_DOCUMENT_PATTERN } from "./counters/paths";
import { CLEANUP_TIMEOUT_SECONDS, cleanupRound, ROUND_BUDGET_MS } from "./counters/cleanup";
import { databaseId } from "./params";

export const cleanupDeletedCounter = onDocumentUpdated(
  { document: CLEANUP_DOCUMENT_PATTERN, database: databaseId, retry: true, timeoutSeconds: CLEANUP_TIMEOUT_SECONDS, memory: "256MiB" },
  async (event) => {
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
  },
);
