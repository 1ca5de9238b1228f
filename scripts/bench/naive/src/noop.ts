// A trigger that does nothing, for measuring how many events per second the emulator delivers
// (one at a time, across every trigger: docs/benchmark.md). Only an event for a document marked
// `marker: true` does something: it creates NOOP_DONE/{same id}, so the benchmark sees when the events
// written before the marker have all been delivered.
import { onDocumentWritten } from "firebase-functions/v2/firestore";
import { naiveDb } from "./db";
import { NOOP_DONE, NOOP_EVENTS } from "./paths";

export const benchNoop = onDocumentWritten(`${NOOP_EVENTS}/{eventId}`, async (event) => {
  if (event.data?.after.get("marker") !== true) return;
  await naiveDb().collection(NOOP_DONE).doc(event.params.eventId).create({});
});
