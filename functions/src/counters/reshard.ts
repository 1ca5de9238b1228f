// redistributeShards, reshardCounter's write: a new number of shards with the same sum, in one transaction.
// Admin operations (reset.ts, reshard.ts, delete.ts) each write the parent, so they serialize with each
// other; increments are plain batched writes and land before or after them, never half-way.
import { FieldValue, type Firestore, type Transaction } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { counterRef, shardRef } from "../model/paths";
import { ADMIN_TRANSACTION_ATTEMPTS, forgetShape, shapeIn } from "./shape";
import { NEW_SHARD } from "./shard-writes";
import { shardDaysOf } from "../model/windows";
import { dayField, readCount, readWrites, removedShardIds, shardIds, spread } from "../model/shards";

/**
 * Changes the number of shards without changing their sum. Up: new shards start at 0. Down: the removed
 * shards are read (which locks them against increments until the commit), their counts are added to the
 * kept shards (a windowed counter's day counts to the first one) and they are deleted, all in one transaction. An increment that still targets a removed
 * shard afterwards fails on the missing document and retries on a kept one.
 */
export async function redistributeShards(
  db: Firestore,
  counterId: string,
  numShards: number,
): Promise<{ counterId: string; numShards: number }> {
  await db.runTransaction(
    async (tx) => {
      const current = await readNumShards(tx, db, counterId);
      if (current === numShards) return;
      if (numShards > current) {
        for (const id of shardIds(numShards).slice(current)) tx.set(shardRef(db, counterId, id), NEW_SHARD);
      } else {
        const removed = await tx.getAll(...removedShardIds(current, numShards).map((id) => shardRef(db, counterId, id)));
        let folded = 0;
        let foldedWrites = 0;
        const foldedDays = new Map<string, number>(); // a windowed counter's days move with the counts
        for (const shard of removed) {
          const days = shard.exists ? shardDaysOf(shard.get("days")) : null;
          for (const [day, count] of Object.entries(days ?? {})) if (count !== 0) foldedDays.set(day, (foldedDays.get(day) ?? 0) + count);
        }
        for (const shard of removed) {
          const count = readCount(shard.exists ? shard.data() : undefined);
          if (count.malformed) {
            logger.error("reshard drops a malformed shard count", { counterId, shardId: shard.id, path: shard.ref.path });
          }
          folded += count.value;
          foldedWrites += readWrites(shard.exists ? shard.data() : undefined);
        }
        // The applied writes move with the counts, so the load the rollup measures (rollup/growth.ts)
        // does not drop when shards go.
        const writes = spread(foldedWrites, numShards);
        spread(folded, numShards).forEach((addend, i) => {
          const update: Record<string, FieldValue> = {};
          if (addend !== 0) update.count = FieldValue.increment(addend);
          if (writes[i] !== 0) update.writes = FieldValue.increment(writes[i]!);
          if (i === 0) for (const [day, count] of foldedDays) update[dayField(day)] = FieldValue.increment(count);
          if (Object.keys(update).length > 0) tx.update(shardRef(db, counterId, i), update);
        });
        for (const shard of removed) tx.delete(shard.ref);
      }
      // Counted, so that a reset whose read came before this moved counts between shards reads again (reset-plan.ts).
      // Its load no longer tells what the shards hold (rollup/plan.ts, markOfParent): the next commit measures afresh.
      tx.update(counterRef(db, counterId), { numShards, "rollup.reshards": FieldValue.increment(1), "rollup.load": FieldValue.delete() });
    },
    { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
  );
  forgetShape(counterId);
  return { counterId, numShards };
}

/** numShards of the parent, read inside the transaction (which locks it). */
async function readNumShards(tx: Transaction, db: Firestore, counterId: string): Promise<number> {
  return shapeIn(counterId, await tx.get(counterRef(db, counterId))).numShards;
}
