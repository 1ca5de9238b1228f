// Workload 3: at-least-once delivery. The increments are made first, each recorded with its real
// before/after snapshots; then every event is delivered twice, all in one shuffled order, straight to the
// exported handlers (firebase-functions-test), on a project the emulator's own triggers do not serve.
// A delivery that throws is delivered again, as the platform retries a failed event.
import { randomUUID } from "node:crypto";
import { FieldValue, getFirestore, type DocumentSnapshot, type Firestore, type Timestamp } from "firebase-admin/firestore";
import functionsTest from "firebase-functions-test";
import type { CloudEvent, CloudFunction } from "firebase-functions/v2";
import { getApps, initializeApp } from "firebase-admin/app";
import { pickShard } from "../../../functions/src/counters/shards";
import { rollupTotal } from "../../../functions/src/triggers";
import { naiveRollupTotal } from "../naive/src/naive";
import { withConcurrency } from "../../../functions/test/helpers/client";
import { createBenchCounter, ROLLUPS, type Counter, type Rollup, type ShardWriteRecord } from "../counters";
import { microsCeil } from "../../../functions/src/counters/plan";
import { WRAPPED_PROJECT } from "../env";
import { shuffled } from "../pace";
import { baselineOf, measurePhase, watchParents, type PhaseResult } from "../recorder";
import { counterIdFor, type BenchContext } from "./context";

/** Deliveries of one event before the benchmark gives up on it (the platform retries for 24 h). */
const MAX_ATTEMPTS = 10;
const SHUFFLE_SEED = 20261122;

interface RecordedEvent {
  record: ShardWriteRecord;
  before: DocumentSnapshot;
  after: DocumentSnapshot;
  eventId: string;
  time: string;
}

/** A wrapped trigger: takes the parts of the CloudEvent the handlers read. */
type Deliver = (event: RecordedEvent) => Promise<void>;

export interface RedeliveryResult extends PhaseResult {
  duplicates: number;
  /** Deliveries that threw and were delivered again. */
  retries: number;
}

export async function redelivery(ctx: BenchContext): Promise<RedeliveryResult[]> {
  const fft = functionsTest({ projectId: WRAPPED_PROJECT });
  try {
    // The handlers run in this process and use the admin SDK's default app: make it WRAPPED_PROJECT's.
    // (functions/src/index.ts would initialize it from GCLOUD_PROJECT, which emulators:exec set to the
    // project the emulator's triggers serve; triggers.ts exports the very same rollupTotal without that.)
    const app = getApps().find((a) => a.name === "[DEFAULT]") ?? initializeApp({ projectId: WRAPPED_PROJECT });
    if (app.options.projectId !== WRAPPED_PROJECT) throw new Error(`the default app is for ${app.options.projectId}, not ${WRAPPED_PROJECT}`);
    const db = getFirestore(app);
    const wrap = <T extends CloudEvent<unknown>>(fn: CloudFunction<T>): Deliver => {
      const wrapped = fft.wrap(fn);
      return async (event) => {
        // firebase-functions-test types the result as `any`; the handlers return nothing we use.
        await (wrapped({
          data: fft.makeChange(event.before, event.after),
          params: { counterId: event.record.counterId, shardId: String(event.record.shard) },
          id: event.eventId,
          time: event.time,
        }) as Promise<unknown>);
      };
    };
    const handlers: Record<Rollup, Deliver> = {
      ours: wrap(rollupTotal),
      naive: wrap(naiveRollupTotal),
    };
    const results: RedeliveryResult[] = [];
    for (const rollup of ROLLUPS) results.push(await redeliveryPhase(ctx, db, rollup, handlers[rollup]));
    return results;
  } finally {
    fft.cleanup();
  }
}

async function redeliveryPhase(ctx: BenchContext, db: Firestore, rollup: Rollup, deliver: Deliver): Promise<RedeliveryResult> {
  const { redeliveryIncrements: increments, redeliveryCounters: count, redeliveryConcurrency: concurrency } = ctx.options;
  const counters: Counter[] = await withConcurrency(
    8,
    Array.from({ length: count }, (_, i) => () => createBenchCounter(db, rollup, counterIdFor(ctx, "redelivery", rollup, i), 10)),
  );
  const events = await withConcurrency(
    concurrency,
    Array.from({ length: increments }, (_, i) => () => recordIncrement(counters[i % count]!)),
  );

  const watch = await watchParents(counters);
  try {
    const baselineWrites = await baselineOf(counters);
    const firstDeliveryUs: number[] = new Array<number>(events.length);
    let retries = 0;
    const deliveries = shuffled([...events.keys(), ...events.keys()], SHUFFLE_SEED);
    const started = Date.now();
    await withConcurrency(
      concurrency,
      deliveries.map((index) => async () => {
        firstDeliveryUs[index] ??= Date.now() * 1000;
        for (let attempt = 1; ; attempt++) {
          try {
            await deliver(events[index]!);
            return;
          } catch (error) {
            if (attempt >= MAX_ATTEMPTS) throw error;
            retries++;
          }
        }
      }),
    );
    const loadSeconds = (Date.now() - started) / 1000;
    // Every handler has returned: nothing is pending, so the final state is the settled one.
    const result = await measurePhase({
      workload: "3 redelivery",
      rollup,
      counters,
      writes: events.map((e) => e.record),
      watch,
      baselineWrites,
      loadSeconds,
      settledExactly: true,
      lagOriginsUs: firstDeliveryUs,
      settleOriginUs: started * 1000,
    });
    return { ...result, duplicates: events.length, retries };
  } finally {
    watch.stop();
  }
}

/** Writes on one shard are made one at a time, so each event's before/after is exactly its own write. */
const shardQueues = new Map<string, Promise<unknown>>();

function recordIncrement(counter: Counter): Promise<RecordedEvent> {
  const shard = pickShard(counter.numShards);
  const ref = counter.shards.doc(String(shard));
  const task = async (): Promise<RecordedEvent> => {
    const before = await ref.get();
    const batch = ref.firestore.batch();
    batch.update(ref, { count: FieldValue.increment(1) });
    const [result] = await batch.commit();
    const after = await ref.get();
    if (after.updateTime?.isEqual(result!.writeTime) !== true) {
      throw new Error(`shard ${ref.path} was written by someone else during the benchmark`);
    }
    return {
      record: { counterId: counter.id, shard, delta: 1, writtenAtUs: microsCeil(result!.writeTime) },
      before,
      after,
      eventId: randomUUID(),
      time: rfc3339(result!.writeTime),
    };
  };
  const previous = shardQueues.get(ref.path) ?? Promise.resolve();
  const next = previous.then(task, task);
  shardQueues.set(ref.path, next);
  return next;
}

/** RFC 3339 with nanoseconds, as CloudEvents carry the event time. */
function rfc3339(ts: Timestamp): string {
  return `${new Date(ts.seconds * 1000).toISOString().slice(0, 19)}.${String(ts.nanoseconds).padStart(9, "0")}Z`;
}
