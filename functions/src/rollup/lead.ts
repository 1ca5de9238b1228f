// The leading edge: a write on an idle counter is rolled up at once (plan.ts) — one parent read, one
// sum, one conditional write, no lease. Under concurrent delivery a burst on an idle counter sends many
// events at once, and every one that reads the parent before the first commit finds it idle. Without
// care each would run its own sum and its own conditional write (one wins, the rest fail and look
// again): a herd. So per instance, a leading edge is shared: the events that decide "lead" on the same
// parent version join the one already running (or just finished) instead of summing.
// - A joiner whose write is at or before that lead's read time is covered by it: done, no more reads.
//   (It cannot be a claimer owing a later sum: an event that finds its write idle holds no pending
//   claim, plan.ts.)
// - A joiner written after that read time decides again from the parent the lead committed, without
//   reading it: not idle any more, so it claims or defers through the lease.
// - If the lead did not commit (the parent changed, the instance's clock ran ahead, it failed), its
//   joiners decide again on a fresh read.
// A lone increment on an idle counter finds nothing to join and costs exactly what it did.
import { sumAndCommit } from "./commit";
import type { ParentRead } from "./store";
import type { Invocation, LeadEntry, LeadOutcome, RollupResult } from "./types";

/** What the event does next: it is done, or it decides again (from a known parent, or on a fresh read). */
export type LeadStep = { kind: "done"; result: RollupResult } | { kind: "decide"; parent?: ParentRead };

/** Runs the leading edge for an event that found the counter idle in `parent`, or joins this instance's. */
export async function leadingEdge(inv: Invocation, parent: ParentRead): Promise<LeadStep> {
  const memo = inv.deps.leads;
  const counterId = inv.write.counterId;
  const running = memo?.get(counterId);
  if (running !== undefined && running.version === parent.version) return afterJoining(inv, await running.outcome);

  let settle: (outcome: LeadOutcome) => void = () => undefined;
  const entry: LeadEntry = { version: parent.version, outcome: new Promise((resolve) => (settle = resolve)) };
  memo?.set(counterId, entry);
  let outcome: LeadOutcome = { kind: "retry" };
  try {
    // The event arrives after its write committed, so a sum read now is read after it; sumAndCommit
    // checks it anyway, because the whole promise of coverage rests on it.
    const at = inv.write.writtenAtUs;
    // On a counter of one shard the event's own document may be the sum (plan.ts, snapshotSumAllowed).
    const step = await sumAndCommit(inv, { counterId, parent, targetUs: at, leadWrittenAtUs: at, sinceUs: at, snapshot: inv.write });
    if (step.kind === "committed") {
      // The parent as the lead's commit left it: what a joiner written after the sum decides from.
      outcome = { kind: "committed", readUs: step.readUs, after: { view: step.after, version: step.version } };
      return { kind: "done", result: { kind: "committed", dueMs: null, total: step.total, lagMs: step.lagMs } };
    }
    if (step.kind === "overflow" || step.kind === "gone") {
      outcome = { kind: "final", result: step.kind };
      return { kind: "done", result: { kind: step.kind, dueMs: null } };
    }
    // "changed" (another rollup or a reset wrote the parent since we read it) or "early" (our sum was
    // read before the write, a clock ahead of Firestore's): decide again on a fresh read.
    return { kind: "decide" };
  } finally {
    // Joiners learn how it went, also when this invocation throws (they then decide on their own).
    settle(outcome);
    if (outcome.kind === "retry" && memo?.get(counterId) === entry) memo.delete(counterId);
  }
}

function afterJoining(inv: Invocation, outcome: LeadOutcome): LeadStep {
  switch (outcome.kind) {
    case "committed":
      if (outcome.readUs >= inv.write.writtenAtUs) return { kind: "done", result: { kind: "joined", dueMs: null } };
      return { kind: "decide", parent: outcome.after };
    case "final":
      return { kind: "done", result: { kind: outcome.result, dueMs: null } };
    case "retry":
      return { kind: "decide" };
  }
}
