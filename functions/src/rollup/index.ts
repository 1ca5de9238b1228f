// The rollup: keeps counters/{id}.total equal to the sum of its shards, exactly and with about one
// parent write per interval. This file runs one shard write event (the trigger's entry turned the event
// into it: entry/rollupTotal.ts) through the steps, in order: decide (plan.ts, pure, with the argument why
// it is exact: from the instance's memo when it can, else from the parent as read), then commit at once
// (now.ts: a leading edge, or the start of a chain) and, as the owner of the promise that commit made,
// carry the chain (trail.ts: wait, sum, commit with the next promise, until nothing more was applied); both
// sum and commit in commit.ts. The steps import nothing from here; what they share is in types.ts, and all
// of them talk to a RollupStore (store.ts; Firestore in firestore-store.ts). The sweep (sweep.ts) fulfils
// promises whose owner left them. docs/rollup.md tells the whole story.
//
// Exact: the total is never accumulated. It is recomputed with one consistent read of all shards (an
// aggregation query), and the read time of that sum is kept in `rollup.readTime`. A shard write is
// covered once a sum read at or after its commit time is on the parent, so duplicated, reordered or
// retried events are covered and cost a read (or nothing). Commits carry a precondition on the parent's
// update time: a sum older than what is on the parent can never overwrite it.
//
// Operations: every invocation counts the reads, writes and aggregation reads it made and the time it
// spent waiting for a slot, and logs them in one structured line ("rollup ops", ops.ts), so what a
// million increments cost can be counted from what the functions did (the benchmark does).
import { COUNTERS, SHARDS } from "../model/paths";
import type { ShardCount } from "../model/shards";
import { decide, decideFromMemo, markOfParent, ownerKeyOf, snapshotSumAllowed, type Decision, type WriteFacts } from "./plan";
import { commitNow } from "./now";
import { carryChain, type ChainResult } from "./trail";
import { logOps, logPromiseTaken, logThrew, noOps } from "./ops";
import type { ParentRead } from "./store";
import { logMalformedCount } from "./sum";
import type { CommitPath, Invocation, RollupDeps, RollupOutcome, RollupResult, ShardWrite } from "./types";

const DECIDE_ROUNDS = 5;

/** A shard that does not exist counts 0. */
const ABSENT: ShardCount = { value: 0, malformed: false };

/** Handles one delivery of a shard write event. Throws (so the event is retried) only on real failures. */
export async function rollupShardWrite(write: ShardWrite, deps: RollupDeps): Promise<RollupOutcome> {
  const inv: Invocation = { write, deps, ops: noOps(), owner: ownerKeyOf(write) };
  const started = deps.nowMs();
  let result: RollupResult | undefined;
  try {
    result = await handle(inv);
    return { ...result, ops: inv.ops, kept: inv.kept ?? null };
  } catch (error) {
    // An inline rollup is not retried as an event is: its writer logs what became of it (entry/documentCounters.ts).
    if (write.inline !== true) logThrew(write.counterId, write.shardId, write.eventId, error);
    throw error;
  } finally {
    const outcome = result === undefined ? "threw" : outcomeName(result);
    const extra = {
      ...(result?.kind === "committed" ? { total: result.total, lagMs: result.lagMs, commits: result.commits, ...(result.end === undefined ? {} : { end: result.end }) } : {}),
      commitWrites: inv.commitWrites ?? 0,
      ...(inv.parentMemo === undefined ? {} : { parentMemo: inv.parentMemo }),
      ...(write.inline === true ? { inline: true } : {}),
    };
    logOps(write.counterId, outcome, inv.ops, deps.nowMs() - started, extra);
  }
}

