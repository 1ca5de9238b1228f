// The midnight commit: windows move without writes (model/windows.ts). After UTC midnight a windowed
// counter nobody touches still shows yesterday's `windows.today`; this commits such counters again, so
// their windows (and the mirrors of them) move to the new day. Each commit records `rollup.windowsMoveAt`,
// the next midnight when one of its windows is not 0 and null otherwise, so the store's query
// (midnightCounters, beside the sweep's staleClaims) finds exactly the counters with something to move, and
// never scans the others. The scheduled function rollupWindows
// (entry/rollupWindows.ts) runs it at every UTC midnight and every 10 minutes after: a run that finds
// nothing costs one read.
//
// NO SUM. The windows of the new day come from the parent's own `rollup.days`, which is exact at the read
// time the total holds (model/windows.ts, "the windows of a later day need no sum"): movedWindows. So a
// counter costs one conditioned write (the parent, on condition that it is the version the query found; with
// mirrors, one transaction over the parent and its target documents that writes only the values that
// changed: rollup/firestore-parent.ts). A rollup that commits first makes the write fail and this one read the
// parent again: if that commit moved the windows, there is nothing left to do. The total and its read time
// are never written here, so the coverage rule and the rollup's invariants (plan.ts) are untouched. A parent
// whose `rollup.days` cannot be read is summed and committed as a rollup would (commit.ts).
//
// AT SCALE. One call per counter (two with mirrors), and calls wait on the network, not on this instance:
// pages of the query are read one ahead while a pool of `concurrency` workers moves the counters of the page
// before, with no barrier between chunks. At 50 ms a Firestore call and 64 workers that is about 1,280
// counters a second: 100,000 counters touched in the last 30 days move within about 80 s of the run (about
// 160 s with mirrors), and a run moves about 600,000 (300,000) before its budget; the next run, 10 minutes
// later, goes on with the rest (docs/windows.md, "At scale"; functions/test/midnight-scale.test.ts runs
// this code over 100,000 counters in virtual time).
import * as logger from "firebase-functions/logger";
import { dayOf, movedWindows } from "../model/windows";
import { sumAndCommit } from "./commit";
import { noOps, type RollupOps } from "./ops";
import type { FoundCounter, MidnightPage, ParentRead, RollupStore } from "./store";
import type { RollupDeps, Run } from "./types";

export interface MidnightOptions {
  pageSize: number;
  /** Stop reading new pages after this long (the function has a timeout; the next run goes on). */
  budgetMs: number;
  /** Counters moved at once. */
  concurrency: number;
}

/** Sized for rollupWindows' timeout (entry/rollupWindows.ts): the last page read before the budget ends well within it. */
export const MIDNIGHT_DEFAULTS: MidnightOptions = { pageSize: 500, budgetMs: 480_000, concurrency: 64 };

/** Attempts per counter when rollups keep committing first (each one read of the parent more). */
const ATTEMPTS = 3;

export interface MidnightReport {
  found: number;
  /**
   * How each counter ended: committed (moved), summed (moved with a sum: its days could not be read),
   * current (a rollup moved it first), changed (rollups kept committing first), gone, not-windowed (found
   * by a `rollup.windowsMoveAt` it should not have), overflow, failed.
   */
  outcomes: Record<string, number>;
  ops: RollupOps;
}

/**
 * The midnight commit: moves the windows of every counter whose windows have moved by now (found by the
 * store's query, midnightCounters); never throws for one counter, and throws once the moves end if the query failed.
 */
export async function commitMidnight(deps: RollupDeps, options: MidnightOptions = MIDNIGHT_DEFAULTS): Promise<MidnightReport> {
  const started = deps.nowMs();
  const report: MidnightReport = { found: 0, outcomes: {}, ops: noOps() };
  const run: Run = { deps: { ...deps, leads: undefined, onStage: undefined }, ops: report.ops };
  const dayClock = deps.dayClockMs ?? deps.nowMs;
  const state: FeedState = {};
  const feed = pages(deps.store, dayClock(), options, () => deps.nowMs() - started < options.budgetMs, report, state);
  const worker = async (): Promise<void> => {
    for (let next = await feed.next(); next.done !== true; next = await feed.next()) await moveCounter(run, next.value, dayClock, report);
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  logger.info("windows moved", { found: report.found, outcomes: report.outcomes, ...report.ops, durationMs: deps.nowMs() - started });
  if (state.error !== undefined) throw state.error;
  return report;
}

/** Where a run's feed of counters stands: set when the query failed (the run throws once the moves end). */
interface FeedState {
  error?: Error;
}

/** The counters of the query's pages in order, the next page read while the workers take this one's. */
async function* pages(store: RollupStore, atMs: number, options: MidnightOptions, inBudget: () => boolean, report: MidnightReport, state: FeedState): AsyncGenerator<FoundCounter> {
  let pending: Promise<MidnightPage> | null = store.midnightCounters(atMs, options.pageSize);
  while (pending !== null) {
    let page: MidnightPage;
    try {
      page = await pending;
    } catch (error) {
      // The query failed (its index missing, say): the counters found so far are still moved, and the run
      // then throws, so the failure shows where the platform reports failed runs.
      logger.error("the midnight commit's query failed; the windows of the counters it did not find stay as they are until a run succeeds", {
        error: error instanceof Error ? error.message : String(error),
      });
      state.error = error instanceof Error ? error : new Error(String(error));
      return;
    }
    report.ops.reads += page.reads;
    report.found += page.counters.length;
    pending = page.next !== null && inBudget() ? store.midnightCounters(atMs, options.pageSize, page.next) : null;
    pending?.catch(() => undefined); // awaited on the next turn; this only avoids an unhandled rejection meanwhile
    yield* page.counters;
  }
}

async function moveCounter(run: Run, found: FoundCounter, dayClock: () => number, report: MidnightReport): Promise<void> {
  let outcome = "changed";
  try {
    let parent = found.parent;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (attempt > 0) {
        parent = await run.deps.store.readParent(found.counterId);
        run.ops.reads += 1;
      }
      const step = await moveOnce(run, found.counterId, parent, dayClock());
      if (step === "changed") continue;
      outcome = step;
      break;
    }
  } catch (error) {
    outcome = "failed"; // the next run finds it again: its windowsMoveAt has not moved
    logger.error("could not move a counter's windows; the next run retries", {
      counterId: found.counterId,
      error: error instanceof Error ? error.message : String(error),
    });
  }
  report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
}

/** One attempt to move a counter's windows to the day of `nowMs`, onto `parent` as read. */
async function moveOnce(run: Run, counterId: string, parent: ParentRead, nowMs: number): Promise<string> {
  const { view } = parent;
  if (!view.parentExists) return "gone";
  const days = view.days;
  if (days == null) return "not-windowed";
  if (days.moveAtMs === null || days.moveAtMs > nowMs) return "current";
  if (days.sinceUs === 0) {
    // `rollup.days` cannot be read: sum every day again and commit, as a rollup does.
    const step = await sumAndCommit(run, { counterId, parent, targetUs: 0, leadWrittenAtUs: null, sinceUs: nowMs * 1000 });
    return step.kind === "committed" ? "summed" : step.kind;
  }
  const result = await run.deps.store.moveWindows(counterId, parent, movedWindows(days.days, dayOf(nowMs)));
  run.ops.reads += result.reads;
  if (result.kind === "committed") run.ops.writes += 1 + result.targetWrites;
  return result.kind;
}
