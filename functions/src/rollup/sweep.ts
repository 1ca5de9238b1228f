// The sweep: finishes claims nobody else will. A claim is normally finished by its claimer, by the
// platform's retries of its claimer's event, or by the next event of the counter that finds it stale.
// When the platform gives up on an event (retries stop after 24 h) and the counter gets no further
// increment, nothing else would: the events that deferred to the claim would stay out of the total.
// The scheduled function rollupSweep (entry/rollupSweep.ts) runs this every few minutes: one
// collection-group query for leases due more than the stale time ago (paged by a cursor), and each one
// found finished by the very step a claimer or a stale takeover runs (claim.ts, finishClaim: sum at or after its
// due time, conditional commit, lease deleted).
import * as logger from "firebase-functions/logger";
import { finishClaim } from "./claim";
import { noOps, type RollupOps } from "./ops";
import type { ClaimCursor, FoundClaim } from "./store";
import type { RollupDeps, RollupResult, Run } from "./types";

export interface SweepOptions {
  /** Claims read per query. */
  pageSize: number;
  /** Stop starting new pages after this long (the function has a timeout). */
  budgetMs: number;
  /** Claims finished at once. */
  concurrency: number;
}

const SWEEP_DEFAULTS: SweepOptions = { pageSize: 100, budgetMs: 240_000, concurrency: 8 };

export interface SweepReport {
  /** Claims found stale. */
  found: number;
  /** Documents the sweep's queries returned (only leases, in a database where nothing else shares their collection id). */
  scanned: number;
  /** How each found claim ended: committed, covered-by-other (already fulfilled), gone, overflow, failed. */
  outcomes: Record<string, number>;
  ops: RollupOps;
}

/**
 * Finds claims due more than `deps.staleAfterMs` ago and finishes each; never throws for one claim. The
 * query pages by a cursor from where the last page ended: a claim that could not be finished (it stays,
 * for the next run) or a document that is no lease never makes the run stop early or go round again.
 */
export async function sweepStaleClaims(deps: RollupDeps, options: SweepOptions = SWEEP_DEFAULTS): Promise<SweepReport> {
  const started = deps.nowMs();
  const report: SweepReport = { found: 0, scanned: 0, outcomes: {}, ops: noOps() };
  // One cut-off for the whole run, so that every page is a page of the same query.
  const dueBeforeMs = started - deps.staleAfterMs;
  let after: ClaimCursor | undefined;
  while (deps.nowMs() - started < options.budgetMs) {
    const page = await deps.store.staleClaims(dueBeforeMs, options.pageSize, after);
    report.ops.reads += page.reads;
    report.scanned += page.scanned;
    report.found += page.claims.length;
    for (let i = 0; i < page.claims.length; i += options.concurrency) {
      await Promise.all(page.claims.slice(i, i + options.concurrency).map((c) => finishOrphan(c, deps, report)));
    }
    if (page.next === null) break;
    after = page.next;
  }
  const log = report.found > 0 ? logger.warn : logger.debug;
  log("rollup sweep", { found: report.found, scanned: report.scanned, outcomes: report.outcomes, ...report.ops, durationMs: deps.nowMs() - started });
  return report;
}

async function finishOrphan(found: FoundClaim, deps: RollupDeps, report: SweepReport): Promise<void> {
  const { counterId, claim } = found;
  // No memo (the sweep holds no claim an event could defer to) and no test stages (those are an event's).
  const run: Run = { deps: { ...deps, claims: undefined, onStage: undefined }, ops: report.ops };
  // The claim stands in for the writes it covers: its sum must be read at or after the due time.
  const dueUs = claim.dueMs * 1000;
  let outcome: string;
  try {
    const result: RollupResult = await finishClaim(run, { counterId, dueMs: claim.dueMs, version: found.version, targetUs: dueUs, sinceUs: dueUs });
    outcome = result.kind;
    logger.warn("rollup sweep finished an orphaned claim", {
      counterId,
      eventId: claim.eventId,
      dueAt: new Date(claim.dueMs).toISOString(),
      outcome,
      ...(result.kind === "committed" ? { total: result.total, lateMs: result.lagMs } : {}),
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
  report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
}
