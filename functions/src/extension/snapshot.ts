// What one fold of an extension counter decides from (fold.ts): the shard documents it moves, the app's
// document, the counter's parent, its record of the field and its deletion marker, read in one read-only
// transaction, so at one read time, without a lock on anything an old client or the rollup writes.
import { FieldPath, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import { cleanupRef, counterRef, extensionRecordRef } from "../model/paths";
import { EXTENSION_SHARDS, type ExtensionSource } from "../model/extension-rules";

export interface Read {
  shards: DocumentSnapshot[];
  document: DocumentSnapshot;
  parent: DocumentSnapshot;
  record: DocumentSnapshot;
  marker: DocumentSnapshot;
  /** Documents the page listed (a full page means there may be more), and the last one's id. */
  listed: number;
  lastId: string | undefined;
}

/** Everything a fold decides from, at one read time. */
export async function readState(db: Firestore, source: ExtensionSource, shardIds: readonly string[] | undefined, pageSize: number, after: string | undefined): Promise<Read> {
  const documentRef = db.doc(source.document);
  const shardsRef = documentRef.collection(EXTENSION_SHARDS);
  return db.runTransaction(
    async (tx) => {
      let shards: DocumentSnapshot[];
      let listed: number;
      let lastId: string | undefined;
      if (shardIds !== undefined) {
        shards = shardIds.length === 0 ? [] : (await tx.getAll(...shardIds.map((id) => shardsRef.doc(id)))).filter((s) => s.exists);
        listed = shardIds.length;
      } else {
        let query = shardsRef.orderBy(FieldPath.documentId()).limit(pageSize);
        if (after !== undefined) query = query.startAfter(after);
        const page = await tx.get(query);
        shards = page.docs;
        listed = page.size;
        lastId = page.docs.at(-1)?.id;
      }
      const [document, parent, record, marker] = await tx.getAll(
        documentRef,
        counterRef(db, source.counterId),
        extensionRecordRef(db, source.counterId, source.document, source.field),
        cleanupRef(db, source.counterId),
      );
      return { shards, document: document!, parent: parent!, record: record!, marker: marker!, listed, lastId };
    },
    { readOnly: true },
  );
}
