// deleteParentAndShards, deleteCounter's write: the parent, its shards and a legacy rollup lease in one
// transaction that writes the deletion marker and removes the mirrored field (mirror-writes.ts); then the
// cleanup of what the counter leaves behind (deletion.ts), for a bounded time.
import { FieldValue, Timestamp, type Firestore } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { cleanUp, handOff, INLINE_BUDGET_MS, markDeleted } from "./deletion";
import { CounterError } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { mirrorRefs, writeMirrors } from "./mirror-writes";
import { cleanupRef, counterRef, deletedRef, leaseRef, shardRef } from "../model/paths";
import { RECORD_TTL_MS } from "../documents/records";
import { ADMIN_TRANSACTION_ATTEMPTS, forgetShape, shapeIn } from "./shape";
import { shardIds } from "../model/shards";
import { deleteEntries, parentBoardOf } from "../leaderboard/entry-writes";

export interface DeleteOptions {
  mirrors?: readonly MirrorTarget[];
  /** The leaderboard the params put the counter on (LEADERBOARDS): its entry goes too (and the one its parent names). */
  board?: string;
  /** How long this call removes members and idempotency records before handing off (deletion.ts). */
  cleanupBudgetMs?: number;
  nowMs?: () => number;
  /**
   * A document counter (DOCUMENT_COUNTERS): the deletion's time stays behind (paths.ts, DELETED) for longer
   * than its documents' events may be retried, so that none of them counts again in the counter the next
   * change creates (documents/records.ts).
   */
  documents?: boolean;
}

/**
 * Deletes the parent, its shards and a legacy rollup lease (rollup/legacy-lease.ts) in one transaction, which also writes the deletion
 * marker: from then on increments and setMember calls fail with not-found and write nothing (their shard
 * update fails, taking the idempotency record or member document with it), trigger events find no parent,
 * and createCounter refuses the id. Then it removes the members and idempotency records (nothing can add
 * to them anymore) and, last, the marker, for at most `cleanupBudgetMs`; what is left then is handed to
 * the trigger cleanupDeletedCounter, round by round (deletion.ts). The answer does not wait for that: the
 * counter is gone when it comes, and the id can be created again once the marker is.
 *
 * A counter whose parent is gone but whose marker remains is still being deleted: there is no counter to
 * delete, so the answer is not-found (docs/api.md, deleteCounter) and nothing is touched; the cleanup goes on without the
 * caller (its rounds, or the sweep that resumes a stranded one: deletion.ts).
 */
export async function deleteParentAndShards(db: Firestore, counterId: string, options: DeleteOptions = {}): Promise<{ counterId: string }> {
  const mirrors = options.mirrors ?? [];
  const nowMs = options.nowMs ?? Date.now;
  await db.runTransaction(
    async (tx) => {
      const [parent, marker, ...targets] = await tx.getAll(counterRef(db, counterId), cleanupRef(db, counterId), ...mirrorRefs(db, mirrors));
      if (!parent!.exists && marker!.exists) {
        throw new CounterError("not-found", `counter "${counterId}" does not exist (an earlier delete of it is still cleaning up)`);
      }
      const shape = shapeIn(counterId, parent!);
      const { numShards } = shape;
      for (const id of shardIds(numShards)) tx.delete(shardRef(db, counterId, id));
      tx.delete(leaseRef(db, counterId));
      tx.delete(counterRef(db, counterId));
      // A deleted counter leaves its board in the same write (leaderboard/entry-writes.ts).
      deleteEntries(tx, db, counterId, [parentBoardOf(parent!), options.board]);
      markDeleted(tx, db, counterId);
      if (options.documents === true) tx.set(deletedRef(db, counterId), { deletedAt: FieldValue.serverTimestamp(), expireAt: Timestamp.fromMillis(nowMs() + RECORD_TTL_MS) });
      // The mirrored field goes with the counter: a count that no counter stands behind any more.
      writeMirrors(tx, counterId, mirrors, targets, FieldValue.delete(), shape);
    },
    { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
  );
  forgetShape(counterId);
  const progress = await cleanUp(db, counterId, nowMs() + (options.cleanupBudgetMs ?? INLINE_BUDGET_MS), { nowMs });
  // The marker this call wrote is at round 0; handOff moves it on only if nobody did (the sweep, for one).
  if (!progress.done && (await handOff(db, counterId, 0))) {
    logger.info("deleteCounter handed the rest of its cleanup to cleanupDeletedCounter", { counterId, removed: progress.removed, round: 1 });
  }
  return { counterId };
}
