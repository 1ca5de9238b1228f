// Where every counter document lives. Shared by the functions, the tests and the scripts, so that a
// path is spelled once.
import { createHash } from "node:crypto";
import type { CollectionReference, DocumentReference, Firestore } from "firebase-admin/firestore";
import { entryKey } from "./board";
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
/**
 * The parent's pending promise (rollup/plan.ts): `rollup.trailing` = {dueAt, owner}; its due time is the
 * sweep's query (TRAILING_DUE_AT, indexed alone: firestore.indexes.json).
 */
export const TRAILING = "rollup.trailing";
export const TRAILING_DUE_AT = "rollup.trailing.dueAt";
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
 * The previous version's rollup claims: counters/{id}/exactCounterRollup/lease held a pending claim, if any.
 * Nothing writes it any more; the sweep finishes the claims left at the upgrade (rollup/legacy-lease.ts).
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
 * counters/{id}/exactCounterDocuments/{key} (documents/records.ts): what it counts now and the version
 * that reflects. Written only in a batch with a shard write or the counter's creation while it counts
 * something, so a deleted counter's cleanup removes them for good (deletion.ts); one that counts nothing
 * carries `expireAt`, for the TTL policy (firestore.indexes.json).
 */
export const DOCUMENT_RECORDS = "exactCounterDocuments";
/**
 * When a document counter was last deleted: counters/{id}/exactCounterDeleted/last, written by deleteCounter
 * and left by its cleanup (it expires by the TTL policy), so that events of writes before the deletion do
 * not count again in the counter the next change creates (documents/records.ts).
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
 * How far the rollup sweep has checked the promises (rollup/sweep.ts): counters/~exactCounter/exactCounterSweep/promises,
 * beside the published params, below an id no counter can have.
 */
export function sweepMarkRef(db: Firestore): DocumentReference {
  return db.collection(COUNTERS).doc(PARAMS_PARENT_ID).collection(SWEEP).doc(SWEEP_MARK_ID);
}

/** The sweep's own collection (sweepMarkRef), and its one document. */
export const SWEEP = "exactCounterSweep";
export const SWEEP_MARK_ID = "promises";
/** How far the sweep has checked the leaderboards' promises: counters/~exactCounter/exactCounterSweep/boards. */
export const BOARD_SWEEP_MARK_ID = "boards";

/**
 * The leaderboards (LEADERBOARDS, model/board.ts): each board's summary is
 * counters/~exactCounter/exactCounterBoards/{board}, beside the published params, below an id no counter can have;
 * its entries, one per counter on the board, are .../exactCounterEntries/{entryKey} under it.
 */
export const BOARDS = "exactCounterBoards";
export const ENTRIES = "exactCounterEntries";

/** The board rollup's trigger pattern: every write of an entry (entry/rollupBoard.ts). */
export const BOARD_ENTRY_PATTERN = `${COUNTERS}/${PARAMS_PARENT_ID}/${BOARDS}/{board}/${ENTRIES}/{entry}`;

export function boardsRef(db: Firestore): CollectionReference {
  return db.collection(COUNTERS).doc(PARAMS_PARENT_ID).collection(BOARDS);
}

export function boardRef(db: Firestore, board: string): DocumentReference {
  return boardsRef(db).doc(board);
}

export function entriesRef(db: Firestore, board: string): CollectionReference {
  return boardRef(db, board).collection(ENTRIES);
}

/** The board's entry of `counterId`: its id is a hash of the counter id (model/board.ts, entryKey). */
export function entryRef(db: Firestore, board: string, counterId: string): DocumentReference {
  return entriesRef(db, board).doc(entryKey(counterId));
}

/** How far the sweep has checked the leaderboards' promises (rollup/sweep.ts over leaderboard/board-store.ts). */
export function boardSweepMarkRef(db: Firestore): DocumentReference {
  return db.collection(COUNTERS).doc(PARAMS_PARENT_ID).collection(SWEEP).doc(BOARD_SWEEP_MARK_ID);
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
