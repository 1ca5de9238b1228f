// The usual sharded-counter rollup, kept only for the benchmark: on every shard write,
// `parent.total += after.count - before.count`. It counts a redelivered event twice and writes the
// parent once per increment; the benchmark measures both. `writes` is incremented in the same update
// as `total`, so it counts this trigger's parent writes exactly.
import { getApps, initializeApp } from "firebase-admin/app";
import { FieldValue, getFirestore } from "firebase-admin/firestore";
import { onDocumentWritten } from "firebase-functions/v2/firestore";
import { NAIVE_SHARD_PATTERN, naiveCounterRef } from "./paths";

function countOf(data: Record<string, unknown> | undefined): number {
  const count = data?.count;
  return typeof count === "number" ? count : 0;
}

export const naiveRollupTotal = onDocumentWritten(NAIVE_SHARD_PATTERN, async (event) => {
  const change = event.data;
  if (change === undefined) return;
  const delta = countOf(change.after.data()) - countOf(change.before.data());
  // Creating shards at 0 changes nothing; skipping it keeps `writes` to one per real increment.
  if (delta === 0) return;
  // Lazily, and only the default app (firebase-functions adds a named app of its own before this runs):
  // the benchmark also imports this module into a process that has its own default app.
  if (!getApps().some((app) => app.name === "[DEFAULT]")) initializeApp();
  await naiveCounterRef(getFirestore(), event.params.counterId).update({
    total: FieldValue.increment(delta),
    writes: FieldValue.increment(1),
  });
});
