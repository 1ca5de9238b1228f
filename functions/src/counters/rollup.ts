// The rollup: keeps counters/{id}.total equal to the sum of its shards, exactly and with about one
// parent write per interval. The decisions are pure (plan.ts); this module does the reads and writes.
//
// Exact: the total is never accumulated. It is recomputed with one consistent read of all shards (an
// aggregation query), and the read time of that sum is kept in `rollup.readTime`. A shard write is
// covered once a sum read at or after its commit time is on the parent, so duplicated, reordered or
// retried events are covered and cost a read. Commits carry a precondition on the parent's update time:
// a sum older than what is on the parent can never overwrite it.
import {
  AggregateField,
  FieldValue,
  Timestamp,
  type DocumentSnapshot,
  type Firestore,
} from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { GRPC, grpcCode } from "./errors";
import { counterRef, leaseRef, shardsRef } from "./paths";
import { decide, isCovered, microsFloor, offsetMsOf, type Decision, type RollupView } from "./plan";
import { readCount } from "./shards";

/** One delivery of a shard write event, reduced to what the rollup needs. */
export interface ShardWrite {
  eventId: string;
  counterId: string;
  shardId: string;
  /** Commit time of the write in microseconds, rounded up. */
  writtenAtUs: number;
  /** Shard data before and after the write; undefined where the document did not exist. */
  before: Record<string, unknown> | undefined;
  after: Record<string, unknown> | undefined;
}

export type RollupStage = "claimed" | "summed";

export interface RollupDeps {
  db: Firestore;
  intervalMs: number;
  staleAfterMs: number;
  nowMs: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Called as the rollup passes a stage; tests throw from it to simulate a crash at that point. */
  onStage?: (stage: RollupStage, write: ShardWrite) => void | Promise<void>;
}

export type RollupOutcome =
  | { kind: "skip"; reason: "unchanged" | "no-parent" | "covered" }
  | { kind: "defer"; toSlot: number }
  | { kind: "committed"; slot: number; total: number; lagMs: number }
  | { kind: "covered-by-other"; slot: number }
  | { kind: "gone"; slot: number }
  | { kind: "overflow"; slot: number };

/** A claim takes this long past its due time before anyone else assumes its claimer died. */
export function staleAfterMsFor(intervalMs: number): number {
  return Math.max(10_000, 5 * intervalMs);
}

const DECIDE_ROUNDS = 5;
const COMMIT_ATTEMPTS = 8;

/** Handles one delivery of a shard write event. Throws (so the event is retried) only on real failures. */
export async function rollupShardWrite(write: ShardWrite, deps: RollupDeps): Promise<RollupOutcome> {
  const db = deps.db;
  const counterId = write.counterId;
  const before = readCount(write.before);
  const after = readCount(write.after);
  if (after.malformed || before.malformed) {
    const path = shardsRef(db, counterId).doc(write.shardId).path;
    logMalformedCount(counterId, write.shardId, path, (after.malformed ? write.after : write.before)?.count);
  }
  const facts = {
    eventId: write.eventId,
    writtenAtUs: write.writtenAtUs,
    countChanged: before.value !== after.value,
  };
  // A write that did not change the count cannot change the sum (e.g. shards created at 0): no reads.
  if (!facts.countChanged) return { kind: "skip", reason: "unchanged" };
  const offsetMs = offsetMsOf(counterId, deps.intervalMs);

  for (let round = 0; round < DECIDE_ROUNDS; round++) {
    const [parentSnap, leaseSnap] = await db.getAll(counterRef(db, counterId), leaseRef(db, counterId));
    const view = viewOf(parentSnap!, leaseSnap!);
    const decision: Decision = decide(facts, view, {
      intervalMs: deps.intervalMs,
      offsetMs,
      nowMs: deps.nowMs(),
      staleAfterMs: deps.staleAfterMs,
    });
    switch (decision.kind) {
      case "skip":
      case "defer":
        return decision;
      case "rollup":
        if (decision.reason === "stale-claim") {
          logger.warn("taking over a stale rollup claim", { counterId, slot: decision.slot });
        }
        return await commitRollup(write, decision.slot, decision.dueMs, undefined, deps);
      case "claim": {
        const claimedAt = await claimSlot(db, counterId, leaseSnap!, decision.slot, decision.dueMs, write.eventId);
        if (claimedAt === undefined) continue; // someone else wrote the lease first: look again
        await deps.onStage?.("claimed", write);
        return await commitRollup(write, decision.slot, decision.dueMs, claimedAt, deps);
      }
    }
  }
  throw new Error(`rollup of counter "${counterId}": the lease kept changing; retrying the event`);
}

