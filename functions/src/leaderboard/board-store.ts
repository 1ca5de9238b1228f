// A leaderboard's summary, rolled up like a counter's total (docs/leaderboards.md): a RollupStore
// (rollup/store.ts) whose "parent" is the board's summary (counters/~exactCounter/exactCounterBoards/{board})
// and whose "shards" are the board's entries (one per counter, leaderboard/entry-writes.ts). The rollup's own
// code runs over it unchanged (entry/rollupBoard.ts: rollup/index.ts's coverage, leading edge, promise of the
// next slot and chain, the per-instance memos; rollupSweep: rollup/sweep.ts), so the summary is exact by the
// rollup's argument (rollup/plan.ts) and written about once per interval under any load.
//
// What differs from a counter, and why the argument still holds:
// - The "sum" is a recount (model/board-buckets.ts): every bucket counted again at one read time R, so the
//   summary committed with `rollup.readTime` R is the board's entries at R, exactly. An entry is written in
//   the same atomic write as its counter's total, so every write of a total at or before R is in it.
// - The chain's "nothing applied" check (plan.ts, nothingApplied) compares the sum's total, writes and
//   shards. Here total = `of` (the number of entries), shards = 1 (the entries count as one), and writes = the
//   latest `changedAt` of the entries, in microseconds (0 with none). An entry written after a sum read at R
//   has changedAt > R >= that sum's latest, so it moves `writes` unless it is gone by the next sum, which only
//   a deletion does, and a deletion moves `of` unless another entry was created meanwhile, which moves
//   `writes`. So two sums that hold the same mark saw no entry write between them.
// - The summary keeps its sum's mark (`rollup.latestChange`, the latest entry write it saw), shown to the
//   rollup as the parent's load measured with that very sum (plan.ts, markOfParent): so the sweep, checking a
//   promise a quiet chain left, writes nothing when no entry moved since, as for a counter.
// - A board has no summary until its first commit: it reads as one that exists, empty, never committed (so
//   the first entry write leads), and the commit creates it. Nothing else deletes it.
// - The recount is read in the sum and written by the commit: the commit takes it from this store's memory
//   of the last recount per board when its read time is the sum's, and counts again, pinned to the sum's
//   read time, when it is not (a store per instance: entry/deps.ts).
import { FieldValue, type DocumentSnapshot, type Firestore, type Query, type QueryDocumentSnapshot, type Timestamp, type Transaction } from "firebase-admin/firestore";
import { summaryOf } from "../model/board";
import { recountBuckets, type Buckets, type EntryCounter } from "../model/board-buckets";
import { GRPC, grpcCode } from "../model/errors";
import { boardRef, boardSweepMarkRef, boardsRef, entriesRef, TRAILING, TRAILING_DUE_AT } from "../model/paths";
import { microsFloor } from "../model/time";
import { timestampOfMicros } from "../counters/times";
import { parentReadOf, storedTrailing, timestampOf, versionOf } from "../rollup/firestore-parent";
import type { CommitFields, CommitResult, ParentRead, PromisePage, RollupStore, SumRead } from "../rollup/store";

/** The summary's field that keeps its sum's latest entry write, in microseconds (see the header). */
const LATEST = "rollup.latestChange";

/** The board's summary as the rollup reads it (see the header: it always exists, `total` is `of`, one "shard", its mark as its load). */
export function boardReadOf(summary: DocumentSnapshot): ParentRead {
  const read = parentReadOf(summary);
  const of = summary.exists ? summaryOf(summary.data()).of : 0;
  const latest = summary.exists ? (summary.get(LATEST) as unknown) : undefined;
  const readUs = read.view.coveredUntilUs;
  const load = typeof latest === "number" && Number.isSafeInteger(latest) && readUs !== null ? { readUs, writes: latest, hot: null } : null;
  return { ...read, view: { ...read.view, parentExists: true, numShards: 1, total: of, load, days: null, board: null } };
}

/** One recount: the buckets, `of`, the latest entry write's time (µs) and what it cost. */
interface Recount {
  readUs: number;
  buckets: Buckets;
  of: number;
  latestUs: number;
  queries: number;
  reads: number;
}

/** Counts the board's buckets again, every read of it at `readTime` (one read-only transaction pinned there). */
async function recountAt(db: Firestore, board: string, bounds: readonly number[], readTime: Timestamp): Promise<Recount> {
  return await db.runTransaction(
    async (tx) => {
      const counter = entryCounter(tx, entriesRef(db, board));
      const latest = await tx.get(entriesRef(db, board).orderBy("changedAt", "desc").limit(1));
      const buckets = await recountBuckets(bounds, counter);
      const changedAt = latest.docs[0]?.get("changedAt") as unknown;
      return {
        readUs: microsFloor(readTime),
        buckets,
        of: buckets.counts.reduce((a, b) => a + b, 0),
        latestUs: isTimestamp(changedAt) ? microsFloor(changedAt) : 0,
        queries: counter.queries,
        reads: 1 + counter.reads,
      };
    },
    { readOnly: true, readTime },
  );
}

function isTimestamp(value: unknown): value is Timestamp {
  return typeof value === "object" && value !== null && typeof (value as Timestamp).toMillis === "function";
}

