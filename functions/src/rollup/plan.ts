// Pure decisions of the rollup: is a shard write already covered by the parent's total, and if not, who
// rolls it up and when. No Firebase import: times are plain numbers, so unit tests pin each case and the
// model check (functions/test/model.test.ts) drives these very functions under random schedules.
//
// Times: Firestore commit/read times in whole microseconds (model/time.ts: a write time rounded up, a read
// time down, so "covered" can only err towards one extra rollup). Due times are whole milliseconds.
//
// THE MOVING PARTS (docs/rollup.md tells them in prose)
// - Coverage: `rollup.readTime` R is the read time of the sum the parent's total holds. A write committed
//   at W <= R is in the total; its event returns after one parent read (none with the instance's memo).
// - The promise: a busy commit writes, in the same conditional write as the total, `rollup.trailing` =
//   {dueAt D, owner}: "a sum read at or after D will follow". D = R + I (I: the interval, below). Its owner
//   (the invocation that committed it, named by its shard write: `owner`) waits until D, sums again and,
//   if anything was applied since its last sum, commits with the next promise; if nothing was, it ends
//   without a write (the chain ends). So on a busy counter a slot costs one parent write and nothing else,
//   and only the owner waits.
// - Deciding, for a write W on a parent (R, K = `rollup.committedAt`, S = `rollup.intervalMs`, P):
//   1. W <= R: covered, return (unless the write owns P and P is overdue: a retried owner resumes it);
//   2. P with D >= W: defer, return: P's sum is read at or after D, so after W (P stale: take it over);
//   3. idle (no rollup commit during the S before W): lead: sum and commit at once, with no promise;
//   4. else (busy, and no promise covers W: right after a leading edge, a chain's end or a handover):
//      start: sum and commit at once with a promise of its own, and carry the chain as its owner.
// - The recorded interval S: every commit records `rollup.intervalMs` = max(its own ROLLUP_INTERVAL_MS,
//   the recorded one), except a leading edge after the counter rested 2 x S, which records its own. A
//   promise uses I = min(own, S), so D - R <= S for every promise; idleness is judged with S, and a parent
//   without a recorded interval counts as S = 60 s, the param's cap, until a commit records one.
//
// INVARIANT (T). For every write W whose event has completed a delivery, at every moment:
//   W <= R, or the parent holds a promise P with D >= W (of the counter's same incarnation) that its owner,
//   the owner event's retry, a stale takeover or the sweep fulfils: a sum read at or after D is committed,
//   or the owner's sum at or after D shows nothing was applied since R.
// Kept because:
// - R only grows: every commit is conditioned on the parent version its sum was read after;
// - a promise leaves the parent only in a commit whose sum was read at or after its D: a chain commit (its
//   owner's sum is read at or after D), a start (W > D), a takeover (now > D + stale), a lead (idle:
//   W >= K + S >= K_P + S_P >= R_P + I_P = D, K_P and S_P those of the commit that made P). Every other
//   writer of the parent (a reset, a reshard, the midnight commit, reconcile's repair, growth) updates named
//   fields and leaves `rollup.trailing` as it is: it keeps the promise (a reset that moves R past D fulfils it);
// - a chain ends without a write only when its owner's sum at R' >= D holds exactly the total and the
//   applied writes its last commit held, with the same shards: no shard write came in (R, R'], so no W in
//   (R, D] exists to have deferred;
// - a delivery completes only by skipping a covered write, deferring to a promise with D >= W, or a commit
//   whose sum was read at or after W.
// So once events stop and promises are fulfilled, every write is covered: total = Σ shards.
//
// WHO FULFILS A PROMISE. Its owner, in the same invocation. If that invocation fails, the platform retries
// the owner's event: it finds the promise its own (decision "resume") once it is overdue, and resumes the
// chain. Before that it finds its write covered (its first commit covered it) and returns: a retry that
// comes early leaves the promise to the rest. An event that finds the promise stale (now >= D + stale) takes
// it over. And the sweep (sweep.ts) checks every promise once it is stale, so one whose owner's retries ran
// out on a counter that gets no later write is fulfilled too.
//
// THE INSTANCE'S MEMO (types.ts, ParentMemo). R only grows and a promise is fulfilled before anything
// replaces it, so an instance that has seen (R, P) may decide without reading: skip W <= R, defer W <= D
// while P is not stale. Two exceptions read the parent: a write that owns the remembered promise (it may be
// its owner's retry), and a defer across incarnations: a counter deleted and created again may get a write
// at or before a promise of the deleted one, which no owner fulfils (an owner serves the incarnation it
// committed on). So a memo defers only a write to a shard document created at or before the memo was read:
// a shard of the remembered incarnation (or of an older one, whose writes are gone with it).
//
// AT MOST TWO PARENT WRITES PER INTERVAL (unchanged interval I = S), counted on the read times commits record:
// - a chain commit reads its sum at or after D = R_prev + I: one interval after the commit before it;
// - a start commits only for W > D (or with no promise): at least one interval after the chain commit that
//   made D; with no promise it follows a leading edge or a handover, which is the second write of its interval;
// - a lead commits only on an idle counter: one interval after the last commit;
// - a takeover only past D + stale.
// So no window of one interval holds three. Under sustained load the chain never ends: one write per slot.
// A strict one per interval would need a promise visible before the first busy event returns, which takes
// a write (or every event waiting): the first busy interval after a rest pays two.

