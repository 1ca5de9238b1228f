// What a workload is: one room that owns everything of it. Its flags (every size, full and --quick), when
// it runs and under which delivery, its runner, the rows it adds to the shared tables (the main table, the
// cost tables), its own tables, its targets, and what fails the run. The list in index.ts is what run.ts,
// the report and the options iterate over, so adding a workload is its file, a line in that list and its
// section of docs/benchmark.md.
import type { TopLevelSpec } from "vega-lite";
import type { AllInRow } from "../allin";
import type { CostPhase } from "../costs";
import type { CallableOps } from "../callable";
import type { WrappedFunctions } from "../delivery/wrapped";
import type { PhaseResult } from "../recorder";
import type { BenchResults } from "../results";
import type { Target } from "../targets";
import type { Flag } from "../options";
import type { BenchContext } from "./context";
import type { Delivery } from "./phase";

/** A sized flag: `--<flag> <n>`, with its value in a full run and in --quick. */

/**
 * When a workload runs, in the run's order (run.ts): "first", before the warm-up (its functions reloads
 * would undo it); "emulator", under the emulator's own delivery; "production-like", with the benchmark
 * delivering events itself to the exported handlers in this process; "last", after those handlers are
 * gone (callables through the functions emulator, a project of its own).
 */
export type Stage = "first" | "emulator" | "production-like" | "last";

/** What a stage hands its workloads. */
export type On =
  | { stage: "first" | "last" }
  | { stage: "emulator"; delivery: Delivery }
  | { stage: "production-like"; delivery: Delivery; wrapped: WrappedFunctions };

/** How the shared targets (targets.ts: drift, a naive row's drift, lag p99) judge a workload's rows. */
export type Judged = "all" | "all but lag" | "none";

/** What the workload's targets are judged with besides its own result. */
export interface Judge {
  intervalMs: number;
}

/**
 * A workload: `P` is what one stage's run answers, `R` what results.json keeps (`collect` of its stages'
 * answers: the one answer by default).
 */
export interface Workload<P = unknown, R = P> {
  /** Its key in results.json's `workloads`. */
  id: string;
  flags: readonly Flag[];
  /** The stages it runs in, each once (workloads 1 and 2 run under both deliveries). */
  stages: readonly Stage[];
  /** Runs it in one stage, announcing each step on the way (ctx.step). */
  run(ctx: BenchContext, on: On): Promise<P>;
  collect?(parts: P[]): R;
  /** Its rows of the main table, the cost tables and the run's drift check. */
  phases?(r: R): PhaseResult[];
  /** Rows of the main table that are no phase (workload 4's naive callable, measured in its own table). */
  tableRows?(r: R): string[][];
  /** How the shared targets judge its rows (default "all"). */
  judged?: Judged;
  /** The rows it counts operations for: its phases by default. */
  costPhases?(r: R): CostPhase[];
  /** Calls it counted itself, by a phase's counter-id prefix (workload 6's setMember calls). */
  callables?(r: R): Map<string, CallableOps>;
  /** Its section of the report, after the main table (without the blank line after it). */
  section?(r: R, results: BenchResults): string[];
  /** Lines after the cost tables (each block ending in a blank line). */
  afterCosts?(r: R, results: BenchResults): string[];
  /** Its targets, judged on its result. */
  targets?(r: R, judge: Judge): Target[];
  /** Its cost targets, judged on the all-in table. */
  costTargets?(rows: readonly AllInRow[]): Target[];
  /** What fails the run (exit 1): one line each; none when it did what it must. */
  failures?(r: R): string[];
  /** Its plot, beside the results page. */
  plot?(r: R, results: BenchResults): Plot;
}

/** A plot of the results page: its file, its alt text, and its Vega-Lite spec (plot.ts renders it). */
export interface Plot {
  file: string;
  alt: string;
  spec: TopLevelSpec;
}

/** Any workload of the list (its result types are its own: methods take their parameters bivariantly). */
export type AnyWorkload = Workload<unknown, unknown>;

/** The delivery a stage hands over; throws in a stage without one. */
export function deliveryOf(on: On): Delivery {
  if (on.stage !== "emulator" && on.stage !== "production-like") throw new Error(`the ${on.stage} stage has no delivery`);
  return on.delivery;
}

/** The handlers in this process, in the production-like stage. */
export function wrappedOf(on: On): WrappedFunctions {
  if (on.stage !== "production-like") throw new Error(`the ${on.stage} stage has no wrapped functions`);
  return on.wrapped;
}