function viewOf(parent: DocumentSnapshot, lease: DocumentSnapshot): RollupView {
  const slot = lease.get("slot") as unknown;
  const eventId = lease.get("eventId") as unknown;
  return {
    parentExists: parent.exists,
    coveredUntilUs: coveredUntilUs(parent),
    lease:
      lease.exists && typeof slot === "number" && typeof eventId === "string" ? { slot, eventId } : null,
  };
}

/** The read time of the sum the parent's total holds, in microseconds (rounded down); null if none. */
export function coveredUntilUs(parent: DocumentSnapshot): number | null {
  const readTime = parent.exists ? (parent.get("rollup.readTime") as unknown) : undefined;
  return readTime instanceof Timestamp ? microsFloor(readTime) : null;
}

/** Writes the lease for `slot`; returns its write time, or undefined if another invocation got there first. */
async function claimSlot(
  db: Firestore,
  counterId: string,
  current: DocumentSnapshot,
  slot: number,
  dueMs: number,
  eventId: string,
): Promise<Timestamp | undefined> {
  const ref = leaseRef(db, counterId);
  const data = { slot, eventId, dueAt: Timestamp.fromMillis(dueMs), claimedAt: FieldValue.serverTimestamp() };
  try {
    const result = current.exists
      ? await ref.update(data, { lastUpdateTime: current.updateTime! })
      : await ref.create(data);
    return result.writeTime;
  } catch (error) {
    const code = grpcCode(error);
    if (code === GRPC.FAILED_PRECONDITION || code === GRPC.ALREADY_EXISTS || code === GRPC.NOT_FOUND) {
      return undefined;
    }
    throw error;
  }
}

/**
 * Waits until the slot is due, then sums the shards at a read time at or after the due time and commits
 * the total, unless another invocation's sum already covers the slot. Everyone who deferred to this slot
 * relies on that read time, hence the check after the sum (clocks of this instance and Firestore differ).
 */
async function commitRollup(
  write: ShardWrite,
  slot: number,
  dueMs: number,
  claimedAt: Timestamp | undefined,
  deps: RollupDeps,
): Promise<RollupOutcome> {
  const db = deps.db;
  const counterId = write.counterId;
  const targetUs = Math.max(dueMs * 1000, write.writtenAtUs);
  const parentRef = counterRef(db, counterId);
  await deps.sleep(Math.min(deps.intervalMs, Math.max(0, dueMs - deps.nowMs())));

  for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
    const parent = await parentRef.get();
    if (!parent.exists) {
      await releaseLease(db, counterId, claimedAt);
      return { kind: "gone", slot };
    }
    if (isCovered(coveredUntilUs(parent), targetUs)) return { kind: "covered-by-other", slot };

    const sum = await sumShards(db, counterId);
    if (sum.overflow) {
      // No exact JS number holds this sum. Keep the last exact total rather than write a rounded one;
      // retrying cannot help, so the event completes. Reconcile or reset the counter to recover.
      logger.error("shard sum is beyond 2^53 - 1; total left at its last exact value", {
        counterId,
        path: parentRef.path,
        slot,
      });
      return { kind: "overflow", slot };
    }
    const { total, readTime } = sum;
    const readUs = microsFloor(readTime);
    if (readUs < targetUs) {
      // Our clock ran ahead of Firestore's: this sum may miss writes of the slot. Wait and sum again.
      await deps.sleep(Math.ceil((targetUs - readUs) / 1000) + 1);
      continue;
    }
    await deps.onStage?.("summed", write);
    try {
      await commitTotal(parent, { total, readTime }, { "rollup.slot": slot });
      const lagMs = Math.max(0, deps.nowMs() - Math.floor(write.writtenAtUs / 1000));
      logger.debug("rollup committed", { counterId, slot, total, lagMs });
      return { kind: "committed", slot, total, lagMs };
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.NOT_FOUND) {
        await releaseLease(db, counterId, claimedAt);
        return { kind: "gone", slot };
      }
      if (code !== GRPC.FAILED_PRECONDITION) throw error;
      // The parent changed since we read it (another rollup, a reset, a reshard): look again.
    }
  }
  throw new Error(`rollup of counter "${counterId}" slot ${slot} did not settle; retrying the event`);
}