import { MAX_INTERVAL_MS } from "../model/param-rules";
import type { DaysRead } from "../model/windows";
import type { Load } from "./growth";

/** A promise takes this long past its due time before anyone else assumes its owner died. */
export function staleAfterMsFor(intervalMs: number): number {
  return Math.max(10_000, 5 * intervalMs);
}

/** A retried owner resumes its overdue promise this long past its due time (earlier, it is likely still running). */
export function resumeAfterMsFor(intervalMs: number): number {
  return Math.max(2_000, 2 * intervalMs);
}

/**
 * Whom a promise made for a shard write belongs to, as `rollup.trailing.owner` stores it: the write (its shard
 * and commit time), not the delivery. Every delivery of one event carries one write, so a retried event finds
 * its own promise as it would by the event's id; and the promise of a writer that rolls its own write up (a
 * document counter's trigger: entry/documentCounters.ts) and fails is resumed by rollupTotal's event of that
 * same write. Two writes of one shard never share a commit time. (The lease of the previous version named
 * its claims the same way: legacy-lease.ts.)
 */
export function ownerKeyOf(write: { shardId: string; writtenAtUs: number }): string {
  return `${write.shardId}@${write.writtenAtUs}`;
}

/** What the trigger knows about one shard write. */
export interface WriteFacts {
  counterId: string;
  /** Whom a promise made for this write belongs to (ownerKeyOf): the same on every delivery of the write. */
  ownerKey: string;
  /** Commit time of the write, microseconds, rounded up. */
  writtenAtUs: number;
  /** Whether the write changed the shard's count (a no-op write cannot change the sum). */
  countChanged: boolean;
  /** When the written shard document was created (its createTime), microseconds; null when unknown. */
  shardCreatedUs?: number | null;
  /** A document's change that a recounted counter takes (documents/recount.ts), not a shard write. */
  recounted?: boolean;
}

/** A pending promise on the parent: `rollup.trailing`. */
export interface Trailing {
  /** A sum read at or after this time (ms since the epoch) follows. */
  dueMs: number;
  /** The shard write whose invocation owns it (ownerKeyOf). */
  owner: string;
}

