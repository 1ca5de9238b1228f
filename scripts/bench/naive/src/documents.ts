// The usual trigger that counts an app's own documents, kept only for the benchmark (workload 11): on
// every write of a comment, `increment(+1)` on the count when it starts to count (created, or published)
// and `increment(-1)` when it stops (deleted, or unpublished), as the official write-time aggregation
// sample does on create and delete, with its filter handled the usual way (before and after compared). It
// counts a redelivered event twice: the benchmark measures that. `writes` is incremented in the same
// update as `total`, so it counts this trigger's parent writes exactly; the handler answers the update's
// commit time (the benchmark's lag of a change runs to it).
import { FieldValue, type Timestamp } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { onDocumentWritten } from "firebase-functions/v2/firestore";
import { naiveDb } from "./db";
import { NAIVE_DOCUMENT_PATTERN, naiveCounterRef } from "./paths";

/** The benchmark's rule has one condition: a comment counts while its `status` is "published". */
function counts(data: Record<string, unknown> | undefined): number {
  return data?.status === "published" ? 1 : 0;
}

/** What the usual trigger adds for a write, from its before and after data (undefined: no document): +1, −1 or 0. */
export function naiveDelta(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): number {
  return counts(after) - counts(before);
}

/** Counts the comments of `naivePosts/{post}` on `naiveCounters/{post}` (the post's id is the counter's). */
export const naiveDocumentCount = onDocumentWritten(NAIVE_DOCUMENT_PATTERN, async (event): Promise<{ writeTime: Timestamp } | null> => {
  const started = Date.now();
  const change = event.data;
  if (change === undefined) return null;
  const counterId = event.params.post;
  const delta = naiveDelta(change.before.data(), change.after.data());
  if (delta === 0) {
    logOps(counterId, "unchanged", 0, Date.now() - started);
    return null;
  }
  const result = await naiveCounterRef(naiveDb(), counterId).update({ total: FieldValue.increment(delta), writes: FieldValue.increment(1) });
  logOps(counterId, "committed", 1, Date.now() - started);
  return { writeTime: result.writeTime };
});

/** The "rollup ops" line the product's rollup logs, so the benchmark counts this trigger's invocations alike. */
function logOps(counterId: string, outcome: string, writes: number, durationMs: number): void {
  logger.debug("rollup ops", { counterId, outcome, reads: 0, writes, aggregations: 0, waitMs: 0, durationMs });
}
