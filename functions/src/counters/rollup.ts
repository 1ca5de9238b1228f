// The rollup: keeps counters/{id}.total equal to the sum of its shards, exactly and with about one
// parent write per interval. The decisions are pure (plan.ts); this module does the reads and writes.
//
// Exact: the total is never accumulated. It is recomputed with one consistent read of all shards (an
// aggregation query), and the read time of that sum is kept in `rollup.readTime`. A shard write is
// covered once a sum read at or after its commit time is on the parent, so duplicated, reordered or
// retried events are covered and cost a read. Commits carry a precondition on the parent's update time:
// a sum older than what is on the parent can never overwrite it.
//
// Operations: every invocation counts the reads, writes and aggregation reads it made and the time it
// spent waiting for a slot, and logs them in one structured line ("rollup ops"), so what a million
// increments cost can be counted from what the functions did (the benchmark does).
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
import { decide, decideFromParent, isCovered, microsFloor, offsetMsOf, slotOf, type Decision, type ParentView } from "./plan";
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

/**
 * Slots this instance's running invocations hold, per counter: they will sum the shards at or after the
 * slot's due time, so a later event of this counter in the same or an earlier slot is covered by that
 * sum and can return without reading anything. An entry lives exactly as long as the invocation that
 * holds the claim: it is removed when that invocation returns or throws (a thrown claimer is retried by
 * the platform and finishes the slot, as for every event that deferred to its lease).
 */
export type ClaimMemo = Map<string, number>;

export interface RollupDeps {
  db: Firestore;
  intervalMs: number;
  staleAfterMs: number;
  nowMs: () => number;
  sleep: (ms: number) => Promise<void>;
  /** This instance's held claims (see ClaimMemo); without it every event reads. */
  claims?: ClaimMemo;
  /** Called as the rollup passes a stage; tests throw from it to simulate a crash at that point. */
  onStage?: (stage: RollupStage, write: ShardWrite) => void | Promise<void>;
}

/** What one invocation did, as billed: document reads, writes (deletes included), aggregation queries. */
export interface RollupOps {
  reads: number;
  writes: number;
  /** Aggregation queries; each is billed as one read per 1,000 shards (minimum one). */
  aggregations: number;
  /** Time spent waiting for a slot to end (the invocation holds its instance meanwhile). */
  waitMs: number;
}

export type RollupResult =
  | { kind: "skip"; reason: "unchanged" | "no-parent" | "covered" }
  | { kind: "defer"; toSlot: number; memo?: true }
  | { kind: "committed"; slot: number | null; total: number; lagMs: number }
  | { kind: "covered-by-other"; slot: number | null }
  | { kind: "gone"; slot: number | null }
  | { kind: "overflow"; slot: number | null };

/** The result and what it took. `slot` is null for a leading-edge rollup (no slot was claimed). */
export type RollupOutcome = RollupResult & { ops: RollupOps };

/** A claim takes this long past its due time before anyone else assumes its claimer died. */
export function staleAfterMsFor(intervalMs: number): number {
  return Math.max(10_000, 5 * intervalMs);
}

const DECIDE_ROUNDS = 5;
const COMMIT_ATTEMPTS = 8;

/** Handles one delivery of a shard write event. Throws (so the event is retried) only on real failures. */
export async function rollupShardWrite(write: ShardWrite, deps: RollupDeps): Promise<RollupOutcome> {
  const ops: RollupOps = { reads: 0, writes: 0, aggregations: 0, waitMs: 0 };
  const started = deps.nowMs();
  let result: RollupResult | undefined;
  try {
    result = await handle(write, deps, ops);
    return { ...result, ops };
  } finally {
    logger.debug("rollup ops", {
      counterId: write.counterId,
      outcome: result === undefined ? "threw" : outcomeName(result),
      ...ops,
      durationMs: deps.nowMs() - started,
      ...(result?.kind === "committed" ? { total: result.total, lagMs: result.lagMs } : {}),
    });
  }
}

function outcomeName(result: RollupResult): string {
  if (result.kind === "skip") return `skip-${result.reason}`;
  if (result.kind === "defer" && result.memo === true) return "defer-memo";
  if (result.kind === "committed" && result.slot === null) return "committed-lead";
  return result.kind;
}

