// What a run found, as results.json keeps it: when and where it ran, its options, the emulator's delivery
// capacity, the main table's rows, each workload's own result (by its id), the cost rows and the targets.
// How the rows and the targets follow from the workloads' results is the list's (workloads/index.ts).
import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import type { CostRow } from "./costs";
import type { BenchOptions } from "./options";
import type { InstanceSize } from "./product";
import type { PhaseResult } from "./recorder";
import type { Target } from "./targets";
import type { CapacityResult } from "./workloads/capacity";

export interface Machine {
  cores: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  java: string;
  functionsEmulatorParallel: string;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  seconds: number;
  machine: Machine;
  options: BenchOptions;
  intervalMs: number;
  /** The instance size the cost tables price an instance-second at (rollupTotal's: product.ts). */
  rollupSize: InstanceSize;
  /** The emulator's delivery capacity: what every "emulator" row depends on. */
  capacity: CapacityResult;
  /** The production-like delivery's model, stated (delivery/direct.ts describeModel). */
  productionLike: string;
  /** The main table's rows: every workload's phases, in the list's order (phasesOf). */
  phases: PhaseResult[];
  /** Each workload's own result, by its id (workloads/index.ts). */
  workloads: Record<string, unknown>;
  /** Operations and list-price cost per 1,000,000 increments, per workload, delivery and rollup (ops.ts). */
  costs: CostRow[];
  targets: Target[];
}

export function machine(): Machine {
  let java = "unknown";
  try {
    // `java -version` prints to stderr; execFileSync returns stdout, so merge them.
    java = execFileSync("sh", ["-c", "java -version 2>&1"], { encoding: "utf8" }).split("\n")[0]!.trim();
  } catch {
    // Reported as unknown: the emulators would not have started without Java anyway.
  }
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    java,
    functionsEmulatorParallel: process.env.FUNCTIONS_EMULATOR_PARALLEL ?? "50 (firebase-tools default)",
  };
}
