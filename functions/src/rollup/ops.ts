// What one rollup invocation cost, as billed, and the rollup's structured log lines. Per invocation, at
// debug: "rollup ops" (the benchmark adds these lines up to price a million increments). At INFO and
// above only what an operator acts on: "rollup committed" (with lagMs: the lag metric) and "rollup
// threw; the event is retried". docs/operations.md's log-based metrics filter on these exact messages (model/log-lines.ts)
// and fields, and functions/test/logs.emulator.test.ts holds them to it.
import * as logger from "firebase-functions/logger";
import { COMMITTED_MESSAGE, OPS_MESSAGE, RESUMED_MESSAGE, TAKEOVER_MESSAGE, THREW_MESSAGE } from "../model/log-lines";

/** What one invocation did, as billed: document reads, writes (deletes included), aggregation queries. */
export interface RollupOps {
  reads: number;
  writes: number;
  /** Aggregation queries; each is billed as one read per 1,000 shards (minimum one). */
  aggregations: number;
  /** Time spent waiting for a slot to end (the invocation holds its instance meanwhile). */
  waitMs: number;
}

export function noOps(): RollupOps {
  return { reads: 0, writes: 0, aggregations: 0, waitMs: 0 };
}

/** `path`: "lead" for an idle counter's leading edge, "slot" for a busy counter's slot commit. */
export function logCommitted(counterId: string, total: number, lagMs: number, path: "lead" | "slot"): void {
  logger.info(COMMITTED_MESSAGE, { counterId, total, lagMs, path });
}

export function logThrew(counterId: string, shardId: string, eventId: string, error: unknown): void {
  logger.warn(THREW_MESSAGE, { counterId, shardId, eventId, error: error instanceof Error ? error.message : String(error) });
}

/** A promise taken over (stale: its owner left it) or resumed by its owner's retry (overdue): an operator's signal. */
export function logPromiseTaken(counterId: string, how: "takeover" | "resume", promise: { dueMs: number; owner: string }): void {
  logger.warn(how === "takeover" ? TAKEOVER_MESSAGE : RESUMED_MESSAGE, { counterId, dueAt: new Date(promise.dueMs).toISOString(), owner: promise.owner });
}

/** Logs one invocation's outcome and cost at debug level. */
export function logOps(counterId: string, outcome: string, ops: RollupOps, durationMs: number, extra: Record<string, unknown>): void {
  logger.debug(OPS_MESSAGE, { counterId, outcome, ...ops, durationMs, ...extra });
}
