// A measured phase, and the two ways its events reach the rollups (a Delivery): the emulators' own
// triggers here (watch the parents, write, wait for the rollup to settle, measure: recorder.ts), or the
// benchmark's production-like delivery (delivery/direct.ts, productionLikeDelivery). Also: making sure the functions
// emulator's queue is empty before a phase starts, so a phase never pays for the events of the one before.
import { createBenchCounter, incrementShard, readParent, type Counter, type ParentState, type Rollup, type ShardWriteRecord } from "../counters";
import { callableRead } from "../callable";
import { baselineOf, measurePhase, settle, watchParents, type DeliveryLabel, type PhaseResult } from "../recorder";
import { sharedSizes } from "../options";
import { sleep } from "../pace";
import { createBenchCounters, type BenchContext } from "./context";

export interface PhaseRun {
  result: PhaseResult;
  writes: ShardWriteRecord[];
  /** Every recorded parent state, per counter. */
  states: Map<string, ParentState[]>;
  startedAtMs: number;
}

/** What a phase's writer did: the writes with known commit times, and increments without (callables). */
export interface DriveResult {
  writes: ShardWriteRecord[];
  untimed?: ReadonlyMap<string, number>;
}

/** One increment as incrementCounter makes it, on a counter of the phase; resolves with its commit. */
export type Increment = (counter: Counter) => Promise<ShardWriteRecord>;

/** How a phase's increments are made and how their events reach the rollups. */
export interface Delivery {
  label: DeliveryLabel;
  /** A one-line statement of the delivery, for the run's log. */
  description: string;
  /** Creates the phase's counters where this delivery's events come from (`key` names the phase; ours may be windowed). */
  createCounters(key: string, rollup: Rollup, count: number, shards: number, options?: { windowed?: boolean }): Promise<Counter[]>;
  /** Runs `drive` with this delivery's increment, lets every event reach the rollup, measures. */
  run(workload: string, counters: readonly Counter[], drive: (increment: Increment) => Promise<DriveResult>): Promise<PhaseRun>;
}

/** The functions emulator's own delivery: writes on the project its triggers serve. */
export function emulatorDelivery(ctx: BenchContext): Delivery {
  return {
    label: "emulator",
    description: "the emulator's own delivery (one event at a time, across every trigger)",
    createCounters: (key, rollup, count, shards, options) => createBenchCounters(ctx, key, rollup, count, shards, options),
    run: (workload, counters, drive) =>
      emulatorPhase(ctx, workload, counters, () =>
        drive(async (counter) => {
          callableRead(counter);
          return incrementShard(ctx.db, counter);
        }),
      ),
  };
}

export async function emulatorPhase(
  ctx: BenchContext,
  workload: string,
  counters: readonly Counter[],
  drive: () => Promise<DriveResult>,
  reportThroughput = true,
): Promise<PhaseRun> {
  const rollup = counters[0]!.rollup;
  await drainFunctionsQueue(ctx);
  const watch = await watchParents(counters);
  try {
    const baselineWrites = await baselineOf(counters);
    const startedAtMs = Date.now();
    const { writes, untimed } = await drive();
    const loadSeconds = (Date.now() - startedAtMs) / 1000;
    // Counters are new: the true sum is what this phase added.
    const truth = new Map(counters.map((c) => [c.id, untimed?.get(c.id) ?? 0]));
    for (const w of writes) truth.set(w.counterId, truth.get(w.counterId)! + w.delta);
    const { exact } = await settle(counters, watch, truth, {
      intervalMs: ctx.intervalMs,
      timeoutMs: sharedSizes(ctx.options).settleTimeoutSeconds * 1000,
    });
    const result = await measurePhase({
      workload,
      rollup,
      delivery: "emulator",
      counters,
      writes,
      untimed,
      watch,
      baselineWrites,
      loadSeconds,
      reportThroughput,
      settledExactly: exact,
    });
    return { result, writes, states: new Map(counters.map((c) => [c.id, watch.states(c.id)])), startedAtMs };
  } finally {
    watch.stop();
  }
}

let probe: Counter | undefined;

/** A probe event still not run after this long is written again (the emulator may have dropped it). */
const PROBE_PATIENCE_MS = 20_000;
const PROBE_ATTEMPTS = 6;

/**
 * The functions emulator runs events from one FIFO queue (at most FUNCTIONS_EMULATOR_PARALLEL at once).
 * Writing a naive probe counter and waiting for its total to move proves every event queued before it
 * has been started; a further interval lets rollups that were waiting for their slot finish.
 */
export async function drainFunctionsQueue(ctx: BenchContext): Promise<void> {
  probe ??= await createBenchCounter(ctx.app, "naive", `probe-${ctx.runId}`, 1);
  for (let attempt = 0; attempt < PROBE_ATTEMPTS; attempt++) {
    const before = (await readParent(probe)).total;
    await incrementShard(ctx.db, probe);
    const started = Date.now();
    while (Date.now() - started < PROBE_PATIENCE_MS) {
      if ((await readParent(probe)).total > before) {
        await sleep(ctx.intervalMs + 200);
        return;
      }
      await sleep(100);
    }
  }
  throw new Error(`the functions emulator ran none of ${PROBE_ATTEMPTS} probe events, ${PROBE_PATIENCE_MS / 1000} s each`);
}