async function handle(write: ShardWrite, deps: RollupDeps, ops: RollupOps): Promise<RollupResult> {
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
  const held = deps.claims?.get(counterId);
  if (held !== undefined && slotOf(write.writtenAtUs, deps.intervalMs, offsetMs) <= held) {
    // An invocation of this instance holds a claim due at or after this write's slot: its sum will
    // include this write, so there is nothing to read.
    return { kind: "defer", toSlot: held, memo: true };
  }

  for (let round = 0; round < DECIDE_ROUNDS; round++) {
    // The parent first: it alone settles duplicates, deleted counters and idle counters (one read).
    const parentSnap = await counterRef(db, counterId).get();
    ops.reads += 1;
    const parentView = parentViewOf(parentSnap);
    let decision: Decision | null = decideFromParent(facts, parentView, deps.intervalMs);
    let leaseSnap: DocumentSnapshot | undefined;
    if (decision === null) {
      leaseSnap = await leaseRef(db, counterId).get();
      ops.reads += 1;
      decision = decide(facts, { ...parentView, lease: leaseOf(leaseSnap) }, {
        intervalMs: deps.intervalMs,
        offsetMs,
        nowMs: deps.nowMs(),
        staleAfterMs: deps.staleAfterMs,
      });
    }
    switch (decision.kind) {
      case "skip":
      case "defer":
        return decision;
      case "lead": {
        const led = await leadingEdge(write, parentSnap, deps, ops);
        if (led !== undefined) return led;
        continue; // the parent changed since we read it: decide again on a fresh read
      }
      case "rollup":
        if (decision.reason === "stale-claim") {
          logger.warn("taking over a stale rollup claim", { counterId, slot: decision.slot });
        }
        return await holdingClaim(deps, counterId, decision.slot, () =>
          commitRollup(write, decision.slot, decision.dueMs, undefined, deps, ops),
        );
      case "claim": {
        const claimedAt = await claimSlot(db, counterId, leaseSnap!, decision.slot, decision.dueMs, write.eventId);
        if (claimedAt === undefined) continue; // someone else wrote the lease first: look again
        ops.writes += 1;
        return await holdingClaim(deps, counterId, decision.slot, async () => {
          await deps.onStage?.("claimed", write);
          return await commitRollup(write, decision.slot, decision.dueMs, claimedAt, deps, ops);
        });
      }
    }
  }
  throw new Error(`rollup of counter "${counterId}": the lease kept changing; retrying the event`);
}

/** Runs `work` with `slot` recorded in the instance's claim memo, and removes it however work ends. */
async function holdingClaim<T>(deps: RollupDeps, counterId: string, slot: number, work: () => Promise<T>): Promise<T> {
  const claims = deps.claims;
  const previous = claims?.get(counterId);
  if (claims !== undefined && (previous === undefined || previous < slot)) claims.set(counterId, slot);
  try {
    return await work();
  } finally {
    // Only our own entry: another invocation of this instance may hold a later slot by now.
    if (claims?.get(counterId) === slot) claims.delete(counterId);
  }
}

/**
 * The leading edge (plan.ts): sums the shards now and commits on condition that the parent is still the
 * one `parent` read, with no lease and no second parent read. Returns undefined if the parent changed
 * meanwhile (another rollup or a reset): the caller decides again on a fresh read.
 */
async function leadingEdge(
  write: ShardWrite,
  parent: DocumentSnapshot,
  deps: RollupDeps,
  ops: RollupOps,
): Promise<RollupResult | undefined> {
  // The event arrives after its write committed, so a sum read now is read after it; sumAndCommit
  // checks it anyway, because the whole promise of coverage rests on it.
  const step = await sumAndCommit(write, parent, write.writtenAtUs, null, deps, ops);
  switch (step.kind) {
    case "committed":
      return { kind: "committed", slot: null, total: step.total, lagMs: step.lagMs };
    case "overflow":
    case "gone":
      return { kind: step.kind, slot: null };
    case "early":
    case "changed":
      return undefined;
  }
}

function parentViewOf(parent: DocumentSnapshot): ParentView {
  // When the rollup last wrote the parent: `rollup.committedAt`.
  return {
    parentExists: parent.exists,
    coveredUntilUs: coveredUntilUs(parent),
    lastCommitUs: timeFieldUs(parent, "rollup.committedAt"),
  };
}

function leaseOf(lease: DocumentSnapshot): { slot: number; eventId: string } | null {
  const slot = lease.get("slot") as unknown;
  const eventId = lease.get("eventId") as unknown;
  return lease.exists && typeof slot === "number" && typeof eventId === "string" ? { slot, eventId } : null;
}

/** The read time of the sum the parent's total holds, in microseconds (rounded down); null if none. */
export function coveredUntilUs(parent: DocumentSnapshot): number | null {
  return timeFieldUs(parent, "rollup.readTime");
}

