// The sweep: fulfils promises nobody else will. A promise (plan.ts) is normally fulfilled by its owner, by
// the platform's retries of its owner's event, or by the next event of the counter that finds it stale.
// When the platform gives up on an event (retries stop after 24 h) and the counter gets no further write,
// nothing else would: the events that deferred to it would stay out of the total. The scheduled function
// rollupSweep (entry/rollupSweep.ts) runs this every few minutes:
// - PROMISES. One query for the parents whose promise came due since the sweep's last run and is stale now
//   (`rollup.trailing.dueAt` in [mark, now - stale), paged by a cursor, oldest first), each checked once: a
//   promise with a sum read at or after its due time on the parent is fulfilled; else the shards are summed
//   and, if the sum holds what the parent's last commit held (plan.ts, markOfParent: the chain ended
//   quietly, the usual case), nothing is written; else the sum is committed with no promise. The mark (how
//   far every promise was checked) moves on only past what was checked: a failure holds it back, and the
//   next run checks from there again. A chain that ended quietly costs one read and one aggregation here.
// - LEGACY CLAIMS. Leases of the previous version due more than the stale time ago (legacy-lease.ts).
import * as logger from "firebase-functions/logger";
import { finishLegacyClaim } from "./legacy-lease";
import { noOps, type RollupOps } from "./ops";
import { isCovered, markOfParent } from "./plan";
import { sumAndCommit } from "./commit";
import type { ClaimCursor, FoundClaim, FoundCounter, PromiseCursor } from "./store";
import type { RollupDeps, Run } from "./types";

export interface SweepOptions {
  /** Documents read per query. */
  pageSize: number;
  /** Stop starting new pages after this long (the function has a timeout). */
  budgetMs: number;
  /** Counters checked at once. */
  concurrency: number;
}

const SWEEP_DEFAULTS: SweepOptions = { pageSize: 100, budgetMs: 240_000, concurrency: 8 };

/** Attempts per promise when the parent keeps changing (each one read more); the next run checks it again. */
const ATTEMPTS = 3;

export interface SweepReport {
  /**
   * Promises checked, and how each ended: fulfilled (already), quiet (nothing to add), committed, gone,
   * overflow, changed (the parent kept changing: checked again next run), failed.
   */
  promises: { found: number; outcomes: Record<string, number> };
  /** Legacy claims found stale, documents the lease query returned, and how each ended. */
  claims: { found: number; scanned: number; outcomes: Record<string, number> };
  /** How far every promise is now checked (ms since the epoch). */
  markMs: number;
  ops: RollupOps;
}

/** Checks the promises that came due since the last run and finishes stale legacy claims; never throws for one counter. */
export async function sweepRollups(deps: RollupDeps, options: SweepOptions = SWEEP_DEFAULTS): Promise<SweepReport> {
  const started = deps.nowMs();
  // No memos (the sweep holds nothing an event could rely on) and no test stages (those are an event's).
  const run: Run = { deps: { ...deps, leads: undefined, parents: undefined, onStage: undefined }, ops: noOps() };
  const inBudget = () => deps.nowMs() - started < options.budgetMs;
  // One cut-off for the whole run, so that every page is a page of the same query.
  const dueBeforeMs = started - deps.staleAfterMs;
  const report: SweepReport = { promises: { found: 0, outcomes: {} }, claims: { found: 0, scanned: 0, outcomes: {} }, markMs: dueBeforeMs, ops: run.ops };
  const fromMs = (await deps.store.readSweepMark()) ?? 0;
  run.ops.reads += 1;
  report.markMs = Math.max(fromMs, await checkPromises(run, fromMs, dueBeforeMs, options, inBudget, report));
  if (report.markMs > fromMs) {
    await deps.store.writeSweepMark(report.markMs);
    run.ops.writes += 1;
  }
  await finishLegacyClaims(run, dueBeforeMs, options, inBudget, report);
  const found = report.promises.outcomes.committed !== undefined || report.claims.found > 0;
  (found ? logger.warn : logger.debug)("rollup sweep", { promises: report.promises, claims: report.claims, ...report.ops, durationMs: deps.nowMs() - started });
  return report;
}

