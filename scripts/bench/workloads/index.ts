// The workloads, in the order the report shows them (the main table's rows, their sections, the flags of
// --help): what run.ts runs (each in its stages: workload.ts), what the report and the options iterate
// over, and how a run's rows and targets follow from their results (run.ts assembles a run with them, and
// the tests' builder a made-up one). A new workload is its file and a line here.
import { burst } from "./burst";
import { coldStart } from "./coldStart";
import { documents } from "./documents";
import { endToEnd } from "./endToEnd";
import { hot } from "./hot";
import { leaderboard } from "./leaderboard";
import { likes } from "./likes";
import { mirrors } from "./mirrored";
import { redelivery } from "./redelivery";
import { resets } from "./resets";
import { sparse } from "./sparse";
import { sustained } from "./sustained";
import { windows } from "./windows";
import { allInRows } from "../allin";
import type { CostRow } from "../costs";
import { allFlags } from "../options";
import type { PhaseResult } from "../recorder";
import { onlyCommitsWritten, sharedTargets, type Target } from "../targets";
import type { AnyWorkload } from "./workload";

export const WORKLOADS: readonly AnyWorkload[] = [sparse, sustained, burst, redelivery, mirrors, likes, coldStart, resets, hot, windows, documents, leaderboard, endToEnd];

/** The workloads a run runs: every one, or those `--only` names. */
export function selected(only: readonly string[] | undefined): readonly AnyWorkload[] {
  return only === undefined ? WORKLOADS : WORKLOADS.filter((w) => only.includes(w.id));
}

/** Every sized flag of a run, in --help's order: the shared ones (options.ts) around the workloads'. */
export const FLAGS = allFlags(WORKLOADS.flatMap((w) => w.flags));

/** The workloads of the list that have a result in `workloads`, each with it, in the list's order. */
export function ran(workloads: Record<string, unknown>): { workload: AnyWorkload; result: unknown }[] {
  return WORKLOADS.filter((w) => w.id in workloads).map((workload) => ({ workload, result: workloads[workload.id] }));
}

/** The main table's rows: every workload's phases, in the list's order. */
export function phasesOf(workloads: Record<string, unknown>): PhaseResult[] {
  return ran(workloads).flatMap(({ workload, result }) => workload.phases?.(result) ?? []);
}

/**
 * Every target: each workload's own, in the list's order; then those of every workload's rows (drift, a
 * naive row's drift, lag p99: targets.ts), on the rows each workload has them judge; then the cost targets,
 * judged on the all-in table of `costs`.
 */
export function targetsOf(workloads: Record<string, unknown>, costs: readonly CostRow[], intervalMs: number): Target[] {
  const all = ran(workloads);
  const rows = (judged: (j: string) => boolean) =>
    all.filter(({ workload }) => judged(workload.judged ?? "all")).flatMap(({ workload, result }) => workload.phases?.(result) ?? []);
  const allIn = allInRows(costs);
  return [
    onlyCommitsWritten(costs),
    ...all.flatMap(({ workload, result }) => workload.targets?.(result, { intervalMs }) ?? []),
    ...sharedTargets(
      rows((j) => j !== "none"),
      rows((j) => j === "all"),
      intervalMs,
    ),
    ...all.flatMap(({ workload }) => workload.costTargets?.(allIn) ?? []),
  ];
}
