// The RollupStore production uses (store.ts), over Firestore: the parent (firestore-parent.ts) and the shards
// of counters/{id}, with every precondition the rollup relies on (a commit on the parent's update time), and
// the queries of the scheduled runs: the sweep's promises (and the previous version's leases, with the
// sweep's mark) and the midnight commit's counters. The emulator tests exercise exactly this module.
import { AggregateField, FieldPath, FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Query, type QueryDocumentSnapshot } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { COUNTERS, counterRef, isUnderCounter, LEASE_ID, leaseRef, ROLLUP, shardsRef, sweepMarkRef, TRAILING_DUE_AT, WINDOWS_MOVE_AT } from "../model/paths";
import { dayField } from "../model/shards";
import type { DayCounts } from "../model/windows";
import { midnightBoundUs } from "../model/midnight-order";
import { microsFloor } from "../model/time";
import type { CommitResult, CountRead, FoundClaim, LegacyClaim, MidnightPage, MoveResult, PromisePage, RecountQuery, RollupStore, StaleClaims, SumRead } from "./store";
import { commitParent, moveWindows, parentReadOf, timestampOf, versionOf, type MirrorStep } from "./firestore-parent";
import { timestampOfMicros } from "../counters/times";
import { sumShards } from "./sum";

// The steps of a mirrored commit, which the store's options take (onMirrorStep).
export type { MirrorStep } from "./firestore-parent";

export interface FirestoreRollupStoreOptions {
  /** Where a counter's total is also written (MIRRORS, model/mirror-rules.ts); none when absent. */
  mirrors?: (counterId: string) => MirrorTarget[];
  /** The leaderboard a counter is on (LEADERBOARDS, model/leaderboard-rules.ts): its commits carry its entry. None when absent. */
  boards?: (counterId: string) => string | undefined;
  /** Tests: runs before each step of a commit, to make mirror targets appear or disappear in between. */
  onMirrorStep?: (step: MirrorStep) => void | Promise<void>;
}

export function firestoreRollupStore(db: Firestore, options: FirestoreRollupStoreOptions = {}): RollupStore {
  return {
    async readParent(counterId) {
      return parentReadOf(await counterRef(db, counterId).get());
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

    async count(query, limit): Promise<CountRead> {
      let q: Query = recountQuery(db, query);
      if (limit !== null) q = q.limit(limit + 1);
      const snap = await q.count().get();
      const count = snap.data().count;
      // count() is billed a read per 1,000 index entries it reads, at least one.
      return { count, readUs: microsFloor(snap.readTime), reads: Math.max(1, Math.ceil(count / 1000)) };
    },

    async commit(counterId, parent, sum, fields): Promise<CommitResult> {
      return await commitParent(db, counterId, parent, sum, fields, options.mirrors?.(counterId) ?? [], options.onMirrorStep, options.boards?.(counterId));
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

    async promisesDue(dueFromMs, dueBeforeMs, limit, after): Promise<PromisePage> {
      // The parents whose promise is due in [dueFromMs, dueBeforeMs), in (dueAt, name) order, paged by the last
      // document of the page before. Its single-field index is declared in firestore.indexes.json.
      let query = db
        .collection(COUNTERS)
        .where(TRAILING_DUE_AT, ">=", Timestamp.fromMillis(dueFromMs))
        .where(TRAILING_DUE_AT, "<", Timestamp.fromMillis(dueBeforeMs))
        .orderBy(TRAILING_DUE_AT)
        .limit(limit);
      const cursor = after as { doc: QueryDocumentSnapshot } | undefined;
      if (cursor !== undefined) query = query.startAfter(cursor.doc);
      const snap = await query.get();
      const counters = snap.docs.map((doc) => ({ counterId: doc.id, parent: parentReadOf(doc) }));
      const last = snap.docs[snap.size - 1];
      const next = snap.size < limit || last === undefined ? null : { doc: last, dueMs: (last.get(TRAILING_DUE_AT) as Timestamp).toMillis() };
      return { counters, reads: Math.max(1, snap.size), next };
    },

    async readSweepMark() {
      const mark = (await sweepMarkRef(db).get()).get("checkedBefore") as unknown;
      return mark instanceof Timestamp ? mark.toMillis() : null;
    },

    async writeSweepMark(dueBeforeMs) {
      await sweepMarkRef(db).set({ checkedBefore: Timestamp.fromMillis(dueBeforeMs), at: FieldValue.serverTimestamp() });
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
 * A recounted counter's documents as a query: its collection, and one equality filter per condition on its
 * field path (dotted: a map's field). Firestore's `==` compares numbers by value (1 == 1.0), matches `null` only
 * where the field holds null (not where it is missing), and never matches across types: the semantics of the
 * conditions' `holds` (model/conditions.ts); equality filters on several fields are served by merging the
 * automatic single-field indexes, so no composite index is needed.
 */
export function recountQuery(db: Firestore, query: RecountQuery): Query {
  let q: Query = db.collection(query.collection);
  for (const filter of query.filters) q = q.where(new FieldPath(...filter.field.split(".")), "==", filter.value);
  return q;
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

/** A legacy lease's claim (`eventId` and `dueAt`, legacy-lease.ts), and its version; null claim when unreadable. */
function leaseReadOf(lease: DocumentSnapshot): { claim: LegacyClaim | null; version: string | null } {
  const eventId = lease.get("eventId") as unknown;
  const dueAt = lease.get("dueAt") as unknown;
  return {
    claim: lease.exists && typeof eventId === "string" && dueAt instanceof Timestamp ? { eventId, dueMs: dueAt.toMillis() } : null,
    version: lease.exists ? versionOf(lease.updateTime!) : null,
  };
}