/** Checks every promise due in [fromMs, dueBeforeMs); returns the new mark: everything before it was checked. */
async function checkPromises(run: Run, fromMs: number, dueBeforeMs: number, options: SweepOptions, inBudget: () => boolean, report: SweepReport): Promise<number> {
  const { store } = run.deps;
  let after: PromiseCursor | undefined;
  let heldMs = Infinity; // the earliest due time left unchecked (a failure): the mark stays before it
  for (;;) {
    if (!inBudget()) return Math.min(heldMs, lastDueMs(after) ?? fromMs);
    const page = await store.promisesDue(fromMs, dueBeforeMs, options.pageSize, after);
    run.ops.reads += page.reads;
    report.promises.found += page.counters.length;
    for (let i = 0; i < page.counters.length; i += options.concurrency) {
      const outcomes = await Promise.all(page.counters.slice(i, i + options.concurrency).map((c) => checkPromise(run, c)));
      outcomes.forEach((outcome, j) => {
        report.promises.outcomes[outcome] = (report.promises.outcomes[outcome] ?? 0) + 1;
        const due = page.counters[i + j]!.parent.view.trailing?.dueMs;
        if ((outcome === "failed" || outcome === "changed") && due !== undefined) heldMs = Math.min(heldMs, due);
      });
    }
    if (page.next === null) return Math.min(heldMs, dueBeforeMs);
    after = page.next;
  }
}

/** The due time of the last promise of a page (the store's cursor holds it), if known. */
function lastDueMs(cursor: PromiseCursor | undefined): number | undefined {
  const due = (cursor as { dueMs?: unknown } | undefined)?.dueMs;
  return typeof due === "number" ? due : undefined;
}

/** One promise found stale: fulfilled already, or checked with a sum (see the header). */
async function checkPromise(run: Run, found: FoundCounter): Promise<string> {
  const { counterId } = found;
  let parent = found.parent;
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (attempt > 0) {
        parent = await run.deps.store.readParent(counterId);
        run.ops.reads += 1;
      }
      const { view } = parent;
      const promise = view.trailing;
      if (!view.parentExists) return "gone";
      if (promise == null || isCovered(view.coveredUntilUs, promise.dueMs * 1000)) return "fulfilled";
      const dueUs = promise.dueMs * 1000;
      const step = await sumAndCommit(run, { counterId, parent, targetUs: dueUs, leadWrittenAtUs: null, sinceUs: dueUs, promise: null, unless: markOfParent(view) });
      if (step.kind === "committed") {
        logger.warn("rollup sweep fulfilled a promise its owner left", { counterId, owner: promise.owner, dueAt: new Date(promise.dueMs).toISOString(), total: step.total, lateMs: step.lagMs });
        return "committed";
      }
      if (step.kind !== "changed" && step.kind !== "early") return step.kind;
    }
    return "changed";
  } catch (error) {
    logger.error("rollup sweep could not check a promise; the next run checks it again", { counterId, error: error instanceof Error ? error.message : String(error) });
    return "failed";
  }
}

/** Finishes the legacy claims due before `dueBeforeMs` (legacy-lease.ts). */
async function finishLegacyClaims(run: Run, dueBeforeMs: number, options: SweepOptions, inBudget: () => boolean, report: SweepReport): Promise<void> {
  let after: ClaimCursor | undefined;
  while (inBudget()) {
    const page = await run.deps.store.staleClaims(dueBeforeMs, options.pageSize, after);
    run.ops.reads += page.reads;
    report.claims.scanned += page.scanned;
    report.claims.found += page.claims.length;
    for (let i = 0; i < page.claims.length; i += options.concurrency) {
      await Promise.all(page.claims.slice(i, i + options.concurrency).map((c) => finishOne(run, c, report)));
    }
    if (page.next === null) return;
    after = page.next;
  }
}

async function finishOne(run: Run, found: FoundClaim, report: SweepReport): Promise<void> {
  const { counterId, claim } = found;
  let outcome: string;
  try {
    const result = await finishLegacyClaim(run, found);
    outcome = result.outcome;
    logger.warn("rollup sweep finished a claim of the previous version", {
      counterId,
      eventId: claim.eventId,
      dueAt: new Date(claim.dueMs).toISOString(),
      outcome,
      ...(result.total === undefined ? {} : { total: result.total }),
    });
  } catch (error) {
    // The next run tries again; one counter must not stop the others.
    outcome = "failed";
    logger.error("rollup sweep could not finish a claim; the next run retries", {
      counterId,
      dueAt: new Date(claim.dueMs).toISOString(),
      error: error instanceof Error ? error.message : String(error),
    });
  }
  report.claims.outcomes[outcome] = (report.claims.outcomes[outcome] ?? 0) + 1;
}
