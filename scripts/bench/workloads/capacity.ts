// The emulator's delivery capacity on this machine: events per second it delivers to a trigger that does
// nothing (naive/src/noop.ts). The events are written faster than that, so they queue and the emulator
// delivers them back to back, one at a time (docs/benchmark.md); a marker written last tells when
// all have been delivered. Every load measured through the emulator's own delivery is bounded by it.
import type { DocumentReference, DocumentSnapshot } from "firebase-admin/firestore";
import { microsCeil } from "../../../functions/src/model/time";
import { withConcurrency } from "../../lib/concurrency";
import { NOOP_DONE, NOOP_EVENTS } from "../naive/src/paths";
import { sharedSizes } from "../options";
import { sleep } from "../pace";
import type { BenchContext } from "./context";
import { drainFunctionsQueue } from "./phase";

export interface CapacityResult {
  /** Events delivered, the marker's included. */
  events: number;
  /** How fast the events were written: above eventsPerSecond, or eventsPerSecond is only a lower bound. */
  writesPerSecond: number;
  /** From the first write's commit to the marker's event having run (the emulator's clock). */
  seconds: number;
  eventsPerSecond: number;
}

/** Writes in flight: enough to write several times faster than the emulator delivers. */
const WRITERS = 32;
/** Events that boot the no-op trigger's worker before anything is measured (docs/development.md). */
const WARM_EVENTS = 4;

export async function emulatorCapacity(ctx: BenchContext): Promise<CapacityResult> {
  await drainFunctionsQueue(ctx);
  await deliverNoops(ctx, "warm", WARM_EVENTS);
  return await deliverNoops(ctx, "measure", sharedSizes(ctx.options).capacityEvents);
}

async function deliverNoops(ctx: BenchContext, tag: string, count: number): Promise<CapacityResult> {
  const events = ctx.db.collection(NOOP_EVENTS);
  const id = (n: number | "marker") => `${ctx.runId}-${tag}-${n}`;
  const startedMs = Date.now();
  const writes = await withConcurrency(
    WRITERS,
    Array.from({ length: count }, (_, i) => () => events.doc(id(i)).create({ n: i })),
  );
  const writeSeconds = (Date.now() - startedMs) / 1000;
  await events.doc(id("marker")).create({ marker: true });
  const done = await appeared(ctx.db.collection(NOOP_DONE).doc(id("marker")), sharedSizes(ctx.options).settleTimeoutSeconds * 1000);
  const firstUs = Math.min(...writes.map((w) => microsCeil(w.writeTime)));
  const seconds = (microsCeil(done.createTime!) - firstUs) / 1e6;
  return { events: count + 1, writesPerSecond: count / writeSeconds, seconds, eventsPerSecond: (count + 1) / seconds };
}

async function appeared(ref: DocumentReference, timeoutMs: number): Promise<DocumentSnapshot> {
  const started = Date.now();
  for (;;) {
    const snap = await ref.get();
    if (snap.exists) return snap;
    if (Date.now() - started > timeoutMs) throw new Error(`the no-op trigger did not run the marker's event within ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}
