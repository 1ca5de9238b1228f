// An in-memory Firestore for the document counters' model check (documents-model.test.ts): the app's
// documents, their records per counter, deletion markers and the time of each counter's last deletion,
// over the rollup's model World (world.ts), which holds the counters themselves (parent, shards, lease) and
// the clock: every write commits atomically at a strictly increasing commit time (whole microseconds) of
// that one clock, a record's precondition is its update time (or its absence), a shard update fails on a
// missing shard, a create fails on an existing parent or under a deletion marker, a read sees one instant.
// It implements functions/src/documents/store.ts directly; documents-schedule.ts puts latency and crashes in
// front of it, and hands each shard write it makes (`onShardWrite`) to rollupTotal's simulated deliveries.
import type { Listing } from "../../../functions/src/documents/match";
import { type CounterRead, type Plan, type RecordState } from "../../../functions/src/documents/records";
import { versionAt, versionJustAfter, type Version } from "../../../functions/src/model/time";
import type { DocumentWrite } from "../../../functions/src/documents/event";
import { StaleRead, type CommitOptions, type DocumentSource, type DocumentStore, type ListedRecord, type RecountedCreation, type SeenDocument, type ShardWritten, type StoreRead } from "../../../functions/src/documents/store";
import type { NewCounterShape } from "../../../functions/src/model/new-counter";
import type { RecountQuery } from "../../../functions/src/rollup/store";
import { documentRecordKey } from "../../../functions/src/model/paths";
import type { ShardWrite } from "../../../functions/src/rollup/types";
import type { World } from "./world";

interface AppDocument {
  data: Record<string, unknown>;
  updateUs: number;
}

interface StoredRecord extends RecordState {
  updateUs: number;
}

/** A version of a commit time in whole microseconds. */
export function versionOfUs(us: number): Version {
  return versionAt(timeOfUs(us));
}

function timeOfUs(us: number): { seconds: number; nanoseconds: number } {
  return { seconds: Math.floor(us / 1_000_000), nanoseconds: (us % 1_000_000) * 1000 };
}

export class DocumentsWorld implements DocumentStore, DocumentSource {
  readonly docs = new Map<string, AppDocument>();
  readonly records = new Map<string, Map<string, StoredRecord>>();
  /** `rollup.documentsSince` of each existing counter: the time of the deletion before it was created again. */
  private readonly since = new Map<string, Version | null>();
  /** Counters whose deletion is still cleaning up (the marker). */
  readonly deleting = new Set<string>();
  /** When each counter was last deleted (the commit time of its deletion). */
  readonly deletedUs = new Map<string, number>();
  /** Commits that wrote a shard, per counter (for the record of what happened). */
  commits = 0;
  /** Called with every shard write that changed a count, as its event goes out to rollupTotal. */
  onShardWrite: (writes: ShardWrite[]) => void = () => undefined;
  /** Every version of every document, oldest first: what a count at a read time sees. */
  private readonly history = new Map<string, { atUs: number; data: Record<string, unknown> | undefined }[]>();

  constructor(readonly counters: World) {}

  /** The next commit time: strictly after every commit so far, of either store. */
  private tick(): number {
    return this.counters.nextCommitUs();
  }

  hasCounter(counterId: string): boolean {
    return this.counters.numShardsOf(counterId) !== null;
  }

  /**
   * An app's write of a document (`data` undefined: a delete), and the event it causes (with its commit time: a
   * delete's event time is the delete's); null when nothing changed (a delete of nothing).
   */
  write(path: string, data: Record<string, unknown> | undefined): (DocumentWrite & { writtenAtUs: number }) | null {
    const before = this.docs.get(path);
    if (before === undefined && data === undefined) return null;
    const at = this.tick();
    if (data === undefined) this.docs.delete(path);
    else this.docs.set(path, { data: structuredClone(data), updateUs: at });
    const versions = this.history.get(path) ?? [];
    versions.push({ atUs: at, data: data === undefined ? undefined : structuredClone(data) });
    this.history.set(path, versions);
    return {
      path,
      before: before === undefined ? undefined : structuredClone(before.data),
      after: data === undefined ? undefined : structuredClone(data),
      version: data === undefined ? versionJustAfter(timeOfUs(before!.updateUs)) : versionOfUs(at),
      writtenAtUs: at,
    };
  }

