// A write's commit time as a Firestore trigger's event tells it (model/time.ts, writeTimeUs), for every trigger
// that takes one: rollupTotal (a shard), rollupBoard (an entry) and documentCounters-<name> (an app's document).
import type { Change, DocumentSnapshot } from "firebase-functions/v2/firestore";
import { writeTimeUs } from "../model/time";

/**
 * The commit time of the event's write, microseconds (rounded up): the new document's update time, or for a
 * delete the event's time. Production gives the event the commit's time. The Firestore emulator gives a delete's
 * event a time from before the delete (a comment deleted in the React example's feed was taken as covered by a
 * count made before the delete, and the post showed one comment too many): there a delete is taken at the
 * invocation's time, which comes after its commit (an event follows its write), so that a sum or count at or
 * after it is what covers it. Later is always safe: a write taken later only ever makes one more rollup.
 */
export function eventWriteTimeUs(change: Change<DocumentSnapshot>, eventTime: string): number {
  const { before, after } = change;
  const nowMs = Date.now();
  const deleteSeenAt = !after.exists && process.env.FUNCTIONS_EMULATOR === "true" ? new Date(nowMs).toISOString() : eventTime;
  return writeTimeUs(after.exists ? after.updateTime : undefined, before.exists ? before.updateTime : undefined, deleteSeenAt, nowMs);
}