/** What the parent document says. */
export interface ParentView {
  parentExists: boolean;
  /** The read time of the sum the parent's total holds, microseconds (rounded down); null if none yet. */
  coveredUntilUs: number | null;
  /** When the rollup last wrote the parent (`rollup.committedAt`), microseconds; null if never. */
  lastCommitUs: number | null;
  /** `rollup.intervalMs`, the interval the commits recorded; null if none (or not a valid interval). */
  recordedIntervalMs: number | null;
  /** `numShards`; null if absent or not a positive integer (the rollup then neither measures nor grows). */
  numShards: number | null;
  /** `rollup.load`, the load the last commit measured (growth.ts); null if none. */
  load: Load | null;
  /** A windowed counter's days as kept on the parent (model/windows.ts); null or absent when not windowed. */
  days?: DaysRead | null;
  /**
   * When the parent was last written (its update time), microseconds, rounded down; null if it does not exist.
   * Absent where a view is built without it (then no snapshot sum: plan.ts, snapshotSumAllowed).
   */
  updatedUs?: number | null;
  /** `rollup.trailing`: the pending promise; null or absent when none (or unreadable). */
  trailing?: Trailing | null;
  /** `total` when it is a number; null or absent otherwise. */
  total?: number | null;
  /** When the parent was created (its createTime), microseconds: which incarnation of the id it is; null or absent if unknown. */
  createdUs?: number | null;
  /**
   * `board`: the leaderboard whose entry holds this total (leaderboard/entry-writes.ts); null or absent when none
   * (or unknown: a commit then writes the entry anyway, model/board.ts, entryDue).
   */
  board?: string | null;
  /**
   * A document counter's `kept`: "recount" (its total is a count() of its documents, its shards stay at 0),
   * "moving" (recounted while records are built for every document), "records" or absent (the sum of its shards).
   */
  kept?: Kept | null;
  /** `rollup.movingSince`: when a recounted counter started moving to records (documents/move.ts), microseconds; null or absent otherwise. */
  movingSinceUs?: number | null;
}

/** How a counter's total is kept (a document counter's `kept`; any other counter: by its shards). */
export type Kept = "recount" | "moving" | "records";

/** Whether the counter's total is a count of its documents rather than the sum of its shards. */
export function isRecounted(view: Pick<ParentView, "kept">): boolean {
  return view.kept === "recount" || view.kept === "moving";
}

/** The rollup's settings and the instance's clock. */
export interface Timing {
  /** This instance's ROLLUP_INTERVAL_MS. */
  intervalMs: number;
  nowMs: number;
  /** A promise whose due time passed this long ago without a covering rollup is taken over. */
  staleAfterMs: number;
}

export type Decision =
  /**
   * "recounted": a shard write of a counter whose total is a count of its documents (its shards are not its
   * total); "by-records": a document's change for a counter kept by records again (the change's record did it).
   */
  | { kind: "skip"; reason: "unchanged" | "no-parent" | "covered" | "recounted" | "by-records" }
  | { kind: "defer"; toDueMs: number }
  /** Idle: sum and commit at once, with no promise. */
  | { kind: "lead" }
  /** Busy, no promise covers the write: sum and commit at once with a promise, and carry the chain. */
  | { kind: "start" }
  /** The promise is this write's own and overdue (its owner failed): fulfil it and carry the chain on. */
  | { kind: "resume"; dueMs: number }
  /** The promise is stale: sum at or after its due time, commit with a promise, and carry the chain. */
  | { kind: "takeover"; dueMs: number };

/** True when the parent's total already includes a write committed at `writtenAtUs`. */
export function isCovered(coveredUntilUs: number | null, writtenAtUs: number): boolean {
  return coveredUntilUs !== null && coveredUntilUs >= writtenAtUs;
}

/**
 * True when the rollup has not written the parent during the `intervalMs` before the write (or never):
 * the counter is idle, and summing at once cannot add a second commit to a busy interval. Both times
 * come from Firestore's clock (a commit time and a server timestamp), never from an instance's.
 */
export function isIdle(lastCommitUs: number | null, writtenAtUs: number, intervalMs: number): boolean {
  return lastCommitUs === null || lastCommitUs <= writtenAtUs - intervalMs * 1000;
}

/** S: the recorded interval, or the cap when none is recorded. Bounds D - R of any promise. */
export function spanMs(view: ParentView): number {
  return view.recordedIntervalMs ?? MAX_INTERVAL_MS;
}

/** The interval a new promise uses: never more than the recorded one, so S keeps bounding every promise. */
export function promiseIntervalMs(ownIntervalMs: number, view: ParentView): number {
  return Math.min(ownIntervalMs, view.recordedIntervalMs ?? ownIntervalMs);
}

/** The due time of a promise made with a sum read at `readUs`: one interval later. */
export function promiseDueMs(readUs: number, intervalMs: number): number {
  return Math.ceil(readUs / 1000) + intervalMs;
}

/**
 * The interval a commit records: at least what is recorded (a promise made under it may be pending), except
 * on a leading edge after a rest of two recorded intervals, which leaves no promise and fulfils any earlier
 * one (see the header), so its own interval may replace a larger one.
 */
