// Where every counter document lives. Shared by the functions, the tests and the scripts, so that a
// path is spelled once.
import type { CollectionReference, DocumentReference, Firestore } from "firebase-admin/firestore";

export const COUNTERS = "counters";
export const SHARDS = "shards";
/** Idempotency records of incrementCounter, one per requestId: counters/{id}/requests/{requestId}. */
export const REQUESTS = "requests";
/** Rollup coordination: counters/{id}/rollup/lease holds the pending claim, if any (counters/rollup/claim.ts). */
export const ROLLUP = "rollup";
export const LEASE_ID = "lease";
/** Members of a unique counter, one document per member: counters/{id}/members/{uid}. */
export const MEMBERS = "members";
/**
 * When each user's membership of a unique counter last changed, one document per user who ever changed
 * it: counters/{id}/memberships/{uid} (members.ts). Clients read their own to know which changes a total
 * holds (client/src/member-coverage.ts).
 */
export const MEMBERSHIPS = "memberships";
/**
 * The deletion marker: counters/{id}/cleanup/pending exists from the transaction that deletes a counter
 * until its members and idempotency records are gone (store.ts, deleteCounter). Not under `rollup`, whose
 * documents are rollup leases (and may be queried as such).
 */
export const CLEANUP = "cleanup";
export const PENDING_ID = "pending";
/** The cleanup trigger's document pattern: the deletion marker (functions/src/cleanup.ts). */
export const CLEANUP_DOCUMENT_PATTERN = `${COUNTERS}/{counterId}/${CLEANUP}/${PENDING_ID}`;

/** The trigger's document pattern (DESIGN.md). */
export const SHARD_DOCUMENT_PATTERN = `${COUNTERS}/{counterId}/${SHARDS}/{shardId}`;

export function counterRef(db: Firestore, counterId: string): DocumentReference {
  return db.collection(COUNTERS).doc(counterId);
}

export function shardsRef(db: Firestore, counterId: string): CollectionReference {
  return counterRef(db, counterId).collection(SHARDS);
}

export function shardRef(db: Firestore, counterId: string, shardId: string | number): DocumentReference {
  return shardsRef(db, counterId).doc(String(shardId));
}

export function requestsRef(db: Firestore, counterId: string): CollectionReference {
  return counterRef(db, counterId).collection(REQUESTS);
}

export function requestRef(db: Firestore, counterId: string, requestId: string): DocumentReference {
  return requestsRef(db, counterId).doc(requestId);
}

export function leaseRef(db: Firestore, counterId: string): DocumentReference {
  return counterRef(db, counterId).collection(ROLLUP).doc(LEASE_ID);
}

export function membersRef(db: Firestore, counterId: string): CollectionReference {
  return counterRef(db, counterId).collection(MEMBERS);
}

export function memberRef(db: Firestore, counterId: string, uid: string): DocumentReference {
  return membersRef(db, counterId).doc(uid);
}

export function membershipsRef(db: Firestore, counterId: string): CollectionReference {
  return counterRef(db, counterId).collection(MEMBERSHIPS);
}

export function membershipRef(db: Firestore, counterId: string, uid: string): DocumentReference {
  return membershipsRef(db, counterId).doc(uid);
}

export function cleanupRef(db: Firestore, counterId: string): DocumentReference {
  return counterRef(db, counterId).collection(CLEANUP).doc(PENDING_ID);
}