  /** The documents that exist at `readUs`, with their data then (every commit at or before it, none after). */
  documentsAt(readUs: number): Map<string, Record<string, unknown>> {
    const out = new Map<string, Record<string, unknown>>();
    for (const [path, versions] of this.history) {
      let data: Record<string, unknown> | undefined;
      for (const v of versions) if (v.atUs <= readUs) data = v.data;
      if (data !== undefined) out.set(path, data);
    }
    return out;
  }

  /**
   * A recount's query at `readUs`, as Firestore answers it: the documents of its collection whose every field
   * path (dotted: into maps) holds a value equal to the filter's, by Firestore's `==` (numbers by value,
   * `null` only where the field holds null and not where it is missing, never across types). Written apart
   * from the rules' own matching (functions/src/model/conditions.ts), which the records count by: the model's
   * commits hold the one to the other.
   */
  count(query: RecountQuery, readUs: number): number {
    const fieldAt = (data: unknown, path: string): { found: boolean; value?: unknown } => {
      let at: unknown = data;
      for (const key of path.split(".")) {
        if (typeof at !== "object" || at === null || Array.isArray(at) || !(key in at)) return { found: false };
        at = (at as Record<string, unknown>)[key];
      }
      return { found: true, value: at };
    };
    const equal = (a: unknown, b: unknown) => (a === null || b === null ? a === b : typeof a === typeof b && a === b);
    let n = 0;
    for (const [path, data] of this.documentsAt(readUs)) {
      if (path.slice(0, path.lastIndexOf("/")) !== query.collection) continue;
      if (query.filters.every((f) => {
        const field = fieldAt(data, f.field);
        return field.found && equal(field.value, f.value);
      })) n++;
    }
    return n;
  }

  // ---- DocumentStore ----

  createRecounted(counterId: string, shape: NewCounterShape, since: Version | null): Promise<RecountedCreation> {
    if (this.deleting.has(counterId)) return Promise.reject(new StaleRead(`counter "${counterId}" is being deleted`));
    if (this.hasCounter(counterId)) return Promise.resolve("exists");
    this.counters.createRecountedAt(counterId, shape.numShards, this.tick());
    this.since.set(counterId, since);
    return Promise.resolve("created");
  }

  listMoving(limit: number): Promise<string[]> {
    return Promise.resolve([...this.since.keys()].filter((id) => this.counters.parentRead(id).view.kept === "moving").sort().slice(0, limit));
  }

  read(counterId: string, documents: readonly string[]): Promise<StoreRead> {
    const records = new Map<string, RecordState | null>();
    const handle = new Map<string, number | null>();
    const own = this.records.get(counterId);
    for (const document of documents) {
      const record = own?.get(document);
      records.set(document, record === undefined ? null : { counted: record.counted, version: record.version });
      handle.set(document, record?.updateUs ?? null);
    }
    const numShards = this.counters.numShardsOf(counterId);
    let counter: CounterRead;
    if (numShards !== null) counter = { exists: true, unique: false, since: this.since.get(counterId) ?? null };
    else {
      const deleted = this.deletedUs.get(counterId);
      counter = { exists: false, deleting: this.deleting.has(counterId), deletedAt: deleted === undefined ? null : versionOfUs(deleted) };
    }
    const shape = numShards === null ? null : { numShards, windowed: false };
    return Promise.resolve({ counter, records, shape, handle });
  }

