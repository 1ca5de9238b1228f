// The sum: a counter's total is recomputed, never accumulated, with one consistent read of all its
// shards. This is the line that computes a counter's total.
import { AggregateField, type Firestore, type Timestamp } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { GRPC, grpcCode } from "../model/errors";
import { SHARD_SUMS_INDEX, shardsRef } from "../model/paths";
import { readCount } from "../model/shards";
import type { RollupOps } from "./ops";

/**
 * A sum at one read time. `writes`: the shards' `writes` summed at the same read time (the load the
 * growth of shards is measured from, growth.ts); null when it could not be read with the total.
 */
export type ShardSumAt = { overflow: false; total: number; writes: number | null; readTime: Timestamp } | { overflow: true; readTime: Timestamp };

/**
 * The sum of the shards' counts at one read time. The aggregation query costs one read per 1,000 shards.
 *
 * Given the counter's `numShards` (as on the parent the sum will be committed onto), the same query also
 * sums `writes` and counts the shards: a query with several aggregations takes only the documents that
 * hold every field it sums, so the sums are used only when it took all `numShards` shards (a shard
 * written before shards had `writes` lacks it until its next increment). Otherwise the counts are summed
 * alone, as before, and `writes` is null. (A document in the shards collection that is no shard, and
 * holds no `writes`, is left out of the combined sum: reconcile reports such strays.) Firestore sums
 * through index scans, so the combined query needs the index SHARD_SUMS_INDEX (firestore.indexes.json).
 * Without it the query fails; the counts are then summed alone, exactly, for the next 10 minutes on this
 * instance, and an error says why: the totals never stop over a missing index, growth does.
 *
 * If the sum of the counts is not a safe integer (a malformed shard slipped in, or the sum is beyond
 * 2^53), the shards are read one by one and malformed counts are taken as 0, as in the event path. A sum
 * of valid counts beyond Number.MAX_SAFE_INTEGER is reported as overflow, never rounded.
 */
export async function sumShards(
  db: Firestore,
  counterId: string,
  ops?: Pick<RollupOps, "reads" | "aggregations">,
  numShards?: number,
): Promise<ShardSumAt> {
  const col = shardsRef(db, counterId);
  if (numShards !== undefined && Date.now() >= missingIndexUntilMs) {
    const both = await col
      .aggregate({ total: AggregateField.sum("count"), writes: AggregateField.sum("writes"), shards: AggregateField.count() })
      .get()
      .catch((error: unknown) => {
        if (grpcCode(error) !== GRPC.FAILED_PRECONDITION) throw error;
        missingIndexUntilMs = Date.now() + MISSING_INDEX_RETRY_MS;
        logger.error("the shards' index on count and writes is missing: totals are summed without it, and no counter grows, until firestore.indexes.json is deployed", {
          counterId,
          index: SHARD_SUMS_INDEX,
          error: error instanceof Error ? error.message : String(error),
        });
        return null;
      });
    if (ops !== undefined) ops.aggregations += 1;
    const data = both?.data();
    if (both != null && data !== undefined && data.shards === numShards && isSafe(data.total) && isSafe(data.writes)) {
      return { overflow: false, total: data.total, writes: data.writes, readTime: both.readTime };
    }
  }
  const aggregate = await col.aggregate({ total: AggregateField.sum("count") }).get();
  if (ops !== undefined) ops.aggregations += 1;
  const total = aggregate.data().total;
  if (isSafe(total)) {
    return { overflow: false, total, writes: null, readTime: aggregate.readTime };
  }
  const docs = await col.get();
  if (ops !== undefined) ops.reads += Math.max(1, docs.size);
  let exact = 0n; // BigInt: intermediate sums may leave the safe range even when the result does not
  for (const doc of docs.docs) {
    const count = readCount(doc.data());
    if (count.malformed) logMalformedCount(counterId, doc.id, doc.ref.path, doc.get("count"));
    exact += BigInt(count.value);
  }
  if (exact > BigInt(Number.MAX_SAFE_INTEGER) || exact < BigInt(Number.MIN_SAFE_INTEGER)) {
    return { overflow: true, readTime: docs.readTime };
  }
  return { overflow: false, total: Number(exact), writes: null, readTime: docs.readTime };
}

/** After the combined query found no index, this instance sums the counts alone for this long before trying again. */
const MISSING_INDEX_RETRY_MS = 10 * 60_000;
let missingIndexUntilMs = 0;

function isSafe(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

/** The malformed-count rule's error log: the shard's path and a short, safe description of the value. */
export function logMalformedCount(counterId: string, shardId: string, path: string, value: unknown): void {
  const text = typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : String(value);
  logger.error("shard holds a malformed count; it counts as 0", {
    counterId,
    shardId,
    path,
    count: `${typeof value}: ${text.slice(0, 60)}`,
  });
}