/** The entries' counts and extremes within one transaction, and how many queries and reads it made. */
function entryCounter(tx: Transaction, entries: Query): EntryCounter & { queries: number; reads: number } {
  const range = (lo: number | null, hi: number | null): Query => {
    let query = entries;
    if (lo !== null) query = query.where("total", ">=", lo);
    if (hi !== null) query = query.where("total", "<", hi);
    return query;
  };
  const counter = {
    queries: 0,
    reads: 0,
    async count(lo: number | null, hi: number | null) {
      counter.queries++;
      return (await tx.get(range(lo, hi).count())).data().count;
    },
    async extreme(lo: number | null, hi: number | null, which: "min" | "max") {
      counter.reads++;
      // An inequality on `total` orders by it first: the query needs no index beyond the automatic one.
      const snap = await tx.get(range(lo, hi).orderBy("total", which === "min" ? "asc" : "desc").limit(1));
      const total = snap.docs[0]?.get("total") as unknown;
      return typeof total === "number" ? total : null;
    },
  };
  return counter;
}

export function firestoreBoardStore(db: Firestore): RollupStore {
  // The last recount per board (see the header), for the commit of the sum it was read for.
  const recounts = new Map<string, Recount>();
  return {
    async readParent(board) {
      return boardReadOf(await boardRef(db, board).get());
    },

    // A board's summary never says kept: recount (its sum is the recount of its buckets below), so the rollup never asks.
    count: () => Promise.reject(new Error("a leaderboard's summary is not a recounted counter")),

    deleteClaim: () => Promise.resolve(false),

    async sum(board): Promise<SumRead> {
      // The summary's buckets as of R, then every count at R.
      const summary = await boardRef(db, board).get();
      const recount = await recountAt(db, board, summaryOf(summary.data()).bounds, summary.readTime);
      recounts.set(board, recount);
      return {
        sum: { overflow: false, total: recount.of, writes: recount.latestUs, readUs: recount.readUs },
        aggregations: recount.queries,
        reads: 1 + recount.reads,
      };
    },

    async commit(board, parent, sum, fields): Promise<CommitResult> {
      let recount = recounts.get(board);
      if (recount === undefined || recount.readUs !== sum.readUs || recount.of !== sum.total) {
        const summary = await boardRef(db, board).get();
        recount = await recountAt(db, board, summaryOf(summary.data()).bounds, timestampOfMicros(sum.readUs));
      }
      return await writeSummary(db, board, parent, recount, fields);
    },

    moveWindows: () => Promise.reject(new Error("a leaderboard has no windows")),

    staleClaims: () => Promise.resolve({ claims: [], scanned: 0, reads: 0, next: null }),

    async promisesDue(dueFromMs, dueBeforeMs, limit, after): Promise<PromisePage> {
      let query = boardsRef(db)
        .where(TRAILING_DUE_AT, ">=", timestampOfMicros(dueFromMs * 1000))
        .where(TRAILING_DUE_AT, "<", timestampOfMicros(dueBeforeMs * 1000))
        .orderBy(TRAILING_DUE_AT)
        .limit(limit);
      const cursor = after as { doc: QueryDocumentSnapshot } | undefined;
      if (cursor !== undefined) query = query.startAfter(cursor.doc);
      const snap = await query.get();
      const counters = snap.docs.map((doc) => ({ counterId: doc.id, parent: boardReadOf(doc) }));
      const last = snap.docs[snap.size - 1];
      const next = snap.size < limit || last === undefined ? null : { doc: last, dueMs: (last.get(TRAILING_DUE_AT) as Timestamp).toMillis() };
      return { counters, reads: Math.max(1, snap.size), next };
    },

    async readSweepMark() {
      const mark = (await boardSweepMarkRef(db).get()).get("checkedBefore") as unknown;
      return isTimestamp(mark) ? mark.toMillis() : null;
    },

    async writeSweepMark(dueBeforeMs) {
      await boardSweepMarkRef(db).set({ checkedBefore: timestampOfMicros(dueBeforeMs * 1000), at: FieldValue.serverTimestamp() });
    },

    midnightCounters: () => Promise.resolve({ counters: [], reads: 0, next: null }),
  };
}

/**
 * The summary's write: the recount and the rollup's bookkeeping (as a parent's: rollup/firestore-parent.ts), on
 * condition that the summary is still the version read, or created if there was none.
 */
async function writeSummary(db: Firestore, board: string, parent: ParentRead, recount: Recount, fields: CommitFields): Promise<CommitResult> {
  const ref = boardRef(db, board);
  const values = { of: recount.of, bounds: recount.buckets.bounds, counts: recount.buckets.counts };
  const rollup: Record<string, unknown> = { readTime: timestampOfMicros(recount.readUs), committedAt: FieldValue.serverTimestamp(), latestChange: recount.latestUs };
  if (fields.intervalMs !== undefined) rollup.intervalMs = fields.intervalMs;
  try {
    if (parent.version === null) {
      const trailing = fields.trailing == null ? {} : { trailing: storedTrailing(fields.trailing) };
      const result = await ref.create({ ...values, rollup: { ...rollup, commits: 1, ...trailing } });
      return { kind: "committed", version: versionOf(result.writeTime), commitUs: microsFloor(result.writeTime) };
    }
    const update: Record<string, unknown> = { ...values, "rollup.commits": FieldValue.increment(1) };
    for (const [key, value] of Object.entries(rollup)) update[`rollup.${key}`] = value;
    if (fields.trailing !== undefined) update[TRAILING] = storedTrailing(fields.trailing);
    const result = await ref.update(update, { lastUpdateTime: timestampOf(parent.version) });
    return { kind: "committed", version: versionOf(result.writeTime), commitUs: microsFloor(result.writeTime) };
  } catch (error) {
    // Another commit won (or the summary was removed by hand): the rollup reads it again and decides.
    const code = grpcCode(error);
    if (code === GRPC.FAILED_PRECONDITION || code === GRPC.ALREADY_EXISTS || code === GRPC.NOT_FOUND) return { kind: "changed" };
    throw error;
  }
}
