// What every workload gets: the admin SDK on the project the functions emulator serves, the options,
// the rollup interval, and a run id that keeps this run's counter ids apart from earlier runs'.
import type { Firestore } from "firebase-admin/firestore";
import { withConcurrency } from "../../../functions/test/helpers/client";
import { createBenchCounter, type Counter, type Rollup } from "../counters";
import type { BenchOptions } from "../options";

export interface BenchContext {
  db: Firestore;
  options: BenchOptions;
  intervalMs: number;
  runId: string;
}

export function counterIdFor(ctx: BenchContext, workload: string, rollup: string, index = 0): string {
  return `${workload}-${rollup}-${ctx.runId}-${index}`;
}

/** Creates `count` counters of `shards` shards for one workload and rollup (ids from `first` on), 8 at a time. */
export function createBenchCounters(
  ctx: BenchContext,
  workload: string,
  rollup: Rollup,
  count: number,
  shards: number,
  first = 0,
): Promise<Counter[]> {
  return withConcurrency(
    8,
    Array.from({ length: count }, (_, i) => () => createBenchCounter(ctx.db, rollup, counterIdFor(ctx, workload, rollup, first + i), shards)),
  );
}
