// What one rollup invocation cost, as billed, and the one structured log line that reports it
// ("rollup ops"): the benchmark adds these lines up to price a million increments.
import * as logger from "firebase-functions/logger";

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

/** Logs one invocation's outcome and cost at debug level. */
export function logOps(counterId: string, outcome: string, ops: RollupOps, durationMs: number, extra: Record<string, unknown>): void {
  logger.debug("rollup ops", { counterId, outcome, ...ops, durationMs, ...extra });
}
