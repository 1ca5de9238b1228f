// The rollup: keeps counters/{id}.total equal to the sum of its shards, exactly and with about one
// parent write per interval. This file runs one shard write event (the trigger's entry turned the event
// into it: entry/rollupTotal.ts) through the steps, in order: decide (plan.ts, pure, with the argument why
// it is exact), then lead (lead.ts: sum and commit at once) or settle a claim (claim.ts: claim, wait, sum
// and commit, release); both sum and commit in commit.ts. The steps import nothing from here; what they
// share is in types.ts, and all of them talk to a RollupStore (store.ts; Firestore in firestore-store.ts).
// The sweep of orphaned claims (sweep.ts) runs the same finishing step. docs/rollup.md tells the whole story.
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
import { COUNTERS, SHARDS } from "../model/paths";
import type { ShardCount } from "../model/shards";
import { decide, decideFromParent, snapshotSumAllowed, type Decision, type WriteFacts } from "./plan";
import { claimKeyOf, heldDueMs, settleClaim } from "./claim";
import { leadingEdge } from "./lead";
import { logCommitted, logOps, logThrew, noOps } from "./ops";
import type { LeaseRead } from "./store";
import { logMalformedCount } from "./sum";
import type { Invocation, RollupDeps, RollupOutcome, RollupResult, ShardWrite } from "./types";

const DECIDE_ROUNDS = 5;

/** A shard that does not exist counts 0. */
const ABSENT: ShardCount = { value: 0, malformed: false };

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
    // An inline rollup is not retried as an event is: its writer logs what became of it (entry/documentCounters.ts).
    if (write.inline !== true) logThrew(write.counterId, write.shardId, write.eventId, error);
    throw error;
  } finally {
    const outcome = result === undefined ? "threw" : outcomeName(result, inv);
    const extra = {
      ...(result?.kind === "committed" ? { total: result.total, lagMs: result.lagMs } : {}),
      ...(inv.parentMemo === undefined ? {} : { parentMemo: inv.parentMemo }),
      ...(write.inline === true ? { inline: true } : {}),
    };
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
  const before = write.before?.count ?? ABSENT;
  const after = write.after?.count ?? ABSENT;
  if (after.malformed || before.malformed) {
    const path = `${COUNTERS}/${counterId}/${SHARDS}/${write.shardId}`;
    logMalformedCount(counterId, write.shardId, path, (after.malformed ? write.after : write.before)?.storedCount);
  }
  const facts: WriteFacts = {
    counterId,
    claimKey: claimKeyOf(write),
    writtenAtUs: write.writtenAtUs,
    countChanged: write.countChanged ?? before.value !== after.value,
  };
  // A write that did not change the count cannot change the sum (e.g. shards created at 0): no reads.
  if (!facts.countChanged) return { kind: "skip", reason: "unchanged" };
  const held = heldDueMs(deps.claims, counterId);
  if (held !== undefined && write.writtenAtUs <= held * 1000) {
    // An invocation of this instance holds a claim due at or after this write: its sum will include
    // this write, so there is nothing to read.
    return { kind: "defer", toDueMs: held, memo: true };
  }

  // A parent state learnt without reading it: a joined leading edge's, or the one this instance's last
  // commit left when a leading edge can start from it (its commit's precondition checks it is still the
  // parent; if not, the event reads the parent and decides again). Only for a snapshot sum, where a stale
  // memory costs nothing but the failed commit (an aggregation summed for nothing would cost what the read
  // saves), so only with the write's own document to sum from. Nothing else is decided from a memo.
  const remembered = deps.parents?.get(counterId);
  const snapshot = write.after !== undefined && write.writtenAtExact === true;
  const fromMemory = remembered !== undefined && snapshot && snapshotSumAllowed(remembered.view, write) && decideFromParent(facts, remembered.view)?.kind === "lead";
  let known = fromMemory ? remembered : undefined;
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
      case "lead": {
        const step = await leadingEdge(inv, parent);
        if (parent === remembered) inv.parentMemo = step.kind === "done" ? "hit" : "missed";
        if (step.kind === "done") return step.result;
        known = step.parent; // decide again: from the parent a joined lead committed, or on a fresh read
        continue;
      }
      case "claim":
      case "rollup":
      case "release": {
        // Claim the slot and finish it, finish the claim the lease holds, or only release a fulfilled one (claim.ts).
        const result = await settleClaim(inv, decision, lease!, parent);
        if (result === null) continue; // someone else wrote the lease first: look again
        return result;
      }
    }
  }
  throw new Error(`rollup of counter "${counterId}": the lease kept changing; retrying the event`);
}
