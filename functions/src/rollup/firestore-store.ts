// The RollupStore production uses (store.ts), over Firestore: the parent, the lease and the shards of
// counters/{id}, with every precondition the rollup relies on (a commit on the parent's update time, a
// claim on the lease's). The emulator tests exercise exactly this module.
import { AggregateField, FieldValue, Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore, type QueryDocumentSnapshot, type WriteResult } from "firebase-admin/firestore";
import { GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { logMissingMirror, writeTargets, type MirrorValues } from "../counters/mirror-writes";
import { counterRef, isUnderCounter, LEASE_ID, leaseRef, ROLLUP, shardRef, shardsRef } from "../model/paths";
import { dayField, newShardMerge } from "../counters/shard-writes";
import type { DayCounts } from "../model/windows";
import * as logger from "firebase-functions/logger";
import type { Load } from "./growth";
import { microsFloor } from "../model/time";
import type { ClaimData, CommitFields, CommitResult, FoundClaim, LeaseRead, MoveResult, RollupStore, StaleClaims, SumRead } from "./store";
import { commitMirrored, type MirroredCommit, type MirrorPort } from "./mirrored";
import { moveWindows } from "./firestore-midnight";
import { parentReadOf, timestampOf, timestampOfMicros, versionOf, windowsFields } from "./firestore-parent";
import { sumShards } from "./sum";

// Moved, still reached from here by the code that imported them from this module.
export { findMovedWindows } from "./firestore-midnight";
export { coveredUntilUs } from "./firestore-parent";

export interface FirestoreRollupStoreOptions {
  /** Where a counter's total is also written (MIRRORS, model/mirror-rules.ts); none when absent. */
  mirrors?: (counterId: string) => MirrorTarget[];
  /** Tests: runs before each step of a commit, to make mirror targets appear or disappear in between. */
  onMirrorStep?: (step: MirrorStep) => void | Promise<void>;
}

export function firestoreRollupStore(db: Firestore, options: FirestoreRollupStoreOptions = {}): RollupStore {
  return {
    async readParent(counterId) {
      return parentReadOf(await counterRef(db, counterId).get());
    },

    async readLease(counterId) {
      return leaseReadOf(await leaseRef(db, counterId).get());
    },

    async writeClaim(counterId, current, claim) {
      return await writeClaim(db, counterId, current, claim);
    },

    async deleteClaim(counterId, version) {
      try {
        await leaseRef(db, counterId).delete({ lastUpdateTime: timestampOf(version) });
        return true;
      } catch (error) {
        const code = grpcCode(error);
        if (code === GRPC.FAILED_PRECONDITION || code === GRPC.NOT_FOUND) return false;
        throw error;
      }
    },

    async sum(counterId, numShards, days): Promise<SumRead> {
      const cost = { reads: 0, aggregations: 0 };
      const sum = await sumShards(db, counterId, cost, numShards ?? undefined);
      const readUs = microsFloor(sum.readTime);
      if (sum.overflow) return { sum: { overflow: true, readUs }, ...cost };
      if (days === undefined) return { sum: { overflow: false, total: sum.total, writes: sum.writes, readUs }, ...cost };
      const counts = await sumDaysAt(db, counterId, days(readUs), timestampOfMicros(readUs), cost);
      if (counts === null) return { sum: { overflow: true, readUs }, ...cost };
      return { sum: { overflow: false, total: sum.total, writes: sum.writes, readUs, days: counts }, ...cost };
    },

    async commit(counterId, parent, sum, fields): Promise<CommitResult> {
      if (parent.version === null) return { kind: "gone" };
      const ref = counterRef(db, counterId);
      const readTime = timestampOfMicros(sum.readUs);
      const targets = options.mirrors?.(counterId) ?? [];
      const values = { total: sum.total, windows: fields.windows?.windows ?? null };
      const commit = await commitTotalAt(ref, timestampOf(parent.version), values, readTime, commitExtras(fields), targets, options.onMirrorStep, fields.grow);
      if (commit.kind !== "committed") return { kind: commit.kind, mirrorReads: commit.reads };
      return {
        kind: "committed",
        version: versionOf(commit.result.writeTime),
        commitUs: microsFloor(commit.result.writeTime),
        mirrorWrites: commit.targetWrites,
        mirrorReads: commit.reads,
      };
    },

    async moveWindows(counterId, parent, moved): Promise<MoveResult> {
      return await moveWindows(db, counterId, parent, moved, options.mirrors?.(counterId) ?? []);
    },

    async staleClaims(dueBeforeMs, limit, after): Promise<StaleClaims> {
      // A collection-group query on `dueAt` (its index: firestore.indexes.json), in (dueAt, name) order,
      // paged by the last document of the page before. The group's id is the backend's own (paths.ts): an
      // app's collections never match it. Anything in it that is not counters/{id}/…/lease is skipped
      // here, and paging goes on past it.
      let query = db.collectionGroup(ROLLUP).where("dueAt", "<", Timestamp.fromMillis(dueBeforeMs)).orderBy("dueAt").limit(limit);
      if (after !== undefined) query = query.startAfter(after as QueryDocumentSnapshot);
      const snap = await query.get();
      const claims: FoundClaim[] = [];
      for (const doc of snap.docs) {
        if (!isUnderCounter(doc.ref, ROLLUP, LEASE_ID)) continue;
        const lease = leaseReadOf(doc);
        if (lease.claim !== null) claims.push({ counterId: doc.ref.parent.parent!.id, claim: lease.claim, version: lease.version! });
      }
      return { claims, scanned: snap.size, reads: Math.max(1, snap.size), next: snap.size < limit ? null : snap.docs[snap.size - 1]! };
    },
  };
}

function commitExtras(fields: CommitFields): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  if (fields.intervalMs !== undefined) extras["rollup.intervalMs"] = fields.intervalMs;
  if (fields.reconciled === true) extras["rollup.reconciledAt"] = FieldValue.serverTimestamp();
  if (fields.load !== undefined) extras["rollup.load"] = storedLoad(fields.load);
  if (fields.grow !== undefined) extras.numShards = fields.grow.to;
  return fields.windows === undefined ? extras : { ...extras, ...windowsFields(fields.windows) };
}

