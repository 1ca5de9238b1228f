// Where the naive rollup's counters live: a collection of their own, so the product trigger
// (counters/{id}/shards/{n}) never sees their writes and the naive trigger never sees the product's.
import type { CollectionReference, DocumentReference, Firestore } from "firebase-admin/firestore";

export const NAIVE_COUNTERS = "naiveCounters";
export const NAIVE_SHARD_PATTERN = `${NAIVE_COUNTERS}/{counterId}/shards/{shardId}`;

export function naiveCounterRef(db: Firestore, counterId: string): DocumentReference {
  return db.collection(NAIVE_COUNTERS).doc(counterId);
}

export function naiveShardsRef(db: Firestore, counterId: string): CollectionReference {
  return naiveCounterRef(db, counterId).collection("shards");
}

export function naiveShardRef(db: Firestore, counterId: string, shardId: string | number): DocumentReference {
  return naiveShardsRef(db, counterId).doc(String(shardId));
}
