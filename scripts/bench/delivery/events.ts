// The event recorder: makes an increment as incrementCounter makes it (one batch, `increment(1)` on a
// random shard), or the write the counter's own `write` makes (setMember through the admin entry, on the
// shard the product picks), and records the event a trigger would get for it: the shard's real before and
// after snapshots (with their real update times), an event id and the event time. Used wherever the
// benchmark delivers events itself (workload 3, production-like delivery), on a project whose writes the
// emulator's own triggers do not serve, so no event runs twice.
import { randomUUID } from "node:crypto";
import type { DocumentSnapshot, Timestamp } from "firebase-admin/firestore";
import { microsCeil } from "../../../functions/src/model/time";
import { pickShard } from "../../../functions/src/model/shards";
import { callableRead } from "../callable";
import { shardUpdateOf, type Counter, type OwnShardWriter, type ShardWriteRecord, type ShardWriter } from "../counters";

export interface RecordedEvent {
  record: ShardWriteRecord;
  before: DocumentSnapshot;
  after: DocumentSnapshot;
  eventId: string;
  /** RFC 3339 with nanoseconds: the write's commit time, as CloudEvents carry it. */
  time: string;
}

export type RecordIncrement = (counter: Counter) => Promise<RecordedEvent>;

/**
 * A recorder for increments on `counters`. Writes to one shard are made one at a time, so each event's
 * before and after are exactly its own write's; the after snapshot of one write is the before snapshot
 * of the next. Every shard is read once up front, so an increment costs two requests (the write and the
 * read of its after snapshot), not three. A counter whose writes pick their own shard (`write`) has its
 * writes made one at a time, and after each its shards are read again to find the one written.
 */
export async function eventRecorder(counters: readonly Counter[]): Promise<RecordIncrement> {
  const queues = new Map<string, Promise<DocumentSnapshot | undefined>>();
  const last = new Map<string, DocumentSnapshot>();
  for (const counter of counters) {
    for (const shard of (await counter.shards.get()).docs) {
      queues.set(shard.ref.path, Promise.resolve(shard));
      last.set(shard.ref.path, shard);
    }
  }
  const counterQueues = new Map<string, Promise<unknown>>();
  return (counter) => {
    if (counter.write !== undefined) {
      const write = counter.write;
      const next = (counterQueues.get(counter.id) ?? Promise.resolve()).then(() => ownShardWrite(counter, write, last));
      counterQueues.set(counter.id, next.catch(() => undefined));
      return next;
    }
    const shard = pickShard(counter.numShards);
    const ref = counter.shards.doc(String(shard));
    let recorded: RecordedEvent | undefined;
    const task = async (last: DocumentSnapshot | undefined): Promise<DocumentSnapshot> => {
      const before = last ?? (await ref.get());
      const { writeTime, delta } = await incrementWrite(counter, shard);
      const after = await ref.get();
      if (after.updateTime?.isEqual(writeTime) !== true) {
        throw new Error(`shard ${ref.path} was written by someone else during the benchmark`);
      }
      recorded = {
        record: { counterId: counter.id, shard, delta, writtenAtUs: microsCeil(writeTime) },
        before,
        after,
        eventId: randomUUID(),
        time: rfc3339(writeTime),
      };
      return after;
    };
    const next = (queues.get(ref.path) ?? Promise.resolve(undefined)).then(task);
    // After a failed write, the next one reads its own before snapshot.
    queues.set(ref.path, next.catch(() => undefined));
    return next.then(() => recorded!);
  };
}

/**
 * One write whose shard the product picks (`write`), made while no other write of its counter is: the shard
 * written is the one whose update time is the write's commit time, its before snapshot the one the
 * recorder last saw of it (`last`, which this keeps up to date).
 */
async function ownShardWrite(counter: Counter, write: OwnShardWriter, last: Map<string, DocumentSnapshot>): Promise<RecordedEvent> {
  const { writeTime, delta } = await write(counter);
  const after = (await counter.shards.get()).docs.find((doc) => doc.updateTime.isEqual(writeTime));
  if (after === undefined) throw new Error(`no shard of counter ${counter.id} was written at the write's commit time`);
  const before = last.get(after.ref.path);
  // A shard the counter grew since the recorder read them: its state before the write is not known here.
  if (before === undefined) throw new Error(`counter ${counter.id} grew shard ${after.id} during the phase: size the workload below its capacity`);
  last.set(after.ref.path, after);
  return {
    record: { counterId: counter.id, shard: Number(after.id), delta, writtenAtUs: microsCeil(writeTime) },
    before,
    after,
    eventId: randomUUID(),
    time: rfc3339(writeTime),
  };
}

/** An increment of 1 as incrementCounter makes it: its shape read (callable.ts, counted there), then one batch, `increment(1)` on the shard (ours: and on its `writes`, and a windowed counter's day). */
const incrementWrite: ShardWriter = async (counter, shard) => {
  callableRead(counter);
  const batch = counter.parent.firestore.batch();
  batch.update(counter.shards.doc(String(shard)), shardUpdateOf(counter, 1));
  const [result] = await batch.commit();
  return { writeTime: result!.writeTime, delta: 1 };
};

/** RFC 3339 with nanoseconds, as CloudEvents carry the event time. */
export function rfc3339(ts: Timestamp): string {
  return `${new Date(ts.seconds * 1000).toISOString().slice(0, 19)}.${String(ts.nanoseconds).padStart(9, "0")}Z`;
}