/** `rollup.load` as stored: the measure's read time and writes, and the hot streak's and its last step's (null when none). */
function storedLoad(load: Load): Record<string, unknown> {
  return {
    readTime: timestampOfMicros(load.readUs),
    writes: load.writes,
    hotSince: load.hot === null ? null : timestampOfMicros(load.hot.sinceUs),
    hotWrites: load.hot === null ? null : load.hot.writes,
    hotStepTime: load.hot?.step == null ? null : timestampOfMicros(load.hot.step.atUs),
    hotStepFrom: load.hot?.step == null ? null : load.hot.step.from,
  };
}

/**
 * The shards' sums of `days` at `readTime`, in one read-only transaction pinned to that time (the read time
 * of the total they are committed with): one aggregation query per day, as a query that sums several day
 * fields would need a composite index naming them. Null if a sum is not a safe integer (logged).
 */
async function sumDaysAt(db: Firestore, counterId: string, days: readonly string[], readTime: Timestamp, cost: { aggregations: number }): Promise<DayCounts | null> {
  const shards = shardsRef(db, counterId);
  const sums = await db.runTransaction(
    (tx) => Promise.all(days.map((day) => tx.get(shards.aggregate({ count: AggregateField.sum(dayField(day)) })))),
    { readOnly: true, readTime },
  );
  cost.aggregations += days.length;
  const counts: DayCounts = {};
  for (const [i, snap] of sums.entries()) {
    const count = snap.data().count;
    if (!Number.isSafeInteger(count)) {
      logger.error("a day's sum over the shards is not a safe integer; the windows are left at their last exact values", { counterId, day: days[i] });
      return null;
    }
    counts[days[i]!] = count;
  }
  return counts;
}

/** The lease's claim: `eventId` and `dueAt`. */
function leaseReadOf(lease: DocumentSnapshot): LeaseRead {
  const eventId = lease.get("eventId") as unknown;
  const dueAt = lease.get("dueAt") as unknown;
  return {
    claim: lease.exists && typeof eventId === "string" && dueAt instanceof Timestamp ? { eventId, dueMs: dueAt.toMillis() } : null,
    version: lease.exists ? versionOf(lease.updateTime!) : null,
  };
}

/** Writes the claim into the lease; returns its version, or null if another invocation got there first. */
async function writeClaim(db: Firestore, counterId: string, current: LeaseRead, claim: ClaimData): Promise<string | null> {
  const ref = leaseRef(db, counterId);
  const data = {
    eventId: claim.eventId,
    dueAt: Timestamp.fromMillis(claim.dueMs),
    intervalMs: claim.intervalMs,
    claimedAt: FieldValue.serverTimestamp(),
  };
  try {
    const result =
      current.version !== null ? await ref.update(data, { lastUpdateTime: timestampOf(current.version) }) : await ref.create(data);
    return versionOf(result.writeTime);
  } catch (error) {
    const code = grpcCode(error);
    if (code === GRPC.FAILED_PRECONDITION || code === GRPC.ALREADY_EXISTS || code === GRPC.NOT_FOUND) return null;
    throw error;
  }
}

/** The steps of a mirrored commit, for tests: "commit" before each write, "read" before each read of the targets. */
export type MirrorStep = "commit" | "read";

/**
 * The commit: the parent's update and, in the same write, the total on every mirror target that exists
 * (mirrored.ts says how, and why only the parent's absence means "gone").
 */
async function commitTotalAt(
  ref: DocumentReference,
  lastUpdateTime: Timestamp,
  values: MirrorValues,
  readTime: Timestamp,
  extra: Record<string, unknown>,
  mirrors: readonly MirrorTarget[] = [],
  onStep?: (step: MirrorStep) => void | Promise<void>,
  grow?: { from: number; to: number },
): Promise<MirroredCommit<WriteResult>> {
  const db = ref.firestore;
  const fields = {
    total: values.total,
    "rollup.readTime": readTime,
    "rollup.commits": FieldValue.increment(1),
    "rollup.committedAt": FieldValue.serverTimestamp(),
    ...extra,
  };
  const port: MirrorPort<WriteResult> = {
    async commit(present, absent) {
      await onStep?.("commit");
      const batch = db.batch();
      batch.update(ref, fields, { lastUpdateTime });
      if (grow !== undefined) {
        // New shards at 0, created with numShards (growth.ts). A merge of increment(0) creates a missing
        // shard and leaves one that somehow exists as it is: nothing already counted is ever overwritten.
        for (let i = grow.from; i < grow.to; i++) {
          batch.set(shardRef(db, ref.id, i), newShardMerge(), { merge: true });
        }
      }
      writeTargets(batch, db, ref.id, present, absent, values);
      const [result] = await batch.commit();
      return result!;
    },
    async read(paths) {
      await onStep?.("read");
      const [parent, ...docs] = await db.getAll(ref, ...paths.map((path) => db.doc(path)));
      return {
        parent: !parent!.exists ? "gone" : parent!.updateTime!.isEqual(lastUpdateTime) ? "same" : "changed",
        exists: docs.map((doc) => doc.exists),
      };
    },
  };
  return await commitMirrored(port, mirrors, (target) => logMissingMirror(ref.id, target));
}

