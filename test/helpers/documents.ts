// Reading what a counter holds, for assertions; shared by the wrapped tier (its own project) and e2e
// (the functions emulator's project), each passing its Firestore.
import type { DocumentSnapshot, Firestore } from "firebase-admin/firestore";
import { counterRef, shardsRef } from "../../functions/src/model/paths";

/** Σ count over the shards, read directly. */
export async function shardSumIn(db: Firestore, counterId: string): Promise<number> {
  const snap = await shardsRef(db, counterId).get();
  return snap.docs.reduce((sum, doc) => sum + ((doc.get("count") as number | undefined) ?? 0), 0);
}

/** The parent (if it exists) and every document in its subcollections. */
export async function documentsUnderIn(db: Firestore, counterId: string): Promise<DocumentSnapshot[]> {
  const ref = counterRef(db, counterId);
  const docs: DocumentSnapshot[] = [];
  const parent = await ref.get();
  if (parent.exists) docs.push(parent);
  for (const col of await ref.listCollections()) docs.push(...(await col.get()).docs);
  return docs;
}

/** The paths of documentsUnderIn: proves "nothing written" / "nothing left". */
export async function pathsUnderIn(db: Firestore, counterId: string): Promise<string[]> {
  return (await documentsUnderIn(db, counterId)).map((doc) => doc.ref.path);
}