/** The outcome's name in the ops line (docs/rollup.md, "Operations per increment"). */
function outcomeName(result: RollupResult): string {
  if (result.kind === "skip") return `skip-${result.reason}`;
  if (result.kind === "defer" && result.memo === true) return "defer-memo";
  if (result.kind === "committed") return `committed-${result.path}`;
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
    ownerKey: inv.owner,
    writtenAtUs: write.writtenAtUs,
    countChanged: write.countChanged ?? before.value !== after.value,
    shardCreatedUs: write.shardCreatedUs ?? null,
    recounted: write.recounted === true,
  };
  // A write that did not change the count cannot change the sum (e.g. shards created at 0): no reads.
  if (!facts.countChanged) return { kind: "skip", reason: "unchanged" };
  const timing = () => ({ intervalMs: deps.intervalMs, nowMs: deps.nowMs(), staleAfterMs: deps.staleAfterMs });

  // What this instance remembers of the parent may settle the event without a read (plan.ts, decideFromMemo):
  // a write it covers, a write a promise it saw covers.
  const remembered = deps.parents?.get(counterId);
  if (remembered !== undefined) {
    inv.kept = remembered.view.kept ?? null;
    const fromMemo = decideFromMemo(facts, remembered, timing());
    if (fromMemo?.kind === "defer") return { ...fromMemo, memo: true };
    if (fromMemo?.kind === "skip") return fromMemo;
  }
  // A leading edge may start from the remembered parent, its commit's precondition checking it is still the
  // parent (if not, the event reads the parent and decides again). Only for a snapshot sum, where a stale
  // memory costs nothing but the failed commit (an aggregation summed for nothing would cost what the read
  // saves), so only with the write's own document to sum from.
  const snapshot = write.after !== undefined && write.writtenAtExact === true;
  const fromMemory = remembered !== undefined && snapshot && snapshotSumAllowed(remembered.view, write) && decide(facts, remembered.view, timing()).kind === "lead";
  let known = fromMemory ? remembered : undefined;
  for (let round = 0; round < DECIDE_ROUNDS; round++) {
    let parent = known;
    known = undefined;
    if (parent === undefined) {
      parent = await deps.store.readParent(counterId);
      ops.reads += 1;
      remember(deps, counterId, parent);
    }
    inv.kept = parent.view.kept ?? null;
    const decision: Decision = decide(facts, parent.view, timing());
    switch (decision.kind) {
      case "skip":
      case "defer":
        return decision;
      case "lead":
      case "start":
      case "takeover": {
        if (decision.kind === "takeover") logPromiseTaken(counterId, "takeover", parent.view.trailing!);
        const step = await commitNow(inv, parent, decision);
        if (parent === remembered) inv.parentMemo = step.kind === "decide" ? "missed" : "hit";
        if (step.kind === "done") return step.result;
        if (step.kind === "decide") {
          known = step.parent; // decide again: from the parent a joined commit left, or on a fresh read
          continue;
        }
        // Our commit made a promise: we own it, and carry the chain.
        const { commit } = step;
        await deps.onStage?.("committed");
        const chain = await carryChain(inv, { counterId, owner: inv.owner, dueMs: commit.trailing!.dueMs, parent: commit.after, mark: commit.mark, sinceUs: commit.readUs });
        return committed(decision.kind, { total: commit.total, lagMs: commit.lagMs }, chain, 1);
      }
      case "resume": {
        // Our own promise, overdue: its owner (our event's earlier delivery) failed. Others deferred to it.
        logPromiseTaken(counterId, "resume", parent.view.trailing!);
        const chain = await carryChain(inv, { counterId, owner: inv.owner, dueMs: decision.dueMs, parent, mark: markOfParent(parent.view), sinceUs: decision.dueMs * 1000 });
        if (chain.commits === 0) return { kind: "covered-by-other", end: chain.end };
        return committed("resume", chain.last!, chain, 0);
      }
    }
  }
  throw new Error(`rollup of counter "${counterId}": the parent kept changing; retrying the event`);
}

function committed(path: CommitPath, first: { total: number; lagMs: number }, chain: ChainResult, before: number): RollupResult {
  const last = chain.last ?? first;
  return { kind: "committed", path, total: last.total, lagMs: first.lagMs, commits: before + chain.commits, end: chain.end };
}

/** Keeps a parent this invocation read in the instance's memo, unless the memo holds a later one. */
function remember(deps: RollupDeps, counterId: string, parent: ParentRead): void {
  const memo = deps.parents;
  if (memo === undefined) return;
  if (!parent.view.parentExists) {
    memo.delete(counterId);
    return;
  }
  const known = memo.get(counterId);
  if (known === undefined || known.observedUs <= parent.observedUs) memo.set(counterId, parent);
}
