// The commit step: sum the shards and write the total onto the parent, on condition that the parent is
// still the one read, and only if the sum was read late enough to cover what it must cover. A slot's
// claimer first waits for its slot to end (finishSlot); the leading edge commits at once (sumAndCommit).
import * as logger from "firebase-functions/logger";
import { isCovered } from "../plan";
import { wait, type Invocation, type RollupResult } from "./context";
import type { ParentRead } from "./storage";

const COMMIT_ATTEMPTS = 8;

/** What one attempt to sum the shards and commit the total onto a parent came to. */
export type CommitStep =
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
 * that the parent is unchanged; with the slot for a slot's commit). Shared by the leading edge and the
 * slot's claimer, which differ only in what they do with each outcome.
 */
export async function sumAndCommit(inv: Invocation, parent: ParentRead, targetUs: number, slot: number | null): Promise<CommitStep> {
  const { write, deps, ops } = inv;
  const read = await deps.store.sumShards(write.counterId);
  ops.aggregations += read.aggregations;
  ops.reads += read.reads;
  const sum = read.sum;
  if (sum.overflow) {
    logOverflow(write.counterId, slot);
    return { kind: "overflow" };
  }
  if (sum.readUs < targetUs) return { kind: "early", readUs: sum.readUs };
  await deps.onStage?.("summed", write);
  const result = await deps.store.commitTotal(write.counterId, parent, sum, slot === null ? {} : { slot });
  if (result.kind !== "committed") return result;
  ops.writes += 1;
  const lagMs = Math.max(0, deps.nowMs() - Math.floor(write.writtenAtUs / 1000));
  return { kind: "committed", total: sum.total, lagMs };
}

/**
 * Waits until the slot is due, then sums the shards at a read time at or after the due time and commits
 * the total, unless another invocation's sum already covers the slot. Everyone who deferred to this slot
 * relies on that read time, hence the check after the sum (clocks of this instance and Firestore differ).
 * `claimVersion` is the lease this invocation wrote, removed again if the counter turns out to be gone.
 */
export async function finishSlot(inv: Invocation, slot: number, dueMs: number, claimVersion: string | null): Promise<RollupResult> {
  const { write, deps, ops } = inv;
  const counterId = write.counterId;
  const targetUs = Math.max(dueMs * 1000, write.writtenAtUs);
  await wait(inv, Math.min(deps.intervalMs, Math.max(0, dueMs - deps.nowMs())));

  for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
    const parent = await deps.store.readParent(counterId);
    ops.reads += 1;
    if (!parent.view.parentExists) {
      await releaseClaim(inv, claimVersion);
      return { kind: "gone", slot };
    }
    if (isCovered(parent.view.coveredUntilUs, targetUs)) return { kind: "covered-by-other", slot };

    const step = await sumAndCommit(inv, parent, targetUs, slot);
    switch (step.kind) {
      case "committed":
        return { kind: "committed", slot, total: step.total, lagMs: step.lagMs };
      case "overflow":
        return { kind: "overflow", slot };
      case "gone":
        await releaseClaim(inv, claimVersion);
        return { kind: "gone", slot };
      case "early":
        // Our clock ran ahead of Firestore's: this sum may miss writes of the slot. Wait and sum again.
        await wait(inv, Math.ceil((targetUs - step.readUs) / 1000) + 1);
        break;
      case "changed":
        // The parent changed since we read it (another rollup, a reset, a reshard): look again.
        break;
    }
  }
  throw new Error(`rollup of counter "${counterId}" slot ${slot} did not settle; retrying the event`);
}

/** The counter was deleted under us: remove the lease we created, unless someone rewrote it since. */
async function releaseClaim(inv: Invocation, claimVersion: string | null): Promise<void> {
  if (claimVersion === null) return;
  if (await inv.deps.store.deleteClaim(inv.write.counterId, claimVersion)) inv.ops.writes += 1;
}

/**
 * No exact JS number holds the sum. Keep the last exact total rather than write a rounded one; retrying
 * cannot help, so the event completes. Reconcile or reset the counter to recover.
 */
function logOverflow(counterId: string, slot: number | null): void {
  logger.error("shard sum is beyond 2^53 - 1; total left at its last exact value", { counterId, path: `counters/${counterId}`, slot });
}
