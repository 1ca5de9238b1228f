// Where every counter document lives. Shared by the functions, the tests and the scripts, so that a
// path is spelled once.
import { createHash } from "node:crypto";
import type { CollectionReference, DocumentReference, Firestore } from "firebase-admin/firestore";
import { PARAMS_COLLECTION, PARAMS_DOCUMENT_ID, PARAMS_PARENT_ID } from "./deployed-params";

export const COUNTERS = "counters";
export const SHARDS = "shards";

/**
 * The composite index of the shards' `count` and `writes`, which the rollup's one aggregation sums together
 * (rollup/sum.ts): declared in firestore.indexes.json, checked by the preflight.
 */
export const SHARD_SUMS_INDEX = {
  collectionGroup: SHARDS,
  queryScope: "COLLECTION",
  fields: [
    { fieldPath: "count", order: "ASCENDING" },
    { fieldPath: "writes", order: "ASCENDING" },
  ],
} as const;
/**
 * When a windowed counter's windows next move by themselves (model/windows.ts), on its parent: the one
 * field of the `rollup` map that is indexed (firestore.indexes.json), for the midnight commit's query
 * (rollup/midnight.ts); checked by the preflight.
 */
export const WINDOWS_MOVE_AT = "rollup.windowsMoveAt";
/** Members of a unique counter, one document per member: counters/{id}/members/{uid}. */
export const MEMBERS = "members";
/**
 * When each user's membership of a unique counter last changed, one document per user who ever changed
 * it: counters/{id}/memberships/{uid} (members.ts). Clients read their own to know which changes a total
 * holds (client/src/member-coverage.ts).
 */
export const MEMBERSHIPS = "memberships";

// The backend's own collections, which the contract (docs/api.md) names only as bookkeeping. Their ids are what
// Firestore scopes collection-group queries, TTL policies and index overrides by: every collection with
// that id, at any depth, anywhere in the database. An app's own `requests`, `rollup` or `cleanup`
// collections (common words) would be read by the sweeps' collection-group queries, and an app's own
// `requests/*` documents with an `expireAt` field deleted by the TTL policy. So these ids name the
// project: no app uses them by accident, and a query or policy on them reaches only the backend's
// documents. (shards and members are in the contract; nothing queries or indexes them as groups.)

/** Idempotency records of incrementCounter, one per requestId: counters/{id}/exactCounterRequests/{requestId}. */
export const REQUESTS = "exactCounterRequests";
/**
 * Rollup coordination: counters/{id}/exactCounterRollup/lease holds the pending claim, if any
 * (rollup/claim.ts); the sweep queries the group for stale claims.
 */
export const ROLLUP = "exactCounterRollup";
export const LEASE_ID = "lease";
/**
 * The deletion marker: counters/{id}/exactCounterCleanup/pending exists from the transaction that deletes
 * a counter until its members, membership history and idempotency records are gone (delete.ts,
 * deletion.ts); the sweep queries the group for stranded cleanups.
 */
export const CLEANUP = "exactCounterCleanup";
export const PENDING_ID = "pending";
/**
 * What a counter id took over from the firestore-counter extension: counters/{id}/exactCounterExtension/{key},
 * one per document and field whose count moves to it (counters/extension-take.ts, extensionRecord). It
 * records that the field was settled, once (model/extension-field.ts): a later migration, the fold trigger,
 * a mirror writing the total back into that field and a counter created again with the id never add it
 * again. It outlives a delete of the counter (counters/deletion.ts leaves it): a document that no parent
 * stands above, which no listing of counters returns.
 */
export const EXTENSION_RECORDS = "exactCounterExtension";

/**
 * What a document counter knows of each document it has seen (DOCUMENT_COUNTERS): one record per document,
 * counters/{id}/exactCounterDocuments/{key} (model/document-records.ts): what it counts now and the version
 * that reflects. Written only in a batch with a shard write or the counter's creation while it counts
 * something, so a deleted counter's cleanup removes them for good (deletion.ts); one that counts nothing
 * carries `expireAt`, for the TTL policy (firestore.indexes.json).
 */
export const DOCUMENT_RECORDS = "exactCounterDocuments";
/**
 * When a document counter was last deleted: counters/{id}/exactCounterDeleted/last, written by deleteCounter
 * and left by its cleanup (it expires by the TTL policy), so that events of writes before the deletion do
 * not count again in the counter the next change creates (model/document-records.ts).
 */
export const DELETED = "exactCounterDeleted";
export const DELETED_ID = "last";

/** The cleanup trigger's document pattern: the deletion marker (entry/cleanupDeletedCounter.ts). */
export const CLEANUP_DOCUMENT_PATTERN = `${COUNTERS}/{counterId}/${CLEANUP}/${PENDING_ID}`;

/** The rollup trigger's document pattern: every write of a shard (entry/rollupTotal.ts). */
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

/**
 * Whether `ref` is a document the backend keeps under a counter: counters/{id}/{collection}/{docId} with
 * the top-level `counters` collection. A collection-group query returns documents of its collection id
 * wherever they are; the sweeps take only these.
 */
export function isUnderCounter(ref: DocumentReference, collection: string, docId: string): boolean {
  const counter = ref.parent.parent;
  return ref.id === docId && ref.parent.id === collection && counter !== null && counter.parent.id === COUNTERS && counter.parent.parent === null;
}

export function membershipRef(db: Firestore, counterId: string, uid: string): DocumentReference {
  return membershipsRef(db, counterId).doc(uid);
}

export function cleanupRef(db: Firestore, counterId: string): DocumentReference {
  return counterRef(db, counterId).collection(CLEANUP).doc(PENDING_ID);
}

/** The record of what `counterId` took over from `documentPath`'s `field` (the key escapes the path's slashes). */
export function extensionRecordRef(db: Firestore, counterId: string, documentPath: string, field: string): DocumentReference {
  return counterRef(db, counterId).collection(EXTENSION_RECORDS).doc(encodeURIComponent(`${documentPath}:${field}`));
}

/**
 * Where the counters codebase publishes the params the admin entry must share with it (model/deployed-params.ts):
 * counters/~exactCounter/exactCounterParams/deployed, below an id no counter can have and whose parent
 * document never exists.
 */
export function deployedParamsRef(db: Firestore): DocumentReference {
  return db.collection(COUNTERS).doc(PARAMS_PARENT_ID).collection(PARAMS_COLLECTION).doc(PARAMS_DOCUMENT_ID);
}

/**
 * A document record's id: the document's path with its slashes escaped (one id per path), or, for a path
 * whose escaped form would not fit a document id (1,500 bytes), `~` and the SHA-256 of the path.
 */
export function documentRecordKey(documentPath: string): string {
  const escaped = encodeURIComponent(documentPath);
  return escaped.length <= 1400 ? escaped : `~${createHash("sha256").update(documentPath).digest("hex")}`;
}

export function documentRecordsRef(db: Firestore, counterId: string): CollectionReference {
  return counterRef(db, counterId).collection(DOCUMENT_RECORDS);
}

export function documentRecordRef(db: Firestore, counterId: string, documentPath: string): DocumentReference {
  return documentRecordsRef(db, counterId).doc(documentRecordKey(documentPath));
}

export function deletedRef(db: Firestore, counterId: string): DocumentReference {
  return counterRef(db, counterId).collection(DELETED).doc(DELETED_ID);
}
