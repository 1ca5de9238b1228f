// A commit at once: the leading edge (an idle counter: sum, commit, no promise) and the start of a chain (a
// busy counter that no promise covers: sum, commit with a promise, then carry the chain: trail.ts), and the
// takeover of a stale promise (the same, with a sum read after its due time). plan.ts decides which.
// Under concurrent delivery a burst sends many events at once, and every one that reads the parent before the
// first commit decides the same. Without care each would run its own sum and its own conditional write (one
// wins, the rest fail and look again): a herd. So per instance, a commit at once is shared: the events that
// decide to commit onto the same parent version join the one already running (or just finished) instead of
// summing.
// - A joiner whose write is at or before that commit's read time is covered by it: done, no more reads.
//   (It cannot owe a promise: one that owes its own resumes, plan.ts, and never comes here.)
// - A joiner written after that read time decides again from the parent the commit left, without reading
//   it: not idle any more, and deferred to the promise a start made.
// - If the commit did not land (the parent changed, the instance's clock ran ahead, it failed), its
//   joiners decide again on a fresh read.
// A lone increment on an idle counter finds nothing to join and costs one read, one sum, one write.
import { sumAndCommit, type CommitStep } from "./commit";
import { logCommitted } from "./ops";
import { promiseIntervalMs, type Decision } from "./plan";
import type { ParentRead } from "./store";
import type { Invocation, NowEntry, NowOutcome, RollupResult } from "./types";

/** A decision to commit at once. */
export type NowDecision = Extract<Decision, { kind: "lead" | "start" | "takeover" }>;

/**
 * What the event does next: it is done; it owns the promise its commit made and carries the chain (a start,
 * a takeover); or it decides again (from a known parent, or on a fresh read).
 */
export type NowStep =
  | { kind: "done"; result: RollupResult }
  | { kind: "owner"; commit: Extract<CommitStep, { kind: "committed" }> }
  | { kind: "decide"; parent?: ParentRead };

/** Commits at once for an event that decided so on `parent`, or joins this instance's commit onto the same version. */
export async function commitNow(inv: Invocation, parent: ParentRead, decision: NowDecision): Promise<NowStep> {
  const memo = inv.deps.leads;
  const { write, deps } = inv;
  const counterId = write.counterId;
  const running = memo?.get(counterId);
  if (running !== undefined && running.version === parent.version) return afterJoining(inv, await running.outcome);

  let settle: (outcome: NowOutcome) => void = () => undefined;
  const entry: NowEntry = { version: parent.version, outcome: new Promise((resolve) => (settle = resolve)) };
  memo?.set(counterId, entry);
  let outcome: NowOutcome = { kind: "retry" };
  try {
    // The event arrives after its write committed, so a sum read now is read after it; sumAndCommit checks
    // it anyway, because the whole promise of coverage rests on it. A takeover's sum must also be read after
    // the due time of the promise it fulfils.
    const at = write.writtenAtUs;
    const lead = decision.kind === "lead";
    const target = decision.kind === "takeover" ? Math.max(decision.dueMs * 1000, at) : at;
    const step = await sumAndCommit(inv, {
      counterId,
      parent,
      targetUs: target,
      leadWrittenAtUs: lead ? at : null,
      sinceUs: at,
      // On a counter of one shard the event's own document may be the sum (plan.ts, snapshotSumAllowed).
      snapshot: write,
      promise: lead ? null : { owner: inv.owner, intervalMs: promiseIntervalMs(deps.intervalMs, parent.view) },
    });
    if (step.kind === "committed") {
      outcome = { kind: "committed", readUs: step.readUs, after: step.after };
      logCommitted(counterId, step.total, step.lagMs, lead ? "lead" : "slot");
      if (!lead) return { kind: "owner", commit: step };
      return { kind: "done", result: { kind: "committed", path: "lead", total: step.total, lagMs: step.lagMs, commits: 1 } };
    }
    if (step.kind === "overflow" || step.kind === "gone") {
      outcome = { kind: "final", result: step.kind };
      return { kind: "done", result: { kind: step.kind } };
    }
    // "early": the sum was read before what it must cover (a takeover's due time, by an instance whose clock runs
    // ahead of Firestore's): wait until then. Then, as after "changed" (another commit, a reset or a reshard wrote
    // the parent since we read it), decide again on a fresh read.
    if (step.kind === "early") await deps.sleep(Math.ceil((target - step.readUs) / 1000) + 1);
    return { kind: "decide" };
  } finally {
    // Joiners learn how it went, also when this invocation throws (they then decide on their own).
    settle(outcome);
    if (outcome.kind === "retry" && memo?.get(counterId) === entry) memo.delete(counterId);
  }
}

function afterJoining(inv: Invocation, outcome: NowOutcome): NowStep {
  switch (outcome.kind) {
    case "committed":
      if (outcome.readUs >= inv.write.writtenAtUs) return { kind: "done", result: { kind: "joined" } };
      return { kind: "decide", parent: outcome.after };
    case "final":
      return { kind: "done", result: { kind: outcome.result } };
    case "retry":
      return { kind: "decide" };
  }
}
