// What a deleted counter leaves behind, and its removal: the deletion marker
// (counters/{id}/cleanup/pending), the members of a unique counter and the idempotency records.
//
// Why a marker, and why this is exact. deleteCounter's transaction deletes the parent and the shards and
// writes the marker (markDeleted). The marker is the single source of truth for "this id is being
// deleted":
// - createCounter refuses the id while the marker exists (its transaction reads it), so there is no live
//   counter with this id while the marker exists, and so every write a cleanup commits (each is
//   conditioned on the marker, below) removes only what dead counters left behind, never a new
//   counter's members.
// - Nothing can add a member or an idempotency record while the counter has no shards: both are written
//   only in a batch with `update()` of a shard, which fails on a missing one. A setMember racing the
//   delete either committed before the delete's transaction (its member document is then removed here)
//   or fails on the missing shard and writes nothing.
// - The marker is removed last, in a transaction that sees no member and no record left. After that, a
//   counter created with the same id starts with no member and no record from before.
// Whoever runs the cleanup (the deleteCounter call, a second deleteCounter finishing a cleanup that was
// cut off, or a background worker later) only needs the marker; several cleanups at once are safe.
import { FieldValue, type DocumentReference, type Firestore, type Transaction } from "firebase-admin/firestore";
import { GRPC, grpcCode } from "./errors";
import { cleanupRef, membersRef, requestsRef } from "./paths";

/** Deletes per batch; with the marker's update, well under the 500 writes a batch may hold. */
const PAGE_SIZE = 400;
/** Rounds of the last step before giving up (each one that finds documents deletes them first). */
const FINISH_ROUNDS = 100;

/** Writes the marker in the deleting transaction. */
export function markDeleted(tx: Transaction, db: Firestore, counterId: string): void {
  tx.set(cleanupRef(db, counterId), { startedAt: FieldValue.serverTimestamp(), pages: 0 });
}

/**
 * Removes the members and idempotency records of a deleted counter, page by page, then the marker.
 * Returns how many documents this call removed. Each page is one batch that also updates the marker
 * (`update()` fails if the marker is gone): if another cleanup finished first, and the id may already
 * belong to a new counter, this one stops without deleting anything.
 */
export async function finishDeletion(db: Firestore, counterId: string): Promise<number> {
  const marker = cleanupRef(db, counterId);
  let removed = 0;
  for (let round = 0; round < FINISH_ROUNDS; ) {
    const page = await leftovers(db, counterId, PAGE_SIZE);
    if (page.length === 0) {
      if (await removeMarkerIfDone(db, counterId)) return removed;
      round++;
      continue;
    }
    const batch = db.batch();
    batch.update(marker, { pages: FieldValue.increment(1) });
    for (const ref of page) batch.delete(ref);
    try {
      await batch.commit();
    } catch (error) {
      if (grpcCode(error) === GRPC.NOT_FOUND) return removed; // another cleanup removed the marker
      throw error;
    }
    removed += page.length;
  }
  throw new Error(`cleanup of deleted counter "${counterId}" did not finish; deleteCounter again to resume it`);
}

/** Up to `limit` member and idempotency-record documents of the counter (names only). */
async function leftovers(db: Firestore, counterId: string, limit: number): Promise<DocumentReference[]> {
  const members = await membersRef(db, counterId).select().limit(limit).get();
  const refs = members.docs.map((d) => d.ref);
  if (refs.length < limit) {
    const requests = await requestsRef(db, counterId).select().limit(limit - refs.length).get();
    refs.push(...requests.docs.map((d) => d.ref));
  }
  return refs;
}

/**
 * The last step: in one transaction, removes the marker if nothing is left under it. True when the
 * marker is gone (removed here, or by another cleanup); false if documents remain (delete them first).
 * The transaction matters when cleanups overlap: a cleanup that saw "nothing left" a while ago must not
 * remove the marker of a later deletion of the same id whose members are still being removed.
 */
async function removeMarkerIfDone(db: Firestore, counterId: string): Promise<boolean> {
  return db.runTransaction(async (tx) => {
    const marker = await tx.get(cleanupRef(db, counterId));
    if (!marker.exists) return true;
    const members = await tx.get(membersRef(db, counterId).select().limit(1));
    const requests = await tx.get(requestsRef(db, counterId).select().limit(1));
    if (!members.empty || !requests.empty) return false;
    tx.delete(marker.ref);
    return true;
  });
}
