// Finishing a claim: wait until it is due, sum the shards at a read time at or after the due time and
// commit the total (commit.ts), unless a sum read that late is already on the parent; then release the
// claim by deleting its lease (release.ts): each step once, in that order. Run by the claimer
// (index.ts), by a stale takeover and by the sweep (sweep.ts), all with the same steps.
import { isCovered, MAX_INTERVAL_MS } from "./plan";
import { sumAndCommit } from "./commit";
import { releaseClaim } from "./release";
import type { ParentRead } from "./store";
import type { ClaimToFinish, RollupResult, Run } from "./types";

const COMMIT_ATTEMPTS = 8;

/**
 * Finishes `claim`. Everyone who deferred to the claim relies on the read time of its sum, hence the check
 * after the sum (clocks of this instance and Firestore differ). However it ends, the claim is done: its
 * lease is deleted. Throws (so the event is retried, or the next sweep tries again) if it does not settle.
 */
export async function finishClaim(run: Run, claim: ClaimToFinish, known?: ParentRead): Promise<RollupResult> {
  const { deps, ops } = run;
  const { counterId, dueMs, targetUs } = claim;
  let pauseMs = Math.min(2 * MAX_INTERVAL_MS, Math.max(0, dueMs - deps.nowMs()));
  for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
    // Until the claim is due, and again only after a sum read too early (the other outcomes look again at once).
    if (attempt === 0 || pauseMs > 0) await wait(run, pauseMs);
    pauseMs = 0;
    // The parent the claimer decided on, at first: the commit's precondition holds only if it is still the
    // parent (nothing wrote it while the claim waited, the usual case), and else it is read again.
    let parent: ParentRead;
    if (attempt === 0 && known !== undefined) parent = known;
    else {
      parent = await deps.store.readParent(counterId);
      ops.reads += 1;
    }
    let result: RollupResult | undefined;
    if (!parent.view.parentExists) result = { kind: "gone", dueMs };
    else if (isCovered(parent.view.coveredUntilUs, targetUs)) result = { kind: "covered-by-other", dueMs };
    else {
      const step = await sumAndCommit(run, { counterId, parent, targetUs, leadWrittenAtUs: null, sinceUs: claim.sinceUs });
      if (step.kind === "committed") result = { kind: "committed", dueMs, total: step.total, lagMs: step.lagMs };
      else if (step.kind === "overflow" || step.kind === "gone") result = { kind: step.kind, dueMs };
      else if (step.kind === "early") {
        // Our clock ran ahead of Firestore's: this sum may miss writes of the slot. Wait and sum again.
        pauseMs = Math.ceil((targetUs - step.readUs) / 1000) + 1;
      }
      // "changed": the parent changed since we read it (another rollup, a reset, a reshard): look again.
    }
    if (result !== undefined) {
      await releaseClaim(run, counterId, claim.version);
      return result;
    }
  }
  throw new Error(`rollup of counter "${counterId}" claim due ${new Date(dueMs).toISOString()} did not settle; retrying the event`);
}

async function wait(run: Run, ms: number): Promise<void> {
  const started = run.deps.nowMs();
  await run.deps.sleep(ms);
  run.ops.waitMs += Math.max(0, run.deps.nowMs() - started);
}
