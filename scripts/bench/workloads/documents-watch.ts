// Workload 11's listeners (documents-load.ts): on our counters' shards, each shard write becomes the event
// rollupTotal gets for it (the shard's state before and after; `writes` on the shard, one more per applied
// write, says whether the listener ever merged two writes into one state); on their document records, each
// state with its version and update time (documents-measure.ts, the lag).
import { randomUUID } from "node:crypto";
import type { DocumentSnapshot, Firestore } from "firebase-admin/firestore";
import { documentRecordsRef } from "../../../functions/src/model/paths";
import { microsCeil } from "../../../functions/src/model/time";
import type { Counter } from "../counters";
import { rfc3339, type RecordedEvent } from "../delivery/events";
import { sleep } from "../pace";
import type { RecordSeen } from "./documents-measure";

/** Listens to every shard of `counters` and hands each shard write's event to `arrive` (the header). */
export async function watchShards(counters: readonly Counter[], arrive: (event: RecordedEvent) => void) {
  // A shard's state before its creation: a missing document (the rollup reads only whether it exists and its data).
  const missing = await counters[0]!.shards.doc("0").get();
  const last = new Map<string, DocumentSnapshot>();
  let merged = 0;
  let failure: Error | undefined;
  const field = (snap: DocumentSnapshot, name: string) => (snap.exists && typeof snap.get(name) === "number" ? (snap.get(name) as number) : 0);
  const stops = counters.map((counter) =>
    counter.shards.onSnapshot(
      (query) => {
        for (const change of query.docChanges()) {
          if (change.type === "removed") continue;
          const after = change.doc;
          const before = last.get(after.ref.path) ?? missing;
          last.set(after.ref.path, after);
          const writes = field(after, "writes") - field(before, "writes");
          // A shard created at 0 (growth) applied nothing: its event is the rollup's skip-unchanged, left out of every cost row.
          if (writes === 0) continue;
          merged += writes - 1;
          const writtenAtUs = microsCeil(after.updateTime);
          arrive({ record: { counterId: counter.id, shard: Number(after.id), delta: field(after, "count") - field(before, "count"), writtenAtUs }, before, after, eventId: randomUUID(), time: rfc3339(after.updateTime) });
        }
      },
      (error) => {
        failure = error;
      },
    ),
  );
  return {
    merged: () => merged,
    stop: () => stops.forEach((stop) => stop()),
    /** Waits until the listener has seen every shard as it is now (each of its writes has arrived). */
    async caughtUp(): Promise<void> {
      const started = Date.now();
      for (const counter of counters) {
        for (const shard of (await counter.shards.get()).docs) {
          while (last.get(shard.ref.path)?.updateTime?.isEqual(shard.updateTime) !== true) {
            if (failure !== undefined) throw failure;
            if (Date.now() - started > 10_000) throw new Error(`the listener on ${shard.ref.path} missed its last state`);
            await sleep(20);
          }
        }
      }
    },
  };
}

/** Listens to every record of the counters (functions/src/documents/firestore-store.ts writes them with the shard). */
export function watchRecords(db: Firestore, ids: readonly string[]) {
  const seen = new Map<string, RecordSeen[]>();
  const latest = new Map<string, number>();
  let failure: Error | undefined;
  const stops = ids.map((id) =>
    documentRecordsRef(db, id).onSnapshot(
      (query) => {
        for (const change of query.docChanges()) {
          if (change.type === "removed") continue;
          const doc = change.doc;
          const path = doc.get("document") as string;
          const atUs = microsCeil(doc.updateTime);
          (seen.get(path) ?? seen.set(path, []).get(path)!).push({ path, version: doc.get("version") as string, counted: doc.get("counted") as number, atUs });
          latest.set(doc.ref.path, atUs);
        }
      },
      (error) => {
        failure = error;
      },
    ),
  );
  return {
    seen,
    stop: () => stops.forEach((stop) => stop()),
    async caughtUp(): Promise<void> {
      const started = Date.now();
      for (const id of ids) {
        for (const doc of (await documentRecordsRef(db, id).get()).docs) {
          while ((latest.get(doc.ref.path) ?? 0) < microsCeil(doc.updateTime)) {
            if (failure !== undefined) throw failure;
            if (Date.now() - started > 10_000) throw new Error(`the listener on ${doc.ref.path} missed its last state`);
            await sleep(20);
          }
        }
      }
    },
  };
}
