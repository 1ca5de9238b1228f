// The document counters' store over Firestore (store.ts). A read is one getAll of the parent and the
// records (and, when the counter does not exist, one of its deletion's time and its cleanup marker); a
// commit is one batch: each record created (create() fails if one appeared) or updated on condition that it
// is the version read, with `increment(delta)` on one shard (update() fails on a shard that is gone), or
// the counter's creation (create() of the parent fails if another writer made it first; the marker is
// asserted absent, so no counter appears under a deletion's cleanup). A failed condition is StaleRead. A
// commit answers with its shard write's time (the batch's results, in the order of its writes). A counter on
// a leaderboard is created on it, at 0, in the creating batch (leaderboard/entry-writes.ts), as createCounter's are.
import { FieldPath, FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type WriteBatch, type WriteResult } from "firebase-admin/firestore";
import { newCounterDocument } from "../counters/create";
import { BOARD_FIELD, writeEntry } from "../leaderboard/entry-writes";
import { shapeIn } from "../counters/shape";
import { NEW_SHARD, shardIncrement } from "../counters/shard-writes";
import { GRPC, grpcCode } from "../model/errors";
import { expiryMs, type CounterRead, type RecordState } from "./records";
import { versionAt, type Version } from "../model/time";
import type { NewCounterShape } from "../model/new-counter";
import { cleanupRef, counterRef, COUNTERS, deletedRef, documentRecordRef, documentRecordsRef, shardRef } from "../model/paths";
import { microsCeil } from "../model/time";
import { StaleRead, type CommitOptions, type DocumentSource, type DocumentStore, type ListedRecord, type SeenDocument } from "./store";

/** `rollup.documentsSince` on the parent: the version of the deletion before the counter was created again. */
export const DOCUMENTS_SINCE = "rollup.documentsSince";

/** Errors of a commit that a fresh read gets past: a record or the counter changed since the read, a create raced, a shard went. */
const STALE = new Set<number>([GRPC.ABORTED, GRPC.FAILED_PRECONDITION, GRPC.ALREADY_EXISTS, GRPC.NOT_FOUND]);

export function firestoreDocumentStore(db: Firestore): DocumentStore & DocumentSource {
  return {
    async read(counterId, documents) {
      const [parent, ...records] = await db.getAll(counterRef(db, counterId), ...documents.map((d) => documentRecordRef(db, counterId, d)));
      const handle = new Map<string, DocumentSnapshot>();
      const states = new Map<string, RecordState | null>();
      documents.forEach((document, i) => {
        handle.set(document, records[i]!);
        states.set(document, recordState(records[i]!));
      });
      if (parent!.exists) {
        const shape = shapeIn(counterId, parent!);
        const since = parent!.get(DOCUMENTS_SINCE) as unknown;
        const counter: CounterRead = { exists: true, unique: shape.unique, since: typeof since === "string" ? since : null };
        return { counter, records: states, shape: { numShards: shape.numShards, windowed: shape.windowed }, handle };
      }
      const [deleted, marker] = await db.getAll(deletedRef(db, counterId), cleanupRef(db, counterId));
      const counter: CounterRead = { exists: false, deleting: marker!.exists, deletedAt: deleted!.exists ? versionAt(deleted!.updateTime!) : null };
      return { counter, records: states, shape: null, handle };
    },

    async createRecounted(counterId, shape, since, nowMs) {
      const parent = newCounterDocument(shape.numShards, { unique: false, windowed: shape.windowed, nowMs });
      const rollup = { ...(parent.rollup as Record<string, unknown>), ...(since === null ? {} : { documentsSince: since }) };
      const batch = db.batch();
      batch.create(counterRef(db, counterId), { ...parent, kept: "recount", rollup, ...boardField(shape) });
      for (let i = 0; i < shape.numShards; i++) batch.set(shardRef(db, counterId, i), NEW_SHARD);
      batch.delete(cleanupRef(db, counterId), { exists: false });
      createEntry(batch, db, counterId, shape);
      try {
        await batch.commit();
        return "created";
      } catch (error) {
        const code = grpcCode(error);
        if (code === GRPC.ALREADY_EXISTS) return "exists";
        if (STALE.has(code ?? -1)) throw new StaleRead(`counter "${counterId}" is being deleted: ${error instanceof Error ? error.message : String(error)}`);
        throw error;
      }
    },

    async commit(counterId, read, plan, options) {
      const handle = read.handle as Map<string, DocumentSnapshot>;
      const batch = db.batch();
      for (const write of plan.writes) {
        const ref = documentRecordRef(db, counterId, write.document);
        const expiry = expiryMs(write.counted, options.nowMs);
        const fields = { document: write.document, counted: write.counted, version: write.version };
        if (!write.existed) batch.create(ref, expiry === null ? fields : { ...fields, expireAt: Timestamp.fromMillis(expiry) });
        else {
          const expireAt = expiry === null ? FieldValue.delete() : Timestamp.fromMillis(expiry);
          batch.update(ref, { ...fields, expireAt }, { lastUpdateTime: handle.get(write.document)!.updateTime! });
        }
      }
      // Where the shard that takes the delta is among the batch's writes (its results come in that order).
      let shardAt: number | null = null;
      if (plan.counter === "shard") {
        shardAt = plan.writes.length;
        batch.update(shardRef(db, counterId, options.shard), shardIncrement(plan.delta, options.day));
      } else if (plan.counter === "create") {
        const since = read.counter.exists ? null : read.counter.deletedAt;
        shardAt = plan.writes.length + CREATED_SHARDS_AFTER + options.shard;
        createCounterWith(batch, db, counterId, options.create!, { ...options, delta: plan.delta, since });
      }
      let results: WriteResult[];
      try {
        results = await batch.commit();
      } catch (error) {
        if (STALE.has(grpcCode(error) ?? -1)) throw new StaleRead(`counter "${counterId}" or a record changed since the read: ${error instanceof Error ? error.message : String(error)}`);
        throw error;
      }
      if (shardAt === null) return null;
      const { writeTime } = results[shardAt]!;
      return { shard: options.shard, writtenAtUs: microsCeil(writeTime), writtenAtExact: writeTime.nanoseconds % 1000 === 0 };
    },

    async listDocuments(listing, after, limit) {
      let query = ("collection" in listing ? db.collection(listing.collection) : db.collectionGroup(listing.group)).orderBy(FieldPath.documentId()).limit(limit);
      if (after !== undefined) query = query.startAfter("collection" in listing ? after.slice(after.lastIndexOf("/") + 1) : db.doc(after));
      const page = await query.get();
      return page.docs.map((doc) => ({ path: doc.ref.path, data: doc.data(), version: versionAt(doc.updateTime) }));
    },

    async readDocuments(paths) {
      // One read-only transaction: every document at the same read time, without a lock.
      return db.runTransaction(
        async (tx) => {
          const snaps = paths.length === 0 ? [] : await tx.getAll(...paths.map((p) => db.doc(p)));
          const present = new Map<string, SeenDocument>();
          for (const snap of snaps) if (snap.exists) present.set(snap.ref.path, { path: snap.ref.path, data: snap.data()!, version: versionAt(snap.updateTime!) });
          const readTime = snaps[0]?.readTime ?? (await tx.get(counterRef(db, "-"))).readTime;
          return { present, readVersion: versionAt(readTime) };
        },
        { readOnly: true },
      );
    },

    async listCounters(range, after, limit) {
      let query = db.collection(COUNTERS).orderBy(FieldPath.documentId());
      if (range.from !== "") query = query.where(FieldPath.documentId(), ">=", range.from).where(FieldPath.documentId(), "<", range.to);
      if (after !== undefined) query = query.startAfter(after);
      const page = await query.select().limit(limit).get();
      return page.docs.map((doc) => doc.id);
    },

    async listMoving(limit) {
      const page = await db.collection(COUNTERS).where("kept", "==", "moving").orderBy(FieldPath.documentId()).select().limit(limit).get();
      return page.docs.map((doc) => doc.id);
    },

    async listRecords(counterId, after, limit) {
      let query = documentRecordsRef(db, counterId).orderBy(FieldPath.documentId()).limit(limit);
      if (after !== undefined) query = query.startAfter(after);
      const page = await query.get();
      const records: ListedRecord[] = [];
      for (const doc of page.docs) {
        const state = recordState(doc);
        const document = doc.get("document") as unknown;
        if (state !== null && typeof document === "string") records.push({ ...state, document, key: doc.id });
      }
      return records;
    },
  };
}

