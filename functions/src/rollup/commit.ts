// The sum-and-commit step: sum the shards and write the total onto the parent, on condition that the
// parent is still the one read, and only if the sum was read late enough to cover what it must cover.
// A commit at once (now.ts: a leading edge or a start) runs it at once; a chain's owner (trail.ts) after
// waiting for its promise's due time; a reconcile's repair (functions/src/reconcile/) with the sum its check
// read. The write itself is the store's `commit`: one atomic write, which also carries the promise of the
// next slot when asked (plan.ts). Each commit leaves the parent it wrote in the instance's memo
// (BoundedMemo, below), where the next events of the counter may decide from it (index.ts).
import * as logger from "firebase-functions/logger";
import { COUNTERS } from "../model/paths";
import { dayOf, dayPlan, type DayCounts, type DayPlan } from "../model/windows";
import { growthStep } from "./growth";
import { intervalToRecord, isRecounted, nothingApplied, promiseDueMs, snapshotSumAllowed, type ParentView, type SumMark, type Trailing } from "./plan";
import type { CommitFields, ParentRead, SumRead } from "./store";
import type { Run, ShardWrite } from "./types";

/** What one attempt to sum the shards and commit the total onto a parent came to. */
export type CommitStep =
  /**
   * Written; `after`: the parent as this commit left it (what the joiners of a commit at once decide from);
   * `mark`: what its sum held (plan.ts, nothingApplied); `trailing`: the promise it made, if any.
   */
  | { kind: "committed"; total: number; lagMs: number; readUs: number; version: string; after: ParentRead; mark: SumMark | null; trailing: Trailing | null }
  /** Nothing was applied since `unless` (the chain's last sum): nothing was written (trail.ts). */
  | { kind: "quiet"; readUs: number }
  | { kind: "overflow" }
  /** The sum was read before `targetUs`, so it may miss writes it must cover; nothing was written. */
  | { kind: "early"; readUs: number }
  /** The parent was deleted. */
  | { kind: "gone" }
  /** The parent changed since it was read (the commit's precondition failed); nothing was written. */
  | { kind: "changed" };

/** What a commit is for: the counter, the parent it commits onto, and the times it is held to. */
export interface CommitTarget {
  counterId: string;
  parent: ParentRead;
  /** The sum must be read at or after this time (microseconds), or nothing is written. */
  targetUs: number;
  /** The write of a leading-edge commit (the only kind that may lower the recorded interval); null for a claim's. */
  leadWrittenAtUs: number | null;
  /** Where the reported lag is counted from (microseconds). */
  sinceUs: number;
  /** A leading edge's own shard write: the sum itself, where plan.ts allows it (snapshotSumAllowed). */
  snapshot?: ShardWrite;
  /**
   * The promise the commit makes: its owner and its interval (plan.ts, promiseIntervalMs); the due time is
   * one interval after the sum's read time. Null: it makes none (and removes the parent's); absent: the
   * parent's stays (a reconcile's repair, the midnight commit's sum).
   */
  promise?: { owner: string; intervalMs: number } | null;
  /** A chain's last sum: when the new one holds the same (plan.ts, nothingApplied), nothing is written. */
  unless?: SumMark | null;
  /**
   * A recounted chain's last total: a count cannot tell "nothing changed" from "as many came as went", so the
   * commit is made; when the count is this same total it makes no promise (the chain ends).
   */
  endsAt?: number;
  /** A move to records ends (documents/move.ts): the sum of the shards is committed, and `kept: "records"`. */
  toRecords?: true;
  /**
   * A reconcile's repair (functions/src/reconcile/): it keeps the recorded interval (it knows no deployed
   * one) and stamps `rollup.reconciledAt`; `sum`, when given, is the sum its check read (committed as it is).
   */
  reconciled?: { sum?: SumRead };
}

/**
 * Sums the shards and, if the sum was read at or after `targetUs`, commits it onto the parent (on
 * condition that the parent is unchanged), recording the interval plan.ts asks for.
 */
