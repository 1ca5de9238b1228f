// The sweep: finishes claims nobody else will. A claim is normally finished by its claimer, by the
// platform's retries of its claimer's event, or by the next event of the counter that finds it stale.
// When the platform gives up on an event (retries stop after 24 h) and the counter gets no further
// increment, nothing else would: the events that deferred to the claim would stay out of the total.
// The scheduled function rollupSweep (functions/src/sweep.ts) runs this every few minutes: one
// collection-group query for leases due more than the stale time ago, and each one found finished as a
// stale takeover would (sum at or after its due time, conditional commit, lease deleted).
import * as logger from "firebase-functions/logger";
import { finishClaim } from "./commit";
import type { Invocation, RollupDeps, RollupResult } from "./context";
import { noOps, type RollupOps } from "./ops";
import type { FoundClaim } from "./storage";

export interface SweepOptions {
  /** Claims read per query. */
  pageSize: number;
  /** Stop starting new pages after this long (the function has a timeout). */
  budgetMs: number;
  /** Claims finished at once. */
  concurrency: number;
}

export const SWEEP_DEFAULTS: SweepOptions = { pageSize: 100, budgetMs: 240_000, concurrency: 8 };

export interface SweepReport {
  /** Claims found stale. */
  found: number;
  /** How each found claim ended: committed, covered-by-other (already fulfilled), gone, overflow, failed. */
  outcomes: Record<string, number>;
  ops: RollupOps;
}

/** Finds claims due more than `deps.staleAfterMs` ago and finishes each; never throws for one claim. */
export async function sweepStaleClaims(deps: RollupDeps, options: SweepOptions = SWEEP_DEFAULTS): Promise<SweepReport> {
  const started = deps.nowMs();
  const report: SweepReport = { found: 0, outcomes: {}, ops: noOps() };
  const seen = new Set<string>();
  while (deps.nowMs() - started < options.budgetMs) {
    const page = await deps.store.staleClaims(deps.nowMs() - deps.staleAfterMs, options.pageSize);
    report.ops.reads += page.reads;
    // A claim that could not be finished comes back in the next page: stop when nothing new does.
    const fresh = page.claims.filter((c) => !seen.has(`${c.counterId}@${c.version}`));
    if (fresh.length === 0) break;
    for (const c of fresh) seen.add(`${c.counterId}@${c.version}`);
    report.found += fresh.length;
    for (let i = 0; i < fresh.length; i += options.concurrency) {
      await Promise.all(fresh.slice(i, i + options.concurrency).map((c) => finishOrphan(c, deps, report)));
    }
    if (page.claims.length < options.pageSize) break;
  }
  const log = report.found > 0 ? logger.warn : logger.debug;
  log("rollup sweep", { found: report.found, outcomes: report.outcomes, ...report.ops, durationMs: deps.nowMs() - started });
  return report;
}

async function finishOrphan(found: FoundClaim, deps: RollupDeps, report: SweepReport): Promise<void> {
  const { counterId, claim } = found;
  // The claim stands in for the write: its sum must be read at or after the due time, nothing earlier.
  const inv: Invocation = {
    write: { eventId: claim.eventId, counterId, shardId: "", writtenAtUs: claim.dueMs * 1000, before: undefined, after: undefined },
    deps: { ...deps, claims: undefined, onStage: undefined },
    ops: report.ops,
  };
  let outcome: string;
  try {
    const result: RollupResult = await finishClaim(inv, claim.dueMs, found.version);
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
