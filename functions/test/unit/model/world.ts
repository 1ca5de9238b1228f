// An in-memory Firestore for the model check: counters with their parent, shards and lease, with the
// semantics the rollup relies on — every write commits atomically at a strictly increasing commit time
// (whole microseconds), preconditions on a document's update time, reads at a consistent read time that
// is at or after every commit they see, create() failing on an existing document. It implements the
// rollup's RollupStore directly (no latency, no faults: remote.ts adds those per invocation) and the
// writes the callables make (increment, reset, reshard), each returning the shard events it causes.
import type { ParentView } from "../../../src/counters/plan";
import type { ClaimData, CommitFields, CommitResult, LeaseRead, ParentRead, RollupStore, StaleClaims, SumRead } from "../../../src/counters/rollup/storage";
import type { ShardWrite } from "../../../src/counters/rollup/context";
import type { Sim } from "./sim";

interface Parent {
  total: number;
  numShards: number;
  readUs: number | null;
  committedUs: number | null;
  recordedIntervalMs: number | null;
  updateUs: number;
}

interface Lease {
  data: ClaimData;
  updateUs: number;
}

interface Shard {
  count: number;
  updateUs: number;
}

/** A rollup commit, as the model's properties look at it. */
export interface CommitRecord {
  atUs: number;
  readUs: number;
  total: number;
  intervalMs: number;
}

interface Counter {
  parent: Parent | null;
  shards: Map<string, Shard>;
  lease: Lease | null;
  commits: CommitRecord[];
  /** Every shard write that changed a count, with its event: the properties check each is covered. */
  writes: { atUs: number; eventId: string }[];
}

let eventSeq = 0;

export class World implements RollupStore {
  private lastCommitUs = 0;
  private readonly counters = new Map<string, Counter>();
  /** Events that wrote a claim (the properties excuse a dropped event only if it never did). */
  readonly claimants = new Set<string>();

  constructor(private readonly sim: Sim) {}

  /** The commit time of a new write: now, or just after the last commit if that is not earlier. */
  private commitTime(): number {
    this.lastCommitUs = Math.max(this.sim.now(), this.lastCommitUs + 1);
    return this.lastCommitUs;
  }

  /** A read time at or after every commit a read at this moment sees. */
  private readTime(): number {
    return Math.max(this.sim.now(), this.lastCommitUs);
  }

  private counter(counterId: string): Counter {
    let c = this.counters.get(counterId);
    if (c === undefined) {
      c = { parent: null, shards: new Map(), lease: null, commits: [], writes: [] };
      this.counters.set(counterId, c);
    }
    return c;
  }

  // --- the callables' writes ------------------------------------------------------------------------

  createCounter(counterId: string, numShards: number): void {
    const c = this.counter(counterId);
    const at = this.commitTime();
    c.parent = { total: 0, numShards, readUs: null, committedUs: null, recordedIntervalMs: null, updateUs: at };
    for (let i = 0; i < numShards; i++) c.shards.set(String(i), { count: 0, updateUs: at });
  }

  /** Adds `delta` to a shard (as incrementCounter's batch does) and returns its event. */
  increment(counterId: string, shard: number, delta: number): ShardWrite {
    const c = this.counter(counterId);
    const numShards = c.parent!.numShards;
    const shardId = String(shard % numShards);
    const s = c.shards.get(shardId)!;
    const at = this.commitTime();
    const before = { count: s.count };
    s.count += delta;
    s.updateUs = at;
    return this.changed(c, this.event(counterId, shardId, at, before, { count: s.count }));
  }

  /**
   * What resetCounter does: a snapshot of the parent and the shards at a read time R (no lock), then one
   * batch conditioned on the parent that subtracts from each shard the count it held at R (shards at 0
   * are not written) and sets the total to 0 with `rollup.readTime` = R. Here the read and the batch are
   * one step, so nothing lands between them; the emulator tests land increments, rollup commits and
   * reshards there (lifecycle.emulator.test.ts).
   */
  reset(counterId: string): ShardWrite[] {
    const c = this.counter(counterId);
    const p = c.parent!;
    const readUs = this.readTime();
    this.lastCommitUs = readUs; // the batch commits after the read
    const at = this.commitTime();
    const events: ShardWrite[] = [];
    for (const [id, s] of c.shards) {
      if (s.count === 0) continue;
      const before = { count: s.count };
      s.count -= before.count;
      s.updateUs = at;
      events.push(this.changed(c, this.event(counterId, id, at, before, { count: s.count })));
    }
    p.total = 0;
    p.readUs = readUs;
    p.updateUs = at;
    return events;
  }

