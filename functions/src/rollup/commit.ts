// The sum-and-commit step: sum the shards and write the total onto the parent, on condition that the
// parent is still the one read, and only if the sum was read late enough to cover what it must cover.
// The leading edge (lead.ts) runs it at once; a claim's finisher (claim.ts) after waiting for the due
// time; a reconcile's repair (functions/src/reconcile/) with the sum its check read. The write itself is
// the store's `commit`: one atomic write. Each commit leaves the parent it wrote in the instance's memo
// (BoundedMemo, below), where a leading edge may start from it (index.ts).
import * as logger from "firebase-functions/logger";
import { COUNTERS } from "../model/paths";
import { dayPlan, type DayPlan } from "../model/windows";
import { growthStep } from "./growth";
import { intervalToRecord, snapshotSumAllowed, type ParentView } from "./plan";
import type { CommitFields, ParentRead, SumRead } from "./store";
import type { Run, ShardWrite } from "./types";

/** What one attempt to sum the shards and commit the total onto a parent came to. */
export type CommitStep =
  /** Written; `after`: the parent as this commit left it (what a leading edge's joiners decide from). */
  | { kind: "committed"; total: number; lagMs: number; readUs: number; version: string; after: ParentView }
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
  const read = given ?? (await deps.store.sum(target.counterId, view.numShards, days?.open));
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
  await deps.onStage?.("summed");
  const fields: CommitFields = intervalMs === undefined ? { reconciled: true } : { intervalMs };
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
  ops.writes += 1 + (result.mirrorWrites ?? 0) + grown;
  if (fields.grow !== undefined) {
    const rate = fields.grow.writesPerSecond;
    logger.info("counter grew", {
      counterId: target.counterId,
      fromShards: fields.grow.from,
      toShards: fields.grow.to,
      writesPerSecond: rate === null ? null : Math.round(rate * 10) / 10,
    });
  }
  const lagMs = Math.max(0, deps.nowMs() - Math.floor(target.sinceUs / 1000));
  const after: ParentView = {
    parentExists: true,
    coveredUntilUs: sum.readUs,
    lastCommitUs: result.commitUs,
    recordedIntervalMs: fields.intervalMs ?? view.recordedIntervalMs,
    numShards: fields.grow?.to ?? view.numShards,
    load: fields.load ?? view.load,
    days: fields.windows === undefined ? view.days : { days: fields.windows.days, sinceUs: sum.readUs, moveAtMs: fields.windows.moveAtMs },
    updatedUs: result.commitUs,
  };
  deps.parents?.set(target.counterId, { view: after, version: result.version });
  return { kind: "committed", total: sum.total, lagMs, readUs: sum.readUs, version: result.version, after };
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
