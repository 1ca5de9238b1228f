// Phases whose events the benchmark delivers itself to the exported handlers (wrapped.ts), measured as
// every other phase is (recorder.ts): the production-like Delivery of workloads 1 and 2, and the phase
// runner it shares with workload 3.
import type { Counter, ShardWriteRecord } from "../counters";
import { sharedSizes } from "../options";
import { seededRandom } from "../pace";
import { baselineOf, caughtUp, measurePhase, watchParents, type DeliveryLabel, type PhaseInput } from "../recorder";
import { createBenchCounters, type BenchContext } from "../workloads/context";
import type { Delivery, PhaseRun } from "../workloads/phase";
import { createDeliverer, EVENTARC_RETRY, type Deliverer, type DeliveryModel } from "./deliverer";
import { eventRecorder, type RecordedEvent } from "./events";
import type { WrappedFunctions } from "./wrapped";

/** What a direct phase's body did; the rest of the phase's row is measured around it. */
export type DirectBody = Pick<PhaseInput, "loadSeconds" | "lagOriginsUs" | "settleOriginUs"> & { writes: ShardWriteRecord[]; startedAtMs: number };

/**
 * Watches the parents, runs `body` (which records increments and hands events to `deliverer`), waits
 * until every delivery has returned and the listeners have seen the last parent state, and measures.
 * Nothing is pending then, so the final state is the settled one.
 */
export async function directPhase(
  workload: string,
  delivery: DeliveryLabel,
  counters: readonly Counter[],
  deliverer: Deliverer<RecordedEvent>,
  body: () => Promise<DirectBody>,
): Promise<PhaseRun> {
  const watch = await watchParents(counters);
  try {
    const baselineWrites = await baselineOf(counters);
    const { startedAtMs, ...measured } = await body();
    const deliveries = await deliverer.settled();
    await caughtUp(counters, watch);
    const result = await measurePhase({
      workload,
      rollup: counters[0]!.rollup,
      delivery,
      deliveries,
      counters,
      watch,
      baselineWrites,
      settledExactly: true,
      ...measured,
    });
    return { result, writes: measured.writes, states: new Map(counters.map((c) => [c.id, watch.states(c.id)])), startedAtMs };
  } finally {
    watch.stop();
  }
}

/** Seeds of the delivery's random draws, one per phase, so a run can be replayed. */
const FIRST_SEED = 20261124;

/**
 * Production-like delivery: the increments are recorded on WRAPPED_PROJECT (events.ts) and each event
 * arrives at the deliverer as soon as its write is recorded, while the writer goes on.
 */
export function productionLikeDelivery(ctx: BenchContext, wrapped: WrappedFunctions): Delivery {
  const o = sharedSizes(ctx.options);
  const model: DeliveryModel = {
    maxDelayMs: o.deliveryDelayMs,
    duplicateFraction: o.deliveryDuplicatesPercent / 100,
    concurrency: o.deliveryConcurrency,
  };
  let seed = FIRST_SEED;
  return {
    label: "production-like",
    description: describeModel(o.deliveryInstances, model),
    createCounters: (key, rollup, count, shards, options) => createBenchCounters(ctx, `${key}-prod`, rollup, count, shards, { ...options, app: wrapped.app }),
    async run(workload, counters, drive) {
      const deliverer = createDeliverer(wrapped.instances(counters[0]!.rollup, o.deliveryInstances), model, seededRandom(seed++));
      const record = await eventRecorder(counters);
      return await directPhase(workload, "production-like", counters, deliverer, async () => {
        const startedAtMs = Date.now();
        const { writes } = await drive(async (counter) => {
          const event = await record(counter);
          deliverer.arrive(event);
          return event.record;
        });
        return { writes, loadSeconds: (Date.now() - startedAtMs) / 1000, startedAtMs };
      });
    },
  };
}

export function describeModel(instances: number, model: DeliveryModel): string {
  const retry = EVENTARC_RETRY;
  return (
    `production-like delivery: this process delivers each recorded event to the exported handler, ` +
    `${instances} instance(s) × ${model.concurrency} concurrent (each instance its own module and memory), ` +
    `each delivery a uniform random 0–${model.maxDelayMs} ms after its write, ` +
    `${+(model.duplicateFraction * 100).toFixed(2)}% of events delivered twice, ` +
    `a delivery that throws retried after ${retry.firstBackoffMs / 1000} s doubling to ${retry.maxBackoffMs / 1000} s`
  );
}
