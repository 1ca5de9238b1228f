// A unique counter's two counts held together: the sum of its shards and the number of its member
// documents, read at one time, and the repair that makes the sum equal the members again, exactly while
// setMember calls go on (reconcile's --fix, counter.ts).
import { AggregateField, FieldValue, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import { GRPC, grpcCode } from "../model/errors";
import { membersRef, shardRef, shardsRef } from "../model/paths";

export interface MembersAndSum {
  /** Σ count over the shards; null if it is not a safe integer (malformed or beyond 2^53). */
  sum: number | null;
  members: number;
  /** Shard "0" as of the same read: where a repair goes, conditioned on it being unchanged. */
  shard0: DocumentSnapshot;
}

/** What membersAndSum reads: two aggregations (up to 1,000 shards and members each) and shard "0". */
export const MEMBERS_AND_SUM_READS = 3;

/**
 * The shard sum, the number of member documents and shard "0", read at one time: one read-only
 * transaction is one consistent snapshot and takes no locks, so setMember calls keep going meanwhile.
 * Aggregations: one read per 1,000 shards and one per 1,000 members.
 */
export async function membersAndSum(db: Firestore, counterId: string): Promise<MembersAndSum> {
  return db.runTransaction(
    async (tx) => {
      const sum = (await tx.get(shardsRef(db, counterId).aggregate({ total: AggregateField.sum("count") }))).data().total;
      const members = (await tx.get(membersRef(db, counterId).count())).data().count;
      const shard0 = await tx.get(shardRef(db, counterId, 0));
      return { sum: typeof sum === "number" && Number.isSafeInteger(sum) ? sum : null, members, shard0 };
    },
    { readOnly: true },
  );
}

/** Attempts of the repair when setMember calls keep writing shard "0" between the read and the repair. */
const REPAIR_ATTEMPTS = 10;

/**
 * Makes a unique counter's shard sum equal its number of members: adds (members − sum), both read at the
 * same time T, to shard "0", on condition that shard "0" is unchanged since T. Why that is exact while
 * setMember calls run: every join or leave committed after T moves the sum and the members together (one
 * batch), so members − sum is the same at the repair's commit as at T. The one write that could change
 * it without moving the members, a second repair (or a stale-cache increment on shard "0"), changes shard
 * "0", so the precondition fails and the repair reads again. Not done if the counter or its shard
 * "0" is gone, the sum is malformed, or it kept losing the race.
 */
export async function repairFromMembers(db: Firestore, counterId: string): Promise<{ done: boolean; reads: number }> {
  let reads = 0;
  for (let attempt = 0; attempt < REPAIR_ATTEMPTS; attempt++) {
    const read = await membersAndSum(db, counterId);
    reads += MEMBERS_AND_SUM_READS;
    if (read.sum === null || !read.shard0.exists) return { done: false, reads };
    const correction = read.members - read.sum;
    if (correction === 0) return { done: true, reads };
    try {
      await read.shard0.ref.update({ count: FieldValue.increment(correction) }, { lastUpdateTime: read.shard0.updateTime! });
      return { done: true, reads };
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.NOT_FOUND) return { done: false, reads };
      if (code !== GRPC.FAILED_PRECONDITION) throw error;
    }
  }
  return { done: false, reads };
}