export async function sumAndCommit(run: Run, target: CommitTarget): Promise<CommitStep> {
  const { deps, ops } = run;
  const view = target.parent.view;
  // A windowed counter's days are for the rollup clock's day, read once before the sum (model/windows.ts).
  const days = view.days == null ? undefined : dayPlan(view.days, (deps.dayClockMs ?? deps.nowMs)());
  // What plan.ts allows and asks: the event's own shard as the sum, and the interval to record.
  const snapshot = target.snapshot !== undefined && snapshotSumAllowed(view, target.snapshot) ? target.snapshot : undefined;
  const intervalMs = target.reconciled !== undefined ? undefined : intervalToRecord(deps.intervalMs, view, target.leadWrittenAtUs);
  const given = target.reconciled?.sum ?? (snapshot === undefined ? null : snapshotSum(snapshot, days));
  const recounted = given === null && isRecounted(view) && target.toRecords !== true;
  const read = given ?? (recounted ? await recountSum(run, target.counterId, view, days) : await deps.store.sum(target.counterId, view.numShards, days?.open));
  if (given === null) {
    ops.aggregations += read.aggregations;
    ops.reads += read.reads;
  }
  const sum = read.sum;
  if (sum.overflow) {
    // No exact JS number holds the sum. Keep the last exact total rather than write a rounded one;
    // retrying cannot help, so the event completes (and the claim is dropped). Reconcile or reset the
    // counter to recover.
    const path = `${COUNTERS}/${target.counterId}`;
    logger.error("shard sum is beyond 2^53 - 1; total left at its last exact value", { counterId: target.counterId, path });
    return { kind: "overflow" };
  }
  if (sum.readUs < target.targetUs) return { kind: "early", readUs: sum.readUs };
  // The shards' count is the parent's numShards when the writes were summed with the counts (sum.ts).
  const mark: SumMark | null = sum.writes === null || view.numShards === null ? null : { total: sum.total, writes: sum.writes, shards: view.numShards };
  if (target.unless !== undefined && nothingApplied(target.unless, mark)) return { kind: "quiet", readUs: sum.readUs };
  await deps.onStage?.("summed");
  const fields: CommitFields = intervalMs === undefined ? { reconciled: true } : { intervalMs };
  // The promise the commit makes: none asked (absent: the parent's stays), none (a lead, a handover, a recounted
  // chain's end), or the next slot's.
  const ends = target.endsAt !== undefined && sum.total === target.endsAt;
  let trailing: Trailing | null | undefined = undefined;
  if (target.promise === null || (target.promise !== undefined && ends)) trailing = null;
  else if (target.promise !== undefined) trailing = { dueMs: promiseDueMs(sum.readUs, target.promise.intervalMs), owner: target.promise.owner };
  // A recount past RECOUNT_LIMIT: the counter starts its move to records (documents/recount.ts).
  if (recounted && view.kept === "recount" && "overLimit" in read && read.overLimit === true) fields.kept = "moving";
  if (target.toRecords === true) fields.kept = "records";
  if (trailing !== undefined) fields.trailing = trailing;
  if (deps.growth !== undefined && sum.writes !== null && view.numShards !== null) {
    // The load over the last interval, and the shards it needs (growth.ts): grown in this very commit.
    const step = growthStep(view.load, view.numShards, sum.readUs, sum.writes, deps.growth);
    fields.load = step.load;
    if (step.numShards > view.numShards) fields.grow = { from: view.numShards, to: step.numShards, writesPerSecond: step.rate ?? null };
  }
  if (days !== undefined) {
    // Committing a windowed counter's total without its days would move `rollup.readTime` past days it did not sum.
    if (sum.days === undefined) throw new Error(`rollup of counter "${target.counterId}": the store did not sum the open days`);
    fields.windows = days.after(sum.days);
  }
  const result = await deps.store.commit(target.counterId, target.parent, sum, fields);
  ops.reads += result.mirrorReads ?? 0;
  if (result.kind !== "committed") {
    deps.parents?.delete(target.counterId);
    return { kind: result.kind };
  }
  const grown = fields.grow === undefined ? 0 : fields.grow.to - fields.grow.from;
  const written = 1 + (result.mirrorWrites ?? 0) + grown + (result.boardWrites ?? 0);
  ops.writes += written;
  run.commitWrites = (run.commitWrites ?? 0) + written;
  if (fields.grow !== undefined) {
    const rate = fields.grow.writesPerSecond;
    logger.info("counter grew", {
      counterId: target.counterId,
      fromShards: fields.grow.from,
      toShards: fields.grow.to,
      writesPerSecond: rate === null ? null : Math.round(rate * 10) / 10,
    });
  }
  if (fields.kept === "moving") {
    logger.info("document counter moving to records: its documents passed RECOUNT_LIMIT", { counterId: target.counterId, documents: sum.total });
  }
  const lagMs = Math.max(0, deps.nowMs() - Math.floor(target.sinceUs / 1000));
  const view2: ParentView = {
    parentExists: true,
    coveredUntilUs: sum.readUs,
    lastCommitUs: result.commitUs,
    recordedIntervalMs: fields.intervalMs ?? view.recordedIntervalMs,
    numShards: fields.grow?.to ?? view.numShards,
    load: fields.load ?? view.load,
    days: fields.windows === undefined ? view.days : { days: fields.windows.days, sinceUs: sum.readUs, moveAtMs: fields.windows.moveAtMs },
    updatedUs: result.commitUs,
    trailing: trailing === undefined ? (view.trailing ?? null) : trailing,
    total: sum.total,
    createdUs: view.createdUs ?? null,
    // As read: a commit that wrote `board` leaves it unknown here, and the next one only writes the entry again.
    board: view.board ?? null,
    kept: fields.kept ?? view.kept ?? null,
    movingSinceUs: fields.kept === "moving" ? result.commitUs : (view.movingSinceUs ?? null),
  };
  const after: ParentRead = { view: view2, version: result.version, observedUs: result.commitUs };
  deps.parents?.set(target.counterId, after);
  return { kind: "committed", total: sum.total, lagMs, readUs: sum.readUs, version: result.version, after, mark, trailing: view2.trailing ?? null };
}

