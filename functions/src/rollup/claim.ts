// A claim's whole life, on a busy counter: plan.ts decides when an event claims, settleClaim carries it out.
// The first event of a slot writes the lease (a compare-and-set on its version, so exactly one event wins)
// and holds the claim in the instance's memo while it finishes it: it waits until the claim is due, sums
// the shards at a read time at or after the due time and commits the total (commit.ts), unless a sum read
// that late is already on the parent; then it releases the claim by deleting its lease. Each step once, in
// that order. A claim is finished by its claimer, by a stale takeover and by the sweep (sweep.ts), all with
// the same steps; a claim whose sum is already on the parent is only released (decision "release").
import * as logger from "firebase-functions/logger";
import { MAX_INTERVAL_MS } from "../model/param-rules";
import { isCovered, type Decision } from "./plan";
import { sumAndCommit } from "./commit";
import type { LeaseRead, ParentRead } from "./store";
import type { ClaimMemo, ClaimToFinish, Invocation, RollupResult, Run } from "./types";

/**
 * Whom a claim belongs to, as the lease's `eventId` stores it: the shard write the claimer rolls up (its
 * shard and commit time), not the delivery. Every delivery of one event carries one write, so a retried
 * event finds its own claim as it would by the event's id; and the claim of a writer that rolls its own write
 * up (a document counter's trigger: entry/documentCounters.ts) and fails after claiming is finished by
 * rollupTotal's event of that same write, at once, where an event id of its own would defer to the claim
 * until it is stale. Two writes of one shard never share a commit time.
 */
export function claimKeyOf(write: { shardId: string; writtenAtUs: number }): string {
  return `${write.shardId}@${write.writtenAtUs}`;
}

/** What plan.ts decided about a claim: make one, finish the one the lease holds, or only release a fulfilled one. */
export type ClaimDecision = Extract<Decision, { kind: "claim" | "rollup" | "release" }>;

/**
 * Carries out a claim decision for the event of `inv`, on the lease and the parent it decided on: claims the
 * slot (the lease's compare-and-set) and finishes it, or finishes the claim the lease holds (the event's own,
 * or a stale one it takes over), or deletes the lease of a claim already fulfilled. Null when another event
 * wrote the lease first: the event decides again.
 */
export async function settleClaim(inv: Invocation, decision: ClaimDecision, lease: LeaseRead, parent: ParentRead): Promise<RollupResult | null> {
  const { write, deps } = inv;
  if (decision.kind === "release") {
    // Our claim, already fulfilled by a sum read at or after its due time (we failed after the commit, or
    // someone else's sum got there first): it only remains to delete the lease.
    await releaseClaim(inv, write.counterId, lease.version);
    inv.coveredAfterLeaseRead = true;
    return { kind: "skip", reason: "covered" };
  }
  const { dueMs } = decision;
  let version: string | null;
  if (decision.kind === "claim") {
    version = await claimSlot(inv, lease, dueMs, decision.intervalMs);
    if (version === null) return null;
  } else {
    if (decision.reason === "stale-claim") logger.warn("taking over a stale rollup claim", { counterId: write.counterId, dueAt: new Date(dueMs).toISOString() });
    version = lease.version;
  }
  // Its sum must cover the event's own write too.
  const claim: ClaimToFinish = { counterId: write.counterId, dueMs, version, targetUs: Math.max(dueMs * 1000, write.writtenAtUs), sinceUs: write.writtenAtUs };
  return await holdingClaim(deps.claims, write.counterId, dueMs, async () => {
    if (decision.kind === "claim") await deps.onStage?.("claimed");
    return await finishClaim(inv, claim, parent);
  });
}

/** Writes the lease for a claim due at `dueMs`; returns its version, or null if another event got there first. */
async function claimSlot(inv: Invocation, current: LeaseRead, dueMs: number, intervalMs: number): Promise<string | null> {
  const version = await inv.deps.store.writeClaim(inv.write.counterId, current, { eventId: claimKeyOf(inv.write), dueMs, intervalMs });
  if (version !== null) inv.ops.writes += 1;
  return version;
}

/** The latest due time of a claim of this counter held by a running invocation of this instance, if any. */
export function heldDueMs(claims: ClaimMemo | undefined, counterId: string): number | undefined {
  return claims?.get(counterId);
}

/** Runs `work` with a claim due at `dueMs` recorded in the instance's memo, and removes it however work ends. */
async function holdingClaim<T>(claims: ClaimMemo | undefined, counterId: string, dueMs: number, work: () => Promise<T>): Promise<T> {
  const previous = claims?.get(counterId);
  if (claims !== undefined && (previous === undefined || previous < dueMs)) claims.set(counterId, dueMs);
  try {
    return await work();
  } finally {
    // Only our own entry: another invocation of this instance may hold a later claim by now.
    if (claims?.get(counterId) === dueMs) claims.delete(counterId);
  }
}

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

/** Deletes the lease if it still is the claim at `version` (a newer claim is never deleted). */
export async function releaseClaim(run: Run, counterId: string, version: string | null): Promise<void> {
  if (version === null) return;
  if (await run.deps.store.deleteClaim(counterId, version)) run.ops.writes += 1;
}
