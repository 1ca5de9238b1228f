// Where the naive codebase's documents live. The naive rollup's counters: a collection of their own, so
// the product trigger (counters/{id}/shards/{n}) never sees their writes and the naive trigger never sees
// the product's. The usual document trigger's posts (documents.ts): a collection no rule of ours watches.
// The no-op trigger's documents (noop.ts): collections no other trigger matches.
import type { CollectionReference, DocumentReference, Firestore } from "firebase-admin/firestore";

export const NAIVE_COUNTERS = "naiveCounters";
export const NAIVE_SHARD_PATTERN = `${NAIVE_COUNTERS}/{counterId}/shards/{shardId}`;
/** The posts whose comments the usual document trigger counts (documents.ts), each on the naive counter of the post's id. */
export const NAIVE_POSTS = "naivePosts";
export const NAIVE_DOCUMENT_PATTERN = `${NAIVE_POSTS}/{post}/comments/{comment}`;
/** Every write here is an event for the no-op trigger. */
export const NOOP_EVENTS = "benchNoopEvents";
/** Where the no-op trigger marks that it ran a marker's event (no trigger listens here). */
export const NOOP_DONE = "benchNoopDone";

export function naiveCounterRef(db: Firestore, counterId: string): DocumentReference {
  return db.collection(NAIVE_COUNTERS).doc(counterId);
}

export function naiveShardsRef(db: Firestore, counterId: string): CollectionReference {
  return naiveCounterRef(db, counterId).collection("shards");
}

export function naiveShardRef(db: Firestore, counterId: string, shardId: string | number): DocumentReference {
  return naiveShardsRef(db, counterId).doc(String(shardId));
}
