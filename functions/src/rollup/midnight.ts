// The midnight commit: windows move without writes (counters/windows.ts). After UTC midnight a windowed
// counter nobody touches still shows yesterday's `windows.today`; this commits such counters again, so
// their windows (and the mirrors of them) move to the new day. Each commit records `rollup.windowsMoveAt`,
// the next midnight when one of its windows is not 0 and null otherwise, so the query here finds exactly the
// counters with something to move, and never scans the others. The scheduled function rollupWindows
// (entry/rollupWindows.ts) runs it every few minutes: a run that finds nothing costs one read.
// Each counter is committed by the step every rollup ends with (commit.ts: sum at one read time, the open
// days with it, commit on condition that the parent is unchanged), so it is exact by the same argument and
// races nothing: a rollup that commits first only makes this one read the parent again.
import * as logger from "firebase-functions/logger";
import { sumAndCommit } from "./commit";
import { noOps, type RollupOps } from "./ops";
import type { ParentRead } from "./store";
import type { RollupDeps, Run } from "./types";

/** One page of counters whose windows move at or before a time, as found, and what the query cost. */
export interface MovedWindowsPage {
  counters: { counterId: string; parent: ParentRead }[];
  /** Documents read as billed (an empty page is billed as one). */
  reads: number;
  /** Where the next page starts (opaque); null after the last page. */
  next: object | null;
}

/** The query: counters whose `rollup.windowsMoveAt` is at or before `atMs`, oldest first, `limit` after `after`. */
export type FindMovedWindows = (atMs: number, limit: number, after?: object) => Promise<MovedWindowsPage>;

export interface MidnightOptions {
  pageSize: number;
  /** Stop starting new pages after this long (the function has a timeout; the next run goes on). */
  budgetMs: number;
  /** Counters committed at once. */
  concurrency: number;
}

const MIDNIGHT_DEFAULTS: MidnightOptions = { pageSize: 100, budgetMs: 240_000, concurrency: 8 };

/** Attempts per counter when rollups keep committing first (each one read of the parent more). */
const ATTEMPTS = 3;

export interface MidnightReport {
  found: number;
  /** How each counter ended: committed, changed (rollups kept committing first: they moved it), gone, failed. */
  outcomes: Record<string, number>;
  ops: RollupOps;
}

/** Commits again every counter whose windows have moved by now; never throws for one counter. */
export async function commitMovedWindows(deps: RollupDeps, find: FindMovedWindows, options: MidnightOptions = MIDNIGHT_DEFAULTS): Promise<MidnightReport> {
  const started = deps.nowMs();
  const report: MidnightReport = { found: 0, outcomes: {}, ops: noOps() };
  const run: Run = { deps: { ...deps, claims: undefined, onStage: undefined }, ops: report.ops };
  const atMs = (deps.dayClockMs ?? deps.nowMs)();
  let after: object | undefined;
  while (deps.nowMs() - started < options.budgetMs) {
    const page = await find(atMs, options.pageSize, after);
    report.ops.reads += page.reads;
    report.found += page.counters.length;
    for (let i = 0; i < page.counters.length; i += options.concurrency) {
      await Promise.all(page.counters.slice(i, i + options.concurrency).map((c) => commitOne(run, c.counterId, c.parent, report)));
    }
    if (page.next === null) break;
    after = page.next;
  }
  logger.info("windows moved", { found: report.found, outcomes: report.outcomes, ...report.ops, durationMs: deps.nowMs() - started });
  return report;
}

async function commitOne(run: Run, counterId: string, found: ParentRead, report: MidnightReport): Promise<void> {
  let outcome = "changed";
  try {
    let parent = found;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (attempt > 0) {
        parent = await run.deps.store.readParent(counterId);
        run.ops.reads += 1;
      }
      if (!parent.view.parentExists) {
        outcome = "gone";
        break;
      }
      const nowUs = run.deps.nowMs() * 1000;
      const step = await sumAndCommit(run, { counterId, parent, targetUs: 0, leadWrittenAtUs: null, sinceUs: nowUs });
      if (step.kind === "changed") continue;
      outcome = step.kind;
      break;
    }
  } catch (error) {
    outcome = "failed"; // the next run finds it again: its windowsMoveAt has not moved
    logger.error("could not move a counter's windows; the next run retries", { counterId, error: error instanceof Error ? error.message : String(error) });
  }
  report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
}
