// The commit step: sum the shards and write the total onto the parent, on condition that the parent is
// still the one read, and only if the sum was read late enough to cover what it must cover. A claim is
// finished by waiting for its due time first (finishClaim); the leading edge commits at once
// (sumAndCommit). The write itself is the store's commitTotal: one atomic write.
import * as logger from "firebase-functions/logger";
import { COUNTERS } from "../paths";
import { intervalToRecord, isCovered, MAX_INTERVAL_MS } from "../plan";
import { releaseClaim } from "./claim";
import { wait, type Invocation, type RollupResult } from "./context";
import type { ParentRead } from "./storage";

const COMMIT_ATTEMPTS = 8;

/** What one attempt to sum the shards and commit the total onto a parent came to. */
export type CommitStep =
  | { kind: "committed"; total: number; lagMs: number; readUs: number; intervalMs: number; version: string; commitUs: number }
  | { kind: "overflow" }
  /** The sum was read before `targetUs`, so it may miss writes it must cover; nothing was written. */
  | { kind: "early"; readUs: number }
  /** The parent was deleted. */
  | { kind: "gone" }
  /** The parent changed since it was read (the commit's precondition failed); nothing was written. */
  | { kind: "changed" };

/**
 * Sums the shards and, if the sum was read at or after `targetUs`, commits it onto `parent` (on condition
 * that the parent is unchanged), recording the interval plan.ts asks for. `lead` says whether this is a
 * leading-edge commit (the only kind that may lower the recorded interval). Shared by the leading edge and
 * the claim's finisher, which differ only in what they do with each outcome.
 */
export async function sumAndCommit(inv: Invocation, parent: ParentRead, targetUs: number, lead: boolean): Promise<CommitStep> {
  const { write, deps, ops } = inv;
  const read = await deps.store.sumShards(write.counterId);
  ops.aggregations += read.aggregations;
  ops.reads += read.reads;
  const sum = read.sum;
  if (sum.overflow) {
    logOverflow(write.counterId);
    return { kind: "overflow" };
  }
  if (sum.readUs < targetUs) return { kind: "early", readUs: sum.readUs };
  await deps.onStage?.("summed", write);
  const intervalMs = intervalToRecord(deps.intervalMs, parent.view, lead ? write.writtenAtUs : null);
  const result = await deps.store.commitTotal(write.counterId, parent, sum, { intervalMs });
  ops.reads += result.mirrorReads ?? 0;
  if (result.kind !== "committed") return { kind: result.kind };
  ops.writes += 1 + (result.mirrorWrites ?? 0);
  const lagMs = Math.max(0, deps.nowMs() - Math.floor(write.writtenAtUs / 1000));
  return { kind: "committed", total: sum.total, lagMs, readUs: sum.readUs, intervalMs, version: result.version, commitUs: result.commitUs };
}

/**
 * Finishes a claim due at `dueMs`: waits until it is due, then sums the shards at a read time at or after
 * the due time and commits the total, unless a sum read that late is already on the parent. Everyone who
 * deferred to the claim relies on that read time, hence the check after the sum (clocks of this instance
 * and Firestore differ). However it ends, the claim is done: its lease (`claimVersion`) is deleted.
 */
export async function finishClaim(inv: Invocation, dueMs: number, claimVersion: string | null): Promise<RollupResult> {
  const { write, deps, ops } = inv;
  const counterId = write.counterId;
  const targetUs = Math.max(dueMs * 1000, write.writtenAtUs);
  await wait(inv, Math.min(2 * MAX_INTERVAL_MS, Math.max(0, dueMs - deps.nowMs())));

  for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
    const parent = await deps.store.readParent(counterId);
    ops.reads += 1;
    let result: RollupResult | undefined;
    if (!parent.view.parentExists) result = { kind: "gone", dueMs };
    else if (isCovered(parent.view.coveredUntilUs, targetUs)) result = { kind: "covered-by-other", dueMs };
    else {
      const step = await sumAndCommit(inv, parent, targetUs, false);
      if (step.kind === "committed") result = { kind: "committed", dueMs, total: step.total, lagMs: step.lagMs };
      else if (step.kind === "overflow" || step.kind === "gone") result = { kind: step.kind, dueMs };
      else if (step.kind === "early") {
        // Our clock ran ahead of Firestore's: this sum may miss writes of the slot. Wait and sum again.
        await wait(inv, Math.ceil((targetUs - step.readUs) / 1000) + 1);
      }
      // "changed": the parent changed since we read it (another rollup, a reset, a reshard): look again.
    }
    if (result !== undefined) {
      await releaseClaim(inv, claimVersion);
      return result;
    }
  }
  throw new Error(`rollup of counter "${counterId}" claim due ${new Date(dueMs).toISOString()} did not settle; retrying the event`);
}

/**
 * No exact JS number holds the sum. Keep the last exact total rather than write a rounded one; retrying
 * cannot help, so the event completes (and the claim is dropped). Reconcile or reset the counter to recover.
 */
function logOverflow(counterId: string): void {
  logger.error("shard sum is beyond 2^53 - 1; total left at its last exact value", { counterId, path: `${COUNTERS}/${counterId}` });
}
