// The workloads, in the order the report shows them (the main table's rows, their sections, the flags of
// --help): what run.ts runs (each in its stages: workload.ts), what the report and the options iterate
// over. A new workload is its file and a line here.
import { burst } from "./burst";
import { coldStart } from "./coldStart";
import { endToEnd } from "./endToEnd";
import { hot } from "./hot";
import { likes } from "./likes";
import { mirrors } from "./mirrored";
import { redelivery } from "./redelivery";
import { resets } from "./resets";
import { sparse } from "./sparse";
import { sustained } from "./sustained";
import { windows } from "./windows";
import { allFlags } from "../options";
import type { AnyWorkload } from "./workload";

export const WORKLOADS: readonly AnyWorkload[] = [sparse, sustained, burst, redelivery, mirrors, likes, coldStart, resets, hot, windows, endToEnd];

/** Every sized flag of a run, in --help's order: the shared ones (options.ts) around the workloads'. */
export const FLAGS = allFlags(WORKLOADS.flatMap((w) => w.flags));
