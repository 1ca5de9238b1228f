// What the document counters read and write, behind one interface (as the rollup's RollupStore): the
// Firestore one (firestore-store.ts) for the trigger, the backfill and reconcile, and the model check's
// in-memory one, which runs the same apply and backfill code over random schedules.
import type { Listing } from "./match";
import type { Plan, Read, RecordState } from "./records";
import type { Version } from "../model/time";
import type { NewCounterShape } from "../model/new-counter";

/** One read of a counter and of the records of some documents, with what its commit is conditioned on. */
export interface StoreRead extends Read {
  /** numShards and windowed of an existing counter; null when it does not exist. */
  shape: NewCounterShape | null;
  /** The store's own: what the commit conditions each record on (Firestore: the update times read). */
  handle: unknown;
}

/** How a commit touches the counter: the shard and day of its increment, or the shape of the counter it creates. */
export interface CommitOptions {
  /** The counter's shape when the plan creates it. */
  create: NewCounterShape | null;
  shard: number;
  /** A windowed counter's UTC day for the delta; null otherwise. */
  day: string | null;
  nowMs: number;
}

/**
 * The shard write a commit made: the shard that took the delta and the commit's time, as the write's event
 * will carry it to rollupTotal. The trigger rolls that write up itself at once (entry/documentCounters.ts).
 */
export interface ShardWritten {
  shard: number;
  /** The commit time in microseconds, rounded up (rollup/types.ts, ShardWrite.writtenAtUs). */
  writtenAtUs: number;
  /** The commit time is whole microseconds, as an event's update time is (ShardWrite.writtenAtExact). */
  writtenAtExact: boolean;
}

/** A commit's read went stale (a record or the counter changed since): read again. */
export class StaleRead extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StaleRead";
  }
}

/** How a recounted counter's creation went (DocumentStore.createRecounted). */
export type RecountedCreation = "created" | "exists";

export interface DocumentStore {
  /**
   * Creates a counter kept by recount (`kept: "recount"`, total 0 until its first rollup counts it, shards at 0),
   * with the shape `shape`, conditioned as a creation by records is: the parent absent (create()) and no
   * deletion cleaning up (its marker asserted absent); `since`: the time of the deletion before it, kept as
   * `rollup.documentsSince`. "exists" when another writer created it first; StaleRead when a deletion began.
   */
  createRecounted(counterId: string, shape: NewCounterShape, since: Version | null, nowMs: number): Promise<RecountedCreation>;
  /** The counter and the records of `documents` (their paths), as one read saw them. */
  read(counterId: string, documents: readonly string[]): Promise<StoreRead>;
  /**
   * The plan's records, with the shard increment or the counter's creation, in one atomic write
   * conditioned on what `read` saw of each record (and of the counter's existence). StaleRead otherwise.
   * Resolves with the shard write it made (the increment, or the creation's shard that took the delta);
   * null when the plan writes records only.
   */
  commit(counterId: string, read: StoreRead, plan: Plan, options: CommitOptions): Promise<ShardWritten | null>;
}

/** An app document as a listing or a read saw it. */
export interface SeenDocument {
  path: string;
  data: Record<string, unknown>;
  version: Version;
}

/** A record as a listing of a counter's records saw it. */
export interface ListedRecord extends RecordState {
  document: string;
  /** Its id: where the next page starts. */
  key: string;
}

/** What the backfill and reconcile read besides the counters' records: the app's documents. */
export interface DocumentSource {
  /** Up to `limit` documents of the listing after the document `after` (a path), in path order. */
  listDocuments(listing: Listing, after: string | undefined, limit: number): Promise<SeenDocument[]>;
  /** The documents at `paths` that exist at one read time, and that time's version. */
  readDocuments(paths: readonly string[]): Promise<{ present: Map<string, SeenDocument>; readVersion: Version }>;
  /** Up to `limit` ids of existing counters from `from` (inclusive) to `to` (exclusive), after `after`, in id order. */
  listCounters(range: { from: string; to: string }, after: string | undefined, limit: number): Promise<string[]>;
  /** Up to `limit` ids of counters moving from recount to records (`kept: "moving"`: move.ts), in id order. */
  listMoving(limit: number): Promise<string[]>;
  /** Up to `limit` records of a counter after the record `after` (its key), in key order. */
  listRecords(counterId: string, after: string | undefined, limit: number): Promise<ListedRecord[]>;
}
