// Workload 1: one counter per rollup, increments at a steady rate, shard writes made as incrementCounter
// makes them. The rollups run one after the other on the same emulator, so neither competes with the
// other's events for the functions emulator's workers. Also returns the plot's time series.
import { createBenchCounter, incrementShard, ROLLUPS, type Rollup } from "../counters";
import { paced } from "../pace";
import type { PhaseResult } from "../recorder";
import { counterIdFor, type BenchContext } from "./context";
import { emulatorPhase, type PhaseRun } from "./phase";

/** Requests in flight at most: far above what 50/s needs, low enough not to swamp a stalled emulator. */
const MAX_IN_FLIGHT = 32;

export interface TimelinePoint {
  rollup: Rollup;
  series: "true sum (Σ shards)" | "total on the parent";
  seconds: number;
  value: number;
}

export async function sustained(ctx: BenchContext): Promise<{ results: PhaseResult[]; timeline: TimelinePoint[] }> {
  const { sustainedRate: rate, sustainedSeconds: seconds, sustainedShards: shards } = ctx.options;
  const results: PhaseResult[] = [];
  const timeline: TimelinePoint[] = [];
  for (const rollup of ROLLUPS) {
    const counter = await createBenchCounter(ctx.db, rollup, counterIdFor(ctx, "sustained", rollup), shards);
    const run = await emulatorPhase(ctx, "1 sustained", [counter], async () => ({
      writes: await paced(rate * seconds, rate, MAX_IN_FLIGHT, () => incrementShard(ctx.db, counter)),
    }));
    results.push(run.result);
    timeline.push(...timelineOf(rollup, run, counter.id));
  }
  return { results, timeline };
}

/** The plot's two step lines for one rollup, in seconds since the phase's writer started. */
function timelineOf(rollup: Rollup, run: PhaseRun, counterId: string): TimelinePoint[] {
  const originUs = run.startedAtMs * 1000;
  const at = (us: number) => Math.round((us - originUs) / 1000) / 1000;
  const truth: { seconds: number; value: number }[] = [{ seconds: 0, value: 0 }];
  for (const write of [...run.writes].sort((a, b) => a.writtenAtUs - b.writtenAtUs)) {
    truth.push({ seconds: at(write.writtenAtUs), value: truth[truth.length - 1]!.value + write.delta });
  }
  const totals: { seconds: number; value: number }[] = [{ seconds: 0, value: 0 }];
  for (const state of run.states.get(counterId) ?? []) {
    if (state.atUs >= originUs) totals.push({ seconds: at(state.atUs), value: state.total });
  }
  // Both lines run to the same end (the last state seen), so the final step of each is visible.
  const end = Math.max(truth[truth.length - 1]!.seconds, totals[totals.length - 1]!.seconds);
  truth.push({ seconds: end, value: truth[truth.length - 1]!.value });
  totals.push({ seconds: end, value: totals[totals.length - 1]!.value });
  return [
    ...truth.map((p) => ({ rollup, series: "true sum (Σ shards)" as const, ...p })),
    ...totals.map((p) => ({ rollup, series: "total on the parent" as const, ...p })),
  ];
}
