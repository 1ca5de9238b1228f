// One measured phase through the emulators' own triggers: watch the parents, write, wait for the rollup
// to settle, measure (recorder.ts). Also: making sure the functions emulator's queue is empty before a
// phase starts, so a phase never pays for the events of the one before.
import { createBenchCounter, incrementShard, readParent, type Counter, type ParentState, type ShardWriteRecord } from "../counters";
import { baselineOf, measurePhase, settle, watchParents, type PhaseResult } from "../recorder";
import { sleep } from "../pace";
import type { BenchContext } from "./context";

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
      timeoutMs: ctx.options.settleTimeoutSeconds * 1000,
    });
    const result = await measurePhase({
      workload,
      rollup,
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
  probe ??= await createBenchCounter(ctx.db, "naive", `probe-${ctx.runId}`, 1);
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
