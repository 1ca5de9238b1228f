// Workload 1: one counter per rollup, increments at a steady rate under a given delivery, shard writes
// made as incrementCounter makes them. The rollups run one after the other on the same emulator, so
// neither competes with the other's events. Also returns the plot's time series.
import { ROLLUPS, type Rollup } from "../counters";
import { paced } from "../pace";
import type { DeliveryLabel, PhaseResult } from "../recorder";
import type { BenchContext } from "./context";
import type { Delivery, PhaseRun } from "./phase";

/**
 * Increments in flight at most: a write (or a recorded one: three requests) takes about 10–30 ms here,
 * so 32 allow well over 300/s, and are few enough not to swamp a stalled emulator.
 */
const MAX_IN_FLIGHT = 32;

export interface TimelinePoint {
  rollup: Rollup;
  delivery: DeliveryLabel;
  series: "true sum (Σ shards)" | "total on the parent";
  seconds: number;
  value: number;
}

export async function sustained(
  ctx: BenchContext,
  delivery: Delivery,
  rate: number,
): Promise<{ results: PhaseResult[]; timeline: TimelinePoint[] }> {
  const { sustainedSeconds: seconds, sustainedShards: shards } = ctx.options;
  const results: PhaseResult[] = [];
  const timeline: TimelinePoint[] = [];
  for (const rollup of ROLLUPS) {
    const counter = (await delivery.createCounters(`sustained${rate}`, rollup, 1, shards))[0]!;
    const run = await delivery.run(`1 sustained ${rate}/s`, [counter], async (increment) => ({
      writes: await paced(rate * seconds, rate, MAX_IN_FLIGHT, () => increment(counter)),
    }));
    results.push(run.result);
    timeline.push(...timelineOf(rollup, delivery.label, run, counter.id));
  }
  return { results, timeline };
}

/** The plot's two step lines for one rollup, in seconds since the phase's writer started. */
function timelineOf(rollup: Rollup, delivery: DeliveryLabel, run: PhaseRun, counterId: string): TimelinePoint[] {
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
    ...truth.map((p) => ({ rollup, delivery, series: "true sum (Σ shards)" as const, ...p })),
    ...totals.map((p) => ({ rollup, delivery, series: "total on the parent" as const, ...p })),
  ];
}