export function intervalToRecord(ownIntervalMs: number, view: ParentView, leadWrittenAtUs: number | null): number {
  const recorded = view.recordedIntervalMs;
  if (recorded === null) return ownIntervalMs;
  const rested = leadWrittenAtUs !== null && isIdle(view.lastCommitUs, leadWrittenAtUs, 2 * recorded);
  return rested ? ownIntervalMs : Math.max(ownIntervalMs, recorded);
}

/**
 * A promise due further ahead than any can be (a hand edit, a broken clock) would make every event defer to
 * it for ever: it is treated as unreadable.
 */
export function plausibleTrailing(trailing: Trailing | null | undefined, nowMs: number): Trailing | null {
  return trailing != null && trailing.dueMs <= nowMs + 2 * MAX_INTERVAL_MS ? trailing : null;
}

/** Whether a promise is overdue enough for its own write's retry to resume it (header: who fulfils a promise). */
export function ownPromiseOverdue(trailing: Trailing, view: ParentView, nowMs: number): boolean {
  return !isCovered(view.coveredUntilUs, trailing.dueMs * 1000) && nowMs >= trailing.dueMs + resumeAfterMsFor(spanMs(view));
}

/** Decides what one delivery of a shard write event must do, given the parent as read. */
export function decide(write: WriteFacts, view: ParentView, timing: Timing): Decision {
  if (!write.countChanged) return { kind: "skip", reason: "unchanged" };
  if (!view.parentExists) return { kind: "skip", reason: "no-parent" };
  if (isRecounted(view) !== (write.recounted === true)) return { kind: "skip", reason: write.recounted === true ? "by-records" : "recounted" };
  const promise = plausibleTrailing(view.trailing, timing.nowMs);
  if (promise !== null && promise.owner === write.ownerKey && ownPromiseOverdue(promise, view, timing.nowMs)) {
    // Our own promise, not fulfilled long after its due time: our invocation failed (this is its retry, or
    // rollupTotal's event of a write whose document trigger made the promise and failed). Others deferred
    // to it, so "my write is covered" must not end it.
    return { kind: "resume", dueMs: promise.dueMs };
  }
  if (isCovered(view.coveredUntilUs, write.writtenAtUs)) return { kind: "skip", reason: "covered" };
  if (deferrable(promise, write)) {
    // The owner should have summed long ago and has not: do its work (with a sum read after its due time).
    if (timing.nowMs >= promise.dueMs + timing.staleAfterMs) return { kind: "takeover", dueMs: promise.dueMs };
    return { kind: "defer", toDueMs: promise.dueMs };
  }
  if (isIdle(view.lastCommitUs, write.writtenAtUs, spanMs(view))) return { kind: "lead" };
  return { kind: "start" };
}

/** A promise due at or after the write: its sum is read after the write. */
export function deferrable(promise: Trailing | null, write: Pick<WriteFacts, "writtenAtUs">): promise is Trailing {
  return promise !== null && promise.dueMs * 1000 >= write.writtenAtUs;
}

/** The parent as an instance remembers it (types.ts, ParentMemo): its view, and when it was read or written. */
export interface RememberedParent {
  view: ParentView;
  /** The read time of the read (or the commit time of the write) it comes from, microseconds: it was the parent then. */
  observedUs: number;
}

/**
 * How long a memory of a recounted parent decides a document's change: a counter that starts moving to records
 * (documents/move.ts) needs a record of every change from then on, which a trigger deciding from an older
 * memory of the parent (still "recount") would skip; the move starts listing documents only this long after.
 */
export const RECOUNT_MEMO_MS = 10_000;

/**
 * What an instance's memo of the parent decides without reading it (header: the instance's memo): skip a write
 * it covers, or defer one to a promise it holds; null when the parent must be read.
 */
export function decideFromMemo(write: WriteFacts, memo: RememberedParent, timing: Pick<Timing, "nowMs" | "staleAfterMs">): Decision | null {
  if (!write.countChanged) return { kind: "skip", reason: "unchanged" };
  if (write.recounted === true && timing.nowMs * 1000 - memo.observedUs > RECOUNT_MEMO_MS * 1000) return null;
  const { view } = memo;
  if (!view.parentExists || isRecounted(view) !== (write.recounted === true)) return null;
  const promise = plausibleTrailing(view.trailing, timing.nowMs);
  if (promise !== null && promise.owner === write.ownerKey) return null; // perhaps its owner's retry: read
  if (isCovered(view.coveredUntilUs, write.writtenAtUs)) return { kind: "skip", reason: "covered" };
  if (deferrable(promise, write) && timing.nowMs < promise.dueMs + timing.staleAfterMs && sameIncarnation(write, memo)) {
    return { kind: "defer", toDueMs: promise.dueMs };
  }
  return null;
}

