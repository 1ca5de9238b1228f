// A chain's whole life, on a busy counter: the owner of a promise (the invocation whose commit made it: a
// start or a takeover, now.ts; or the retry of its event, resuming it) waits until the promise is due, sums
// the shards at a read time at or after the due time and, if anything was applied since its last sum,
// commits the total with the next promise, in one conditional write; then it waits for that one. If nothing
// was applied, the chain ends without a write: no write came in between, so nobody deferred to the promise
// (plan.ts, the invariant). Before its budget runs out (the function's timeout), its last commit makes no
// promise: it hands over, and the next busy event starts a chain of its own.
// If something else wrote the parent meanwhile (a reset, a reshard, a move of windows, reconcile, a start
// or a takeover that found the promise due), the commit fails and the owner reads the parent: done if a sum
// read at or after its due time is on it, or if the counter is gone or another incarnation of it (a promise
// serves the incarnation it was made on); else it sums again and commits onto what it read.
import { MAX_INTERVAL_MS } from "../model/param-rules";
import { sumAndCommit } from "./commit";
import { logCommitted } from "./ops";
import { isCovered, isRecounted, promiseIntervalMs, type SumMark } from "./plan";
import type { ParentRead } from "./store";
import type { ChainEnd, Run } from "./types";

/** How long an owner carries a chain when the deps do not say (config/read.ts sizes it to the timeout). */
export const DEFAULT_CHAIN_BUDGET_MS = 60_000;

/**
 * How long an owner may carry a chain in an invocation of `timeoutSeconds` (ROLLUP_TIMEOUT_SECONDS, at least
 * 2 x the interval + 10 s: model/param-rules.ts): its last round (a wait of one interval, a sum, a commit)
 * and 10 s of margin must end before the timeout.
 */
export function chainBudgetMsFor(timeoutSeconds: number, intervalMs: number): number {
  return Math.max(intervalMs, timeoutSeconds * 1000 - intervalMs - 10_000);
}

/** Failed commits in a row (the parent kept changing) before the owner throws and its event is retried. */
const COMMIT_ATTEMPTS = 8;

/** A promise its owner carries: whose, when due, and the parent and sum its last commit left. */
export interface Chain {
  counterId: string;
  /** The owner (plan.ts, ownerKeyOf), which every promise of the chain names. */
  owner: string;
  dueMs: number;
  /** The parent as the owner's last commit left it (or as read: a resumed promise). */
  parent: ParentRead;
  /** What the last sum held (plan.ts, nothingApplied); null when unknown: the next sum is committed. */
  mark: SumMark | null;
  /** Where the lag the next commit reports is counted from: the read time before it (microseconds). */
  sinceUs: number;
}

/** How the chain went: its commits, the last total and lag, and how it ended. */
export interface ChainResult {
  commits: number;
  last: { total: number; lagMs: number } | null;
  end: ChainEnd;
}

/** Carries the chain until it ends (see the header). Throws, so that the event is retried, if it does not settle. */
export async function carryChain(run: Run, start: Chain): Promise<ChainResult> {
  const { deps, ops } = run;
  const { counterId, owner } = start;
  const startedMs = deps.nowMs();
  const budgetMs = deps.chainBudgetMs ?? DEFAULT_CHAIN_BUDGET_MS;
  let { dueMs, parent, mark, sinceUs } = start;
  let commits = 0;
  let last: ChainResult["last"] = null;
  let failures = 0;
  let pauseMs = Math.max(0, dueMs - deps.nowMs());
  for (;;) {
    if (pauseMs > 0) await wait(run, Math.min(pauseMs, 2 * MAX_INTERVAL_MS));
    pauseMs = 0;
    const intervalMs = promiseIntervalMs(deps.intervalMs, parent.view);
    // The next promise would be due an interval from now: past the budget, hand over instead.
    const handover = deps.nowMs() - startedMs + intervalMs >= budgetMs;
    // A recounted counter's chain commits every round (a count cannot show that nothing came), and ends with
    // a commit that makes no promise once the count is what it was (commit.ts, endsAt).
    const recounted = isRecounted(parent.view);
    const step = await sumAndCommit(run, {
      counterId,
      parent,
      targetUs: dueMs * 1000,
      leadWrittenAtUs: null,
      sinceUs,
      promise: handover ? null : { owner, intervalMs },
      ...(recounted ? { endsAt: parent.view.total ?? Number.NaN } : { unless: mark }),
    });
    switch (step.kind) {
      case "quiet":
        return { commits, last, end: "quiet" };
      case "overflow":
      case "gone":
        return { commits, last, end: step.kind };
      case "early":
        // Our clock ran ahead of Firestore's: this sum may miss writes that deferred to us. Wait and sum again.
        pauseMs = Math.ceil((dueMs * 1000 - step.readUs) / 1000) + 1;
        continue;
      case "committed": {
        commits++;
        failures = 0;
        last = { total: step.total, lagMs: step.lagMs };
        logCommitted(counterId, step.total, step.lagMs, "slot");
        if (step.trailing === null) return { commits, last, end: handover ? "handover" : "closed" };
        parent = step.after;
        mark = step.mark;
        sinceUs = step.readUs;
        dueMs = step.trailing.dueMs;
        pauseMs = Math.max(0, dueMs - deps.nowMs());
        continue;
      }
      case "changed": {
        if (++failures >= COMMIT_ATTEMPTS) {
          throw new Error(`rollup of counter "${counterId}": the promise due ${new Date(dueMs).toISOString()} did not settle; retrying the event`);
        }
        const read = await deps.store.readParent(counterId);
        ops.reads += 1;
        const { view } = read;
        if (!view.parentExists || (view.createdUs != null && parent.view.createdUs != null && view.createdUs !== parent.view.createdUs)) {
          return { commits, last, end: "gone" };
        }
        if (isCovered(view.coveredUntilUs, dueMs * 1000)) return { commits, last, end: "fulfilled" };
        // Our promise still stands (only a sum read at or after its due time replaces it): a reset, a reshard,
        // a move of windows or reconcile wrote the parent. Sum again and commit onto it (nothing to compare with).
        parent = read;
        mark = null;
        continue;
      }
    }
  }
}

async function wait(run: Run, ms: number): Promise<void> {
  const started = run.deps.nowMs();
  await run.deps.sleep(ms);
  run.ops.waitMs += Math.max(0, run.deps.nowMs() - started);
}
