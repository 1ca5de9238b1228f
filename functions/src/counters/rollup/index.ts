// The rollup: keeps counters/{id}.total equal to the sum of its shards, exactly and with about one
// parent write per interval. The decisions are pure (../plan.ts, with the argument why they are exact);
// this module runs one event through them, and the steps live next to it: the claim (claim.ts), the
// commit (commit.ts; mirrored.ts when the total is mirrored), the sum (sum.ts, the line that computes a
// total), the shared leading edge (lead.ts), the sweep of orphaned claims (sweep.ts), all over a
// RollupStore (storage.ts; Firestore in firestore.ts). docs/rollup.md tells the whole story.
//
// Exact: the total is never accumulated. It is recomputed with one consistent read of all shards (an
// aggregation query), and the read time of that sum is kept in `rollup.readTime`. A shard write is
// covered once a sum read at or after its commit time is on the parent, so duplicated, reordered or
// retried events are covered and cost a read. Commits carry a precondition on the parent's update time:
// a sum older than what is on the parent can never overwrite it.
//
// Operations: every invocation counts the reads, writes and aggregation reads it made and the time it
// spent waiting for a slot, and logs them in one structured line ("rollup ops", ops.ts), so what a
// million increments cost can be counted from what the functions did (the benchmark does).
import * as logger from "firebase-functions/logger";
import { decide, decideFromParent, type Decision, type WriteFacts } from "../plan";
import { readCount } from "../shards";
import { COUNTERS, SHARDS } from "../paths";
import { claimSlot, heldDueMs, holdingClaim, releaseClaim } from "./claim";
import { finishClaim } from "./commit";
import type { Invocation, RollupDeps, RollupOutcome, RollupResult, ShardWrite } from "./context";
import { leadingEdge } from "./lead";
import { logCommitted, logOps, logThrew, noOps } from "./ops";
import type { LeaseRead, ParentRead } from "./storage";
import { logMalformedCount } from "./sum";

export type { ClaimMemo, RollupDeps, RollupOutcome, RollupResult, RollupStage, ShardWrite } from "./context";
export type { LeadMemo } from "./lead";
export type { RollupOps } from "./ops";
export type { RollupStore } from "./storage";
export { commitTotal, coveredUntilUs, firestoreRollupStore } from "./firestore";
export { sumShards, logMalformedCount } from "./sum";
export { sweepStaleClaims, SWEEP_DEFAULTS, type SweepOptions, type SweepReport } from "./sweep";

/** A claim takes this long past its due time before anyone else assumes its claimer died. */
export function staleAfterMsFor(intervalMs: number): number {
  return Math.max(10_000, 5 * intervalMs);
}

const DECIDE_ROUNDS = 5;

/** Handles one delivery of a shard write event. Throws (so the event is retried) only on real failures. */
export async function rollupShardWrite(write: ShardWrite, deps: RollupDeps): Promise<RollupOutcome> {
  const inv: Invocation = { write, deps, ops: noOps() };
  const started = deps.nowMs();
  let result: RollupResult | undefined;
  try {
    result = await handle(inv);
    if (result.kind === "committed") logCommitted(write.counterId, result.total, result.lagMs, result.dueMs === null ? "lead" : "slot");
    return { ...result, ops: inv.ops };
  } catch (error) {
    logThrew(write.counterId, write.shardId, write.eventId, error);
    throw error;
  } finally {
    const outcome = result === undefined ? "threw" : outcomeName(result, inv);
    const extra = result?.kind === "committed" ? { total: result.total, lagMs: result.lagMs } : {};
    logOps(write.counterId, outcome, inv.ops, deps.nowMs() - started, extra);
  }
}

/** The outcome's name in the ops line; a covered event that had to read the lease says so (plan.ts). */
function outcomeName(result: RollupResult, inv: Invocation): string {
  if (result.kind === "skip") return inv.coveredAfterLeaseRead === true ? "skip-covered-lease" : `skip-${result.reason}`;
  if (result.kind === "defer" && result.memo === true) return "defer-memo";
  if (result.kind === "committed" && result.dueMs === null) return "committed-lead";
  if (result.kind === "joined") return "joined-lead";
  return result.kind;
}

async function handle(inv: Invocation): Promise<RollupResult> {
  const { write, deps, ops } = inv;
  const counterId = write.counterId;
  const before = readCount(write.before);
  const after = readCount(write.after);
  if (after.malformed || before.malformed) {
    const path = `${COUNTERS}/${counterId}/${SHARDS}/${write.shardId}`;
    logMalformedCount(counterId, write.shardId, path, (after.malformed ? write.after : write.before)?.count);
  }
  const facts: WriteFacts = {
    counterId,
    eventId: write.eventId,
    writtenAtUs: write.writtenAtUs,
    countChanged: before.value !== after.value,
  };
  // A write that did not change the count cannot change the sum (e.g. shards created at 0): no reads.
  if (!facts.countChanged) return { kind: "skip", reason: "unchanged" };
  const held = heldDueMs(deps.claims, counterId);
  if (held !== undefined && write.writtenAtUs <= held * 1000) {
    // An invocation of this instance holds a claim due at or after this write: its sum will include
    // this write, so there is nothing to read.
    return { kind: "defer", toDueMs: held, memo: true };
  }

  let known: ParentRead | undefined; // a parent state learnt without reading it (a joined leading edge)
  for (let round = 0; round < DECIDE_ROUNDS; round++) {
    // The parent first: it alone settles duplicates, deleted counters and idle counters (one read).
    let parent = known;
    known = undefined;
    if (parent === undefined) {
      parent = await deps.store.readParent(counterId);
      ops.reads += 1;
    }
    let decision: Decision | null = decideFromParent(facts, parent.view);
    let lease: LeaseRead | undefined;
    if (decision === null) {
      lease = await deps.store.readLease(counterId);
      ops.reads += 1;
      decision = decide(facts, parent.view, lease.claim, {
        intervalMs: deps.intervalMs,
        nowMs: deps.nowMs(),
        staleAfterMs: deps.staleAfterMs,
      });
    }
    switch (decision.kind) {
      case "skip":
        if (decision.reason === "covered" && lease !== undefined) inv.coveredAfterLeaseRead = true;
        return decision;
      case "defer":
        return decision;
      case "release":
        // Our claim, already fulfilled by a sum read at or after its due time (we failed after the
        // commit, or someone else's sum got there first): it only remains to delete the lease.
        await releaseClaim(inv, lease!.version);
        inv.coveredAfterLeaseRead = true;
        return { kind: "skip", reason: "covered" };
      case "lead": {
        const step = await leadingEdge(inv, parent);
        if (step.kind === "done") return step.result;
        known = step.parent; // decide again: from the parent a joined lead committed, or on a fresh read
        continue;
      }
      case "rollup": {
        if (decision.reason === "stale-claim") {
          logger.warn("taking over a stale rollup claim", { counterId, dueAt: new Date(decision.dueMs).toISOString() });
        }
        const { dueMs } = decision;
        return await holdingClaim(deps.claims, counterId, dueMs, () => finishClaim(inv, dueMs, lease!.version));
      }
      case "claim": {
        const { dueMs } = decision;
        const claimed = await claimSlot(inv, lease!, dueMs, decision.intervalMs);
        if (claimed === null) continue; // someone else wrote the lease first: look again
        return await holdingClaim(deps.claims, counterId, dueMs, async () => {
          await deps.onStage?.("claimed", write);
          return await finishClaim(inv, dueMs, claimed);
        });
      }
    }
  }
  throw new Error(`rollup of counter "${counterId}": the lease kept changing; retrying the event`);
}