/**
 * Writes a sum onto the parent: `total`, the sum's read time (what it covers) and one more
 * `rollup.commits`, on condition that the parent is unchanged since `parent` was read. Fails with
 * FAILED_PRECONDITION if it changed and NOT_FOUND if it is gone; never creates the parent.
 */
export async function commitTotal(
  parent: DocumentSnapshot,
  sum: { total: number; readTime: Timestamp },
  extra: Record<string, unknown> = {},
): Promise<void> {
  const { readTime } = sum;
  await parent.ref.update(
    {
      total: sum.total,
      // Stored to the microsecond, rounded down: a covered write is never claimed too early.
      "rollup.readTime": new Timestamp(readTime.seconds, Math.floor(readTime.nanoseconds / 1000) * 1000),
      "rollup.commits": FieldValue.increment(1),
      "rollup.committedAt": FieldValue.serverTimestamp(),
      ...extra,
    },
    { lastUpdateTime: parent.updateTime! },
  );
}

/** The counter was deleted under us: remove the lease we created, unless someone rewrote it since. */
async function releaseLease(db: Firestore, counterId: string, claimedAt: Timestamp | undefined): Promise<void> {
  if (claimedAt === undefined) return;
  try {
    await leaseRef(db, counterId).delete({ lastUpdateTime: claimedAt });
  } catch (error) {
    const code = grpcCode(error);
    if (code !== GRPC.FAILED_PRECONDITION && code !== GRPC.NOT_FOUND) throw error;
  }
}

export type ShardSum = { overflow: false; total: number; readTime: Timestamp } | { overflow: true; readTime: Timestamp };

/**
 * The sum of the shards' counts at one read time. The aggregation query costs one read per 1,000 shards;
 * if it returns something that is not a safe integer (a malformed shard slipped in, or the sum is beyond
 * 2^53), the shards are read one by one and malformed counts are taken as 0, as in the event path. A sum
 * of valid counts beyond Number.MAX_SAFE_INTEGER is reported as overflow, never rounded.
 */
export async function sumShards(db: Firestore, counterId: string): Promise<ShardSum> {
  const col = shardsRef(db, counterId);
  const aggregate = await col.aggregate({ total: AggregateField.sum("count") }).get();
  const total = aggregate.data().total;
  if (typeof total === "number" && Number.isSafeInteger(total)) {
    return { overflow: false, total, readTime: aggregate.readTime };
  }
  const docs = await col.get();
  let exact = 0n; // BigInt: intermediate sums may leave the safe range even when the result does not
  for (const doc of docs.docs) {
    const count = readCount(doc.data());
    if (count.malformed) logMalformedCount(counterId, doc.id, doc.ref.path, doc.get("count"));
    exact += BigInt(count.value);
  }
  if (exact > BigInt(Number.MAX_SAFE_INTEGER) || exact < BigInt(Number.MIN_SAFE_INTEGER)) {
    return { overflow: true, readTime: docs.readTime };
  }
  return { overflow: false, total: Number(exact), readTime: docs.readTime };
}

/** The malformed-count rule's error log: the shard's path and a short, safe description of the value. */
export function logMalformedCount(counterId: string, shardId: string, path: string, value: unknown): void {
  const text = typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : String(value);
  logger.error("shard holds a malformed count; it counts as 0", {
    counterId,
    shardId,
    path,
    count: `${typeof value}: ${text.slice(0, 60)}`,
  });
}
