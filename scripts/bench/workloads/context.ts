// What every workload gets: the admin SDK on the project the functions emulator serves, the options,
// the rollup interval, and a run id that keeps this run's counter ids apart from earlier runs'.
import type { Firestore } from "firebase-admin/firestore";
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