  commit(counterId: string, read: StoreRead, plan: Plan, options: CommitOptions): Promise<ShardWritten | null> {
    const handle = read.handle as Map<string, number | null>;
    const own = this.records.get(counterId) ?? new Map<string, StoredRecord>();
    for (const write of plan.writes) {
      const current = own.get(write.document);
      if ((current?.updateUs ?? null) !== (handle.get(write.document) ?? null)) return Promise.reject(new StaleRead(`record of ${write.document} changed`));
    }
    const numShards = this.counters.numShardsOf(counterId);
    if (plan.counter === "shard" && (numShards === null || options.shard >= numShards)) return Promise.reject(new StaleRead("shard not found"));
    if (plan.counter === "create" && (numShards !== null || this.deleting.has(counterId))) return Promise.reject(new StaleRead("counter exists, or is being deleted"));
    const at = this.tick();
    for (const write of plan.writes) own.set(write.document, { counted: write.counted, version: write.version, updateUs: at });
    this.records.set(counterId, own);
    let event: ShardWrite | null = null;
    if (plan.counter === "shard") event = this.counters.incrementAt(counterId, options.shard, plan.delta, at);
    if (plan.counter === "create") {
      this.since.set(counterId, read.counter.exists ? null : read.counter.deletedAt);
      event = this.counters.createCounterAt(counterId, options.create!.numShards, options.shard, plan.delta, at);
    }
    if (event === null) return Promise.resolve(null);
    this.commits++;
    if (plan.delta !== 0) this.onShardWrite([event]);
    return Promise.resolve({ shard: options.shard, writtenAtUs: at, writtenAtExact: true });
  }

  // ---- DocumentSource ----

  listDocuments(listing: Listing, after: string | undefined, limit: number): Promise<SeenDocument[]> {
    const inListing = (path: string) => {
      const parent = path.slice(0, path.lastIndexOf("/"));
      return "collection" in listing ? parent === listing.collection : parent.slice(parent.lastIndexOf("/") + 1) === listing.group;
    };
    const paths = [...this.docs.keys()].filter((p) => inListing(p) && (after === undefined || p > after)).sort().slice(0, limit);
    return Promise.resolve(paths.map((path) => this.seen(path)));
  }

  readDocuments(paths: readonly string[]): Promise<{ present: Map<string, SeenDocument>; readVersion: Version }> {
    const present = new Map<string, SeenDocument>();
    for (const path of paths) if (this.docs.has(path)) present.set(path, this.seen(path));
    // A read at or after the last commit's time: it sees that commit and every one before it, and no later one.
    return Promise.resolve({ present, readVersion: versionOfUs(this.counters.nextReadUs()) });
  }

  listCounters(range: { from: string; to: string }, after: string | undefined, limit: number): Promise<string[]> {
    const ids = [...this.since.keys()].filter((id) => this.hasCounter(id) && id >= range.from && id < range.to && (after === undefined || id > after)).sort();
    return Promise.resolve(ids.slice(0, limit));
  }

  listRecords(counterId: string, after: string | undefined, limit: number): Promise<ListedRecord[]> {
    const listed = [...(this.records.get(counterId) ?? new Map<string, StoredRecord>())].map(([document, r]) => ({ document, key: documentRecordKey(document), counted: r.counted, version: r.version }));
    return Promise.resolve(listed.filter((r) => after === undefined || r.key > after).sort((a, b) => (a.key < b.key ? -1 : 1)).slice(0, limit));
  }

  private seen(path: string): SeenDocument {
    const doc = this.docs.get(path)!;
    return { path, data: structuredClone(doc.data), version: versionOfUs(doc.updateUs) };
  }

  // ---- The admin operations that touch a document counter ----

  /** deleteCounter's transaction: the parent and shards go, the marker and the deletion's time are written. False when there is no counter. */
  deleteCounter(counterId: string): boolean {
    if (!this.hasCounter(counterId)) return false;
    const at = this.tick();
    this.counters.deleteCounterAt(counterId, at);
    this.deleting.add(counterId);
    this.deletedUs.set(counterId, at);
    return true;
  }

  /** The cleanup's last step: the records are gone, then the marker (deletion.ts, in one go here). */
  finishCleanup(counterId: string): void {
    this.tick();
    this.records.delete(counterId);
    this.deleting.delete(counterId);
  }

  /** reshardCounter: the removed shards' counts folded into the kept ones (the sum unchanged). */
  reshard(counterId: string, numShards: number): void {
    if (!this.hasCounter(counterId)) return;
    this.onShardWrite(this.counters.reshard(counterId, numShards));
  }

  /** The counter's shard sum; null when it does not exist. */
  total(counterId: string): number | null {
    return this.counters.shardSumOf(counterId);
  }

  /** What the counter's records count. */
  recorded(counterId: string): number {
    return [...(this.records.get(counterId)?.values() ?? [])].reduce((sum, r) => sum + r.counted, 0);
  }
}