/** A record as stored; null when absent. Only the functions write records: a malformed one is a bug, not input. */
function recordState(snap: DocumentSnapshot): RecordState | null {
  if (!snap.exists) return null;
  const counted = snap.get("counted") as unknown;
  const version = snap.get("version") as unknown;
  if (typeof counted !== "number" || !Number.isSafeInteger(counted) || typeof version !== "string") {
    throw new Error(`the document record ${snap.ref.path} is malformed (counted ${JSON.stringify(counted)}, version ${JSON.stringify(version)})`);
  }
  return { counted, version };
}

/**
 * A new counter on a leaderboard (`shape.board`): the parent's `board` field, and its entry at the parent's
 * total, 0, added last to `batch` (which creates the parent: the shards' places in its results stay as they
 * are). Nothing for a counter on none. The first commit of its count moves the entry with the total
 * (rollup/firestore-parent.ts).
 */
function boardField(shape: NewCounterShape): Record<string, string> {
  return shape.board === undefined ? {} : { [BOARD_FIELD]: shape.board };
}

function createEntry(batch: WriteBatch, db: Firestore, counterId: string, shape: NewCounterShape): void {
  if (shape.board !== undefined) writeEntry(batch, db, shape.board, counterId, 0);
}

/** Writes createCounterWith adds before the shards: the parent. */
const CREATED_SHARDS_AFTER = 1;

/**
 * Creates the counter with its first amount on shard `options.shard`, plain, with the shape the params give
 * it, in the commit's own batch (the parent, then shards 0 to numShards - 1: CREATED_SHARDS_AFTER);
 * `documentsSince` keeps the time of the deletion before it, if any.
 */
function createCounterWith(
  batch: WriteBatch,
  db: Firestore,
  counterId: string,
  shape: NewCounterShape,
  options: CommitOptions & { delta: number; since: Version | null },
): void {
  const parent = newCounterDocument(shape.numShards, { unique: false, windowed: shape.windowed, nowMs: options.nowMs });
  const rollup = { ...(parent.rollup as Record<string, unknown>), ...(options.since === null ? {} : { documentsSince: options.since }) };
  batch.create(counterRef(db, counterId), { ...parent, kept: "records", rollup, ...boardField(shape) });
  for (let i = 0; i < shape.numShards; i++) {
    if (i !== options.shard) batch.set(shardRef(db, counterId, i), NEW_SHARD);
    else {
      const days = options.day !== null && options.delta !== 0 ? { days: { [options.day]: options.delta } } : {};
      batch.set(shardRef(db, counterId, i), { count: options.delta, writes: 1, ...days });
    }
  }
  batch.delete(cleanupRef(db, counterId), { exists: false });
  createEntry(batch, db, counterId, shape);
}