/**
 * The event's own shard document as the sum at its write time (plan.ts, the single-shard snapshot sum): its
 * count, its applied writes, and a windowed counter's open days as of that time. Null where the document
 * cannot give what an aggregation would (a malformed count or day, a time that is not exact): the shards are
 * summed instead.
 */
function snapshotSum(write: ShardWrite, days: DayPlan | undefined): SumRead | null {
  const after = write.after;
  if (after === undefined || write.writtenAtExact !== true || after.count.malformed) return null;
  const readUs = write.writtenAtUs;
  const none = { aggregations: 0, reads: 0 };
  if (days === undefined) return { sum: { overflow: false, total: after.count.value, writes: after.writes, readUs }, ...none };
  const counts = days.fromShard(after.days, readUs);
  return counts === null ? null : { sum: { overflow: false, total: after.count.value, writes: after.writes, readUs, days: counts }, ...none };
}

/**
 * A recounted counter's "sum": the count() of its documents (RecountDeps.query) at one read time, limited to
 * RECOUNT_LIMIT + 1 while it is kept by recount (one more and it starts moving to records: counted again in
 * full, once, so the total stays exact), in full while it moves. A windowed counter's days: what the parent
 * kept, exact at its read time, and the change of the count since on the rollup clock's day (a change counts
 * on the day the commit that first covers it is made). No rule recounting it (a DOCUMENT_COUNTERS changed
 * under it): the last total stays, logged, as for a sum beyond 2^53 (overflow).
 */
async function recountSum(run: Run, counterId: string, view: ParentView, days: DayPlan | undefined): Promise<SumRead & { overLimit: boolean }> {
  const { deps } = run;
  const query = deps.recount?.query(counterId) ?? null;
  if (query === null || deps.recount === undefined) {
    logger.error("document counter kept by recount, but no rule of DOCUMENT_COUNTERS recounts it; its total stays as it is", { counterId });
    return { sum: { overflow: true, readUs: 0 }, aggregations: 0, reads: 0, overLimit: false };
  }
  const limit = view.kept === "recount" ? deps.recount.limit : null;
  let read = await deps.store.count(query, limit);
  let reads = read.reads;
  const overLimit = limit !== null && read.count > limit;
  if (overLimit) {
    read = await deps.store.count(query, null);
    reads += read.reads;
  }
  const total = read.count;
  let counted: DayCounts | undefined;
  if (days !== undefined) {
    const today = dayOf((deps.dayClockMs ?? deps.nowMs)());
    const kept = view.days?.days ?? {};
    counted = { [today]: (kept[today] ?? 0) + total - (view.total ?? total) };
  }
  return { sum: { overflow: false, total, writes: null, readUs: read.readUs, ...(counted === undefined ? {} : { days: counted }) }, aggregations: reads, reads: 0, overLimit };
}

/** How many counters an instance's memos (LeadMemo, ParentMemo) keep: the oldest are forgotten first. */
export const MEMO_MAX = 1000;

/**
 * A memo that keeps at most `max` counters: `set` makes a counter the most recently used (a Map's order is
 * the order of insertion) and forgets the least recently used one beyond `max` (each memo says what that
 * costs). The instance's memos (types.ts: LeadMemo, ParentMemo) are these (entry/rollupTotal.ts), so no step can
 * forget the bound.
 */
export class BoundedMemo<V> extends Map<string, V> {
  constructor(private readonly max: number = MEMO_MAX) {
    super();
  }

  override set(counterId: string, value: V): this {
    if (this.has(counterId)) this.delete(counterId);
    else if (this.size >= this.max) this.delete(this.keys().next().value!);
    return super.set(counterId, value);
  }
}
