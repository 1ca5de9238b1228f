// The sum: a counter's total is recomputed, never accumulated, with one consistent read of all its
// shards. This is the line that computes a counter's total.
import { AggregateField, type Firestore, type Timestamp } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { shardsRef } from "../counters/paths";
import { readCount } from "../counters/shards";
import type { RollupOps } from "./ops";

export type ShardSumAt = { overflow: false; total: number; readTime: Timestamp } | { overflow: true; readTime: Timestamp };

/**
 * The sum of the shards' counts at one read time. The aggregation query costs one read per 1,000 shards;
 * if it returns something that is not a safe integer (a malformed shard slipped in, or the sum is beyond
 * 2^53), the shards are read one by one and malformed counts are taken as 0, as in the event path. A sum
 * of valid counts beyond Number.MAX_SAFE_INTEGER is reported as overflow, never rounded.
 */
export async function sumShards(db: Firestore, counterId: string, ops?: Pick<RollupOps, "reads" | "aggregations">): Promise<ShardSumAt> {
  const col = shardsRef(db, counterId);
  const aggregate = await col.aggregate({ total: AggregateField.sum("count") }).get();
  if (ops !== undefined) ops.aggregations += 1;
  const total = aggregate.data().total;
  if (typeof total === "number" && Number.isSafeInteger(total)) {
    return { overflow: false, total, readTime: aggregate.readTime };
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
  return { overflow: false, total: Number(exact), readTime: docs.readTime };
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
