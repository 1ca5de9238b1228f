// Old app versions of the firestore-counter extension writing their shards, recorded as the platform would
// deliver their events to foldExtensionShards (the wrapped trigger): a write's before and after snapshots,
// delivered once, twice, late or out of order by the test. Shared by the extension tests of the wrapped tier.
import { randomUUID } from "node:crypto";
import type { DocumentSnapshot, Firestore } from "firebase-admin/firestore";
import { fft } from "./wrapped";
import { foldExtensionShards } from "../../functions/src/entry/foldExtensionShards";
import { oldClient, SHARDS } from "./extension";

/** One recorded write of a shard document: the event the platform would deliver for it. */
export interface RecordedShardWrite {
  collection: string;
  document: string;
  shardId: string;
  before: DocumentSnapshot;
  after: DocumentSnapshot;
  eventId: string;
}

/** Writes a shard document of `document` (a top-level collection's document) with `write`, and records its event. */
export async function recordedShardWrite(db: Firestore, document: string, shardId: string, write: () => Promise<unknown>): Promise<RecordedShardWrite> {
  const ref = db.doc(document).collection(SHARDS).doc(shardId);
  const before = await ref.get();
  await write();
  const after = await ref.get();
  const [collection, id] = document.split("/") as [string, string];
  return { collection, document: id, shardId, before, after, eventId: `evt-${randomUUID()}` };
}

/** An old client's incrementBy(n) of `field` on its shard `shardId`, recorded (not delivered). */
export function oldWrite(db: Firestore, document: string, field: string, n: number, shardId: string = randomUUID()): Promise<RecordedShardWrite> {
  return recordedShardWrite(db, document, shardId, () => oldClient(db, document, field, shardId).incrementBy(n));
}

/** Delivers a recorded write's event to the wrapped foldExtensionShards, as the platform would (`document` overrides the path's id). */
export function deliverFold(event: RecordedShardWrite, params: { document?: string } = {}): Promise<unknown> {
  const wrapped = fft.wrap(foldExtensionShards) as unknown as (event: Record<string, unknown>) => Promise<unknown>;
  return wrapped({
    data: fft.makeChange(event.before, event.after),
    params: { collection: event.collection, document: params.document ?? event.document, shardId: event.shardId },
    id: event.eventId,
  });
}
