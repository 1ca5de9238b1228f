// The two kinds of counter the benchmark drives, behind one handle: ours (counters/{id}, created by the
// admin entry's createCounter, rolled up by rollupTotal) and naive (naiveCounters/{id}, rolled up by
// the naive trigger). Increments are made exactly as incrementCounter makes them: one batch with
// `update(count: increment(delta))` on a random pre-created shard (on a windowed counter, with the day's
// count in the same write).
import type { App } from "firebase-admin/app";
import {
  getFirestore,
  FieldValue,
  type CollectionReference,
  type DocumentReference,
  type DocumentSnapshot,
  type Firestore,
  Timestamp,
} from "firebase-admin/firestore";
import { counterRef, shardsRef } from "../../functions/src/model/paths";
import { microsCeil, microsFloor } from "../../functions/src/model/time";
import { pickShard, readCount, shardDelta, shardIds } from "../../functions/src/model/shards";
import { dayOf } from "../../functions/src/model/windows";
import { naiveCounterRef, naiveShardsRef } from "./naive/src/paths";
import { adminEntry } from "./product";

export type Rollup = "ours" | "naive";
export const ROLLUPS: readonly Rollup[] = ["ours", "naive"];
/** How the plots name the two rollups. */
export const ROLLUP_NAMES: Record<Rollup, string> = { ours: "ours (rollupTotal)", naive: "naive (+= after − before)" };

export interface Counter {
  rollup: Rollup;
  id: string;
  numShards: number;
  parent: DocumentReference;
  shards: CollectionReference;
  /** Ours only: created windowed (counts per UTC day: functions/src/model/windows.ts). */
  windowed?: boolean;
  /**
   * How a recorded write is made (delivery/events.ts), when not as incrementCounter makes it: workload 6 calls
   * setMember through the admin entry, which picks the shard itself (the recorder finds which by the time).
   */
  write?: OwnShardWriter;
}

/** Makes one write on `shard` of `counter` and answers its commit time and the shard's change. */
export type ShardWriter = (counter: Counter, shard: number) => Promise<{ writeTime: Timestamp; delta: number }>;

/** Makes one write on a shard of `counter` that the product picks, and answers its commit time and the shard's change. */
export type OwnShardWriter = (counter: Counter) => Promise<{ writeTime: Timestamp; delta: number }>;

export function counterOf(db: Firestore, rollup: Rollup, id: string, numShards: number): Counter {
  return rollup === "ours"
    ? { rollup, id, numShards, parent: counterRef(db, id), shards: shardsRef(db, id) }
    : { rollup, id, numShards, parent: naiveCounterRef(db, id), shards: naiveShardsRef(db, id) };
}

/**
 * Creates the parent at total 0 and every shard at count 0 in one batch, on `app`'s Firestore (ours: the
 * admin entry's createCounter, windowed if asked; the naive trigger has no windows).
 */
export async function createBenchCounter(app: App, rollup: Rollup, id: string, numShards: number, { windowed = false } = {}): Promise<Counter> {
  const db = getFirestore(app);
  const counter = counterOf(db, rollup, id, numShards);
  if (rollup === "ours") {
    await adminEntry().createCounter(id, { numShards, windowed, app });
    if (windowed) counter.windowed = true;
  } else {
    if (windowed) throw new Error(`the naive rollup has no windowed counters (${id})`);
    const batch = db.batch();
    batch.create(counter.parent, { numShards, total: 0, writes: 0 });
    for (const shardId of shardIds(numShards)) batch.set(counter.shards.doc(shardId), { count: 0 });
    await batch.commit();
  }
  return counter;
}

export interface ShardWriteRecord {
  counterId: string;
  shard: number;
  delta: number;
  /** Commit time of the shard write, microseconds, rounded up (as the rollup reads it). */
  writtenAtUs: number;
}

/** The update incrementCounter makes on a shard of `counter` (the naive counter's: `count` alone). */
export function shardUpdateOf(counter: Counter, delta: number): Record<string, FieldValue> {
  if (counter.rollup === "naive") return { count: FieldValue.increment(delta) };
  const { increments, deletes } = shardDelta(delta, counter.windowed === true ? dayOf(Date.now()) : null);
  const update: Record<string, FieldValue> = {};
  for (const [field, amount] of Object.entries(increments)) update[field] = FieldValue.increment(amount);
  for (const field of deletes) update[field] = FieldValue.delete();
  return update;
}

/** One increment as incrementCounter makes it; resolves with the write's commit time. */
export async function incrementShard(db: Firestore, counter: Counter, delta = 1): Promise<ShardWriteRecord> {
  const shard = pickShard(counter.numShards);
  const batch = db.batch();
  batch.update(counter.shards.doc(String(shard)), shardUpdateOf(counter, delta));
  const [result] = await batch.commit();
  return { counterId: counter.id, shard, delta, writtenAtUs: microsCeil(result!.writeTime) };
}

/** Σ count over the shards, read document by document (independent of the rollup's aggregation). */
export async function shardSum(counter: Counter): Promise<number> {
  const snap = await counter.shards.get();
  return snap.docs.reduce((sum, doc) => sum + readCount(doc.data()).value, 0);
}

/** What the benchmark records of one parent document state. */
export interface ParentState {
  /** The parent's update time (commit time of the write that made this state), microseconds. */
  atUs: number;
  total: number;
  /** Parent writes by the rollup so far: ours `rollup.commits`, naive `writes` (both exact). */
  writes: number;
  /** Ours only: `rollup.readTime`, the read time of the sum `total` holds (microseconds, rounded down). */
  coveredUntilUs: number | null;
  /** `numShards` on the parent (ours grows it under load). */
  numShards: number;
}

export function parentStateOf(rollup: Rollup, snap: DocumentSnapshot): ParentState | undefined {
  if (!snap.exists || snap.updateTime === undefined) return undefined;
  const total = snap.get("total") as unknown;
  const writes = snap.get(rollup === "ours" ? "rollup.commits" : "writes") as unknown;
  const numShards = snap.get("numShards") as unknown;
  return {
    atUs: microsCeil(snap.updateTime),
    total: typeof total === "number" ? total : Number.NaN,
    writes: typeof writes === "number" ? writes : 0,
    coveredUntilUs: rollup === "ours" ? coveredUntilUs(snap) : null,
    numShards: typeof numShards === "number" ? numShards : Number.NaN,
  };
}

export async function readParent(counter: Counter): Promise<ParentState> {
  const state = parentStateOf(counter.rollup, await counter.parent.get());
  if (state === undefined) throw new Error(`${counter.rollup} counter ${counter.id} has no parent document`);
  return state;
}

/** `rollup.readTime` (docs/api.md, the coverage rule): the read time of the sum `total` holds, µs rounded down; null if none. */
function coveredUntilUs(snap: DocumentSnapshot): number | null {
  const readTime = snap.get("rollup.readTime") as unknown;
  return readTime instanceof Timestamp ? microsFloor(readTime) : null;
}