/**
 * Whether the write's shard belongs to the incarnation the memo saw (or to an older one, whose writes do not
 * count any more): its document was created at or before the memo's reading. A counter deleted and created
 * again since has shards created after it.
 */
export function sameIncarnation(write: Pick<WriteFacts, "shardCreatedUs">, memo: RememberedParent): boolean {
  return write.shardCreatedUs != null && write.shardCreatedUs <= memo.observedUs;
}

/**
 * What a chain's sum is compared with to tell whether anything was applied since its last sum: the total,
 * the applied writes (growth.ts) and the number of shards it summed. Null when the writes are not known
 * (shards from before they counted them): a change is assumed.
 */
export interface SumMark {
  total: number;
  writes: number;
  shards: number;
}

/**
 * Whether the chain may end without a write (header): nothing was applied between two sums. Every shard
 * write moves one of the three: an increment the writes, a reset's subtraction the total, a reshard's fold
 * the number of shards.
 */
export function nothingApplied(before: SumMark | null, now: SumMark | null): boolean {
  return before !== null && now !== null && before.total === now.total && before.writes === now.writes && before.shards === now.shards;
}

/**
 * What the parent's own fields say of the sum its total holds: its total, and the writes `rollup.load`
 * measured with that very sum (the commit that set `rollup.readTime` set it). A reset and a reshard, which
 * write shards that a sum may show no change of, delete `rollup.load` (counters/reset.ts, reshard.ts). Null
 * when they cannot say (no load, or one measured with another sum): a change is assumed.
 */
export function markOfParent(view: ParentView): SumMark | null {
  const { load, numShards, total, coveredUntilUs } = view;
  if (load == null || total == null || numShards === null || coveredUntilUs === null || load.readUs !== coveredUntilUs) return null;
  return { total, writes: load.writes, shards: numShards };
}

/**
 * THE SINGLE-SHARD SNAPSHOT SUM. A leading edge on a counter of one shard may take the event's own `after`
 * document as the sum, read at the write's commit time W: no aggregation query. It is exact when, at W, that
 * shard was all the shards there were, and when what the parent says (its total's coverage, a reset's
 * `resetAt`) already held at W. The guard: the parent it commits onto (on condition that it is unchanged)
 * has numShards = 1 and was last written before W (strictly: a write in the same transaction as the parent's,
 * a reshard's fold or a reset's subtraction, is summed). That parent then was the parent from its update
 * time to the commit, W included, so numShards was 1 at W, and every change of numShards came before W: a
 * reshard down to one shard deletes the others in its own transaction, growth adds shards only with
 * numShards, and increments write with update(), so no removed shard comes back. A reset's write (which
 * subtracts what it read from the shards and sets `resetAt` on the parent in one transaction) came before W
 * too, so the shard at W holds exactly what counts after the reset.
 * Without the guard (the model check's mutant, functions/test/model.test.ts), two things go wrong:
 * - an event of a write made before a reshard down to one shard, delivered after it, commits the one shard
 *   it saw as the whole sum;
 * - an event of a write made between a reset's read and its write, delivered after the write, commits a
 *   count from before the reset's subtraction as the total after the reset. A marker that aggregation
 *   commits set and that changes of numShards clear (the design first considered) misses this one: the
 *   model check found it.
 * A write older than its parent's last write (an event delivered after a rollup commit, a reset or a
 * reshard) is summed by an aggregation, as before. Firestore's times are whole microseconds; W is used only
 * when it is exactly the document's update time (entry/rollupTotal.ts), and the parent's is rounded down.
 */
export function snapshotSumAllowed(view: ParentView, write: { shardId: string; writtenAtUs: number }): boolean {
  return (
    view.numShards === 1 &&
    write.shardId === "0" &&
    view.updatedUs != null &&
    view.updatedUs < write.writtenAtUs &&
    !isCovered(view.coveredUntilUs, write.writtenAtUs)
  );
}
