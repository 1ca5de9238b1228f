// The usual sharded-counter rollup, kept only for the benchmark: on every shard write,
// `parent.total += after.count - before.count`. It counts a redelivered event twice and writes the
// parent once per increment; the benchmark measures both. `writes` is incremented in the same update
// as `total`, so it counts this trigger's parent writes exactly.
import { FieldValue } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { onDocumentWritten } from "firebase-functions/v2/firestore";
import { onCall } from "firebase-functions/v2/https";
import { naiveDb } from "./db";
import { NAIVE_SHARD_PATTERN, naiveCounterRef, naiveShardRef } from "./paths";

function countOf(data: Record<string, unknown> | undefined): number {
  const count = data?.count;
  return typeof count === "number" ? count : 0;
}

export const naiveRollupTotal = onDocumentWritten(NAIVE_SHARD_PATTERN, async (event) => {
  const started = Date.now();
  const change = event.data;
  if (change === undefined) return;
  const delta = countOf(change.after.data()) - countOf(change.before.data());
  const counterId = event.params.counterId;
  // Creating shards at 0 changes nothing; skipping it keeps `writes` to one per real increment.
  if (delta === 0) {
    logOps(counterId, "skip-unchanged", 0, Date.now() - started);
    return;
  }
  await naiveCounterRef(naiveDb(), counterId).update({
    total: FieldValue.increment(delta),
    writes: FieldValue.increment(1),
  });
  logOps(counterId, "committed", 1, Date.now() - started);
});

/** The same "rollup ops" line as the product's rollup logs, so the benchmark counts both alike. */
function logOps(counterId: string, outcome: string, writes: number, durationMs: number): void {
  logger.debug("rollup ops", { counterId, outcome, reads: 0, writes, aggregations: 0, waitMs: 0, durationMs });
}

/**
 * The cheapest callable that increments a counter: one raw `increment(1)` on a random shard, no input
 * checks, no auth. The benchmark measures incrementCounter against it through the same transport (the
 * Firebase JS SDK and the functions emulator), so the difference is our callable's own work.
 */
export const naiveIncrement = onCall(async (request) => {
  const { counterId, numShards } = request.data as { counterId: string; numShards: number };
  const shard = Math.floor(Math.random() * numShards);
  await naiveShardRef(naiveDb(), counterId, shard).update({ count: FieldValue.increment(1) });
  return { shard };
});