  /** What reshardCounter's transaction does: new shards at 0, or removed shards folded into kept ones. */
  reshard(counterId: string, numShards: number): ShardWrite[] {
    const c = this.counter(counterId);
    const p = c.parent!;
    if (numShards === p.numShards) return [];
    const at = this.commitTime();
    const events: ShardWrite[] = [];
    if (numShards > p.numShards) {
      for (let i = p.numShards; i < numShards; i++) {
        c.shards.set(String(i), { count: 0, updateUs: at });
        events.push(this.event(counterId, String(i), at, undefined, { count: 0 }));
      }
    } else {
      let folded = 0;
      for (let i = numShards; i < p.numShards; i++) {
        const s = c.shards.get(String(i))!;
        folded += s.count;
        c.shards.delete(String(i));
        const event = this.event(counterId, String(i), at, { count: s.count }, undefined);
        events.push(s.count !== 0 ? this.changed(c, event) : event);
      }
      if (folded !== 0) {
        const s = c.shards.get("0")!;
        const before = { count: s.count };
        s.count += folded;
        s.updateUs = at;
        events.push(this.changed(c, this.event(counterId, "0", at, before, { count: s.count })));
      }
    }
    p.numShards = numShards;
    p.updateUs = at;
    return events;
  }

  private changed(c: Counter, event: ShardWrite): ShardWrite {
    c.writes.push({ atUs: event.writtenAtUs, eventId: event.eventId });
    return event;
  }

  private event(
    counterId: string,
    shardId: string,
    atUs: number,
    before: Record<string, unknown> | undefined,
    after: Record<string, unknown> | undefined,
  ): ShardWrite {
    return { eventId: `evt-${++eventSeq}`, counterId, shardId, writtenAtUs: atUs, before, after };
  }

  // --- what the properties look at ------------------------------------------------------------------

  state(counterId: string): {
    total: number;
    coveredUntilUs: number | null;
    shardSum: number;
    writes: { atUs: number; eventId: string }[];
    commits: CommitRecord[];
    lease: Lease | null;
  } {
    const c = this.counter(counterId);
    let shardSum = 0;
    for (const s of c.shards.values()) shardSum += s.count;
    return {
      total: c.parent?.total ?? NaN,
      coveredUntilUs: c.parent?.readUs ?? null,
      shardSum,
      writes: c.writes,
      commits: c.commits,
      lease: c.lease,
    };
  }

  // --- RollupStore ----------------------------------------------------------------------------------

  readParent(counterId: string): Promise<ParentRead> {
    return Promise.resolve(this.parentRead(counterId));
  }

  parentRead(counterId: string): ParentRead {
    const p = this.counter(counterId).parent;
    const view: ParentView = {
      parentExists: p !== null,
      coveredUntilUs: p?.readUs ?? null,
      lastCommitUs: p?.committedUs ?? null,
      recordedIntervalMs: p?.recordedIntervalMs ?? null,
    };
    return { view, version: p === null ? null : String(p.updateUs) };
  }

  readLease(counterId: string): Promise<LeaseRead> {
    const lease = this.counter(counterId).lease;
    return Promise.resolve({
      claim: lease === null ? null : { eventId: lease.data.eventId, dueMs: lease.data.dueMs },
      version: lease === null ? null : String(lease.updateUs),
    });
  }

  writeClaim(counterId: string, current: LeaseRead, claim: ClaimData): Promise<string | null> {
    const c = this.counter(counterId);
    const version = c.lease === null ? null : String(c.lease.updateUs);
    if (version !== current.version) return Promise.resolve(null);
    const at = this.commitTime();
    c.lease = { data: { ...claim }, updateUs: at };
    this.claimants.add(claim.eventId);
    return Promise.resolve(String(at));
  }

  deleteClaim(counterId: string, version: string): Promise<boolean> {
    const c = this.counter(counterId);
    if (c.lease === null || String(c.lease.updateUs) !== version) return Promise.resolve(false);
    this.commitTime();
    c.lease = null;
    return Promise.resolve(true);
  }

  sumShards(counterId: string): Promise<SumRead> {
    const c = this.counter(counterId);
    let total = 0;
    for (const s of c.shards.values()) total += s.count;
    return Promise.resolve({ sum: { overflow: false, total, readUs: this.readTime() }, aggregations: 1, reads: 0 });
  }

  commitTotal(counterId: string, parent: ParentRead, sum: { total: number; readUs: number }, fields: CommitFields): Promise<CommitResult> {
    const c = this.counter(counterId);
    const p = c.parent;
    if (p === null) return Promise.resolve({ kind: "gone" });
    if (String(p.updateUs) !== parent.version) return Promise.resolve({ kind: "changed" });
    const at = this.commitTime();
    p.total = sum.total;
    p.readUs = sum.readUs;
    p.committedUs = at;
    p.recordedIntervalMs = fields.intervalMs;
    p.updateUs = at;
    c.commits.push({ atUs: at, readUs: sum.readUs, total: sum.total, intervalMs: fields.intervalMs });
    return Promise.resolve({ kind: "committed", version: String(at), commitUs: at });
  }

  staleClaims(dueBeforeMs: number, limit: number): Promise<StaleClaims> {
    const found = [...this.counters.entries()]
      .filter(([, c]) => c.lease !== null && c.lease.data.dueMs < dueBeforeMs)
      .map(([counterId, c]) => ({ counterId, claim: { eventId: c.lease!.data.eventId, dueMs: c.lease!.data.dueMs }, version: String(c.lease!.updateUs) }))
      .sort((a, b) => a.claim.dueMs - b.claim.dueMs)
      .slice(0, limit);
    return Promise.resolve({ claims: found, reads: Math.max(1, found.length) });
  }
}