/** A Timestamp field of the parent in microseconds (rounded down); null if absent. */
function timeFieldUs(parent: DocumentSnapshot, field: string): number | null {
  const value = parent.exists ? (parent.get(field) as unknown) : undefined;
  return value instanceof Timestamp ? microsFloor(value) : null;
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
  ops: RollupOps,
): Promise<RollupResult> {
  const db = deps.db;
  const counterId = write.counterId;
  const targetUs = Math.max(dueMs * 1000, write.writtenAtUs);
  const parentRef = counterRef(db, counterId);
  await wait(deps, ops, Math.min(deps.intervalMs, Math.max(0, dueMs - deps.nowMs())));

  for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
    const parent = await parentRef.get();
    ops.reads += 1;
    if (!parent.exists) {
      await releaseLease(db, counterId, claimedAt, ops);
      return { kind: "gone", slot };
    }
    if (isCovered(coveredUntilUs(parent), targetUs)) return { kind: "covered-by-other", slot };

    const step = await sumAndCommit(write, parent, targetUs, slot, deps, ops);
    switch (step.kind) {
      case "committed":
        return { kind: "committed", slot, total: step.total, lagMs: step.lagMs };
      case "overflow":
        return { kind: "overflow", slot };
      case "gone":
        await releaseLease(db, counterId, claimedAt, ops);
        return { kind: "gone", slot };
      case "early":
        // Our clock ran ahead of Firestore's: this sum may miss writes of the slot. Wait and sum again.
        await wait(deps, ops, Math.ceil((targetUs - step.readUs) / 1000) + 1);
        break;
      case "changed":
        // The parent changed since we read it (another rollup, a reset, a reshard): look again.
        break;
    }
  }
  throw new Error(`rollup of counter "${counterId}" slot ${slot} did not settle; retrying the event`);
}

/** What one attempt to sum the shards and commit the total onto a parent came to. */
type CommitStep =
  | { kind: "committed"; total: number; lagMs: number }
  | { kind: "overflow" }
  /** The sum was read before `targetUs`, so it may miss writes it must cover; nothing was written. */
  | { kind: "early"; readUs: number }
  /** The parent was deleted. */
  | { kind: "gone" }
  /** The parent changed since it was read (the commit's precondition failed); nothing was written. */
  | { kind: "changed" };

/**
 * Sums the shards and, if the sum was read at or after `targetUs`, commits it onto `parent` (on condition
 * that the parent is unchanged; with `rollup.slot` for a slot's commit). Shared by the leading edge and
 * the slot's claimer, which differ only in what they do with each outcome.
 */
async function sumAndCommit(
  write: ShardWrite,
  parent: DocumentSnapshot,
  targetUs: number,
  slot: number | null,
  deps: RollupDeps,
  ops: RollupOps,
): Promise<CommitStep> {
  const sum = await sumShards(deps.db, write.counterId, ops);
  if (sum.overflow) {
    logOverflow(write.counterId, parent.ref.path, slot);
    return { kind: "overflow" };
  }
  const readUs = microsFloor(sum.readTime);
  if (readUs < targetUs) return { kind: "early", readUs };
  await deps.onStage?.("summed", write);
  try {
    await commitTotal(parent, sum, slot === null ? {} : { "rollup.slot": slot });
    ops.writes += 1;
  } catch (error) {
    const code = grpcCode(error);
    if (code === GRPC.NOT_FOUND) return { kind: "gone" };
    if (code === GRPC.FAILED_PRECONDITION) return { kind: "changed" };
    throw error;
  }
  const lagMs = Math.max(0, deps.nowMs() - Math.floor(write.writtenAtUs / 1000));
  return { kind: "committed", total: sum.total, lagMs };
}

async function wait(deps: RollupDeps, ops: RollupOps, ms: number): Promise<void> {
  const started = deps.nowMs();
  await deps.sleep(ms);
  ops.waitMs += Math.max(0, deps.nowMs() - started);
}

/**
 * No exact JS number holds the sum. Keep the last exact total rather than write a rounded one; retrying
 * cannot help, so the event completes. Reconcile or reset the counter to recover.
 */
function logOverflow(counterId: string, path: string, slot: number | null): void {
  logger.error("shard sum is beyond 2^53 - 1; total left at its last exact value", { counterId, path, slot });
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
async function releaseLease(db: Firestore, counterId: string, claimedAt: Timestamp | undefined, ops: RollupOps): Promise<void> {
  if (claimedAt === undefined) return;
  try {
    await leaseRef(db, counterId).delete({ lastUpdateTime: claimedAt });
    ops.writes += 1;
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
export async function sumShards(db: Firestore, counterId: string, ops?: RollupOps): Promise<ShardSum> {
  const col = shardsRef(db, counterId);
  const aggregate = await col.aggregate({ total: AggregateField.sum("count") }).get();
  if (ops !== undefined) ops.aggregations += 1;
  const total = aggregate.data().total;
  if (typeof total === "number" && Number.isSafeInteger(total)) {
    return { overflow: false, total, readTime: aggregate.readTime };
  }
  const docs = await col.get();
  if (ops !== undefined) ops.reads += Math.max(1, docs.size);
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
