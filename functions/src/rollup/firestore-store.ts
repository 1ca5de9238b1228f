// The RollupStore production uses (store.ts), over Firestore: the parent (firestore-parent.ts), the lease
// and the shards of counters/{id}, with every precondition the rollup relies on (a commit on the parent's
// update time, a claim on the lease's), and the two queries of the scheduled runs: the sweep's stale claims
// and the midnight commit's counters. The emulator tests exercise exactly this module.
import { AggregateField, FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type QueryDocumentSnapshot } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { COUNTERS, counterRef, isUnderCounter, LEASE_ID, leaseRef, ROLLUP, shardsRef, WINDOWS_MOVE_AT } from "../model/paths";
import { dayField } from "../model/shards";
import type { DayCounts } from "../model/windows";
import { midnightBoundUs } from "../model/midnight-order";
import { microsFloor } from "../model/time";
import type { ClaimData, CommitResult, FoundClaim, LeaseRead, MidnightPage, MoveResult, RollupStore, StaleClaims, SumRead } from "./store";
import { commitParent, moveWindows, parentReadOf, timestampOf, versionOf, type MirrorStep } from "./firestore-parent";
import { timestampOfMicros } from "../counters/times";
import { sumShards } from "./sum";

// The steps of a mirrored commit, which the store's options take (onMirrorStep).
export type { MirrorStep } from "./firestore-parent";

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
      return await commitParent(db, counterId, parent, sum, fields, options.mirrors?.(counterId) ?? [], options.onMirrorStep);
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

    async midnightCounters(atMs, limit, after): Promise<MidnightPage> {
      // The counters whose `rollup.windowsMoveAt` is at or before `atMs` (its whole millisecond: the values lie
      // a spread of microseconds after their midnight), in (windowsMoveAt, name) order, which the spread makes
      // an order spread over the key space (model/midnight-order.ts), paged by the last document of the page
      // before. Its single-field index is declared in firestore.indexes.json (the rest of `rollup` is not indexed).
      let query = db.collection(COUNTERS).where(WINDOWS_MOVE_AT, "<=", timestampOfMicros(midnightBoundUs(atMs))).orderBy(WINDOWS_MOVE_AT).limit(limit);
      if (after !== undefined) query = query.startAfter(after as QueryDocumentSnapshot);
      const snap = await query.get();
      return {
        counters: snap.docs.map((doc) => ({ counterId: doc.id, parent: parentReadOf(doc) })),
        reads: Math.max(1, snap.size),
        next: snap.size < limit ? null : snap.docs[snap.size - 1]!,
      };
    },
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
