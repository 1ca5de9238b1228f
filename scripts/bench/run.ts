// The benchmark itself, run by main.ts inside `firebase emulators:exec` (the emulator hosts and the
// project come from the environment it sets). The workloads (workloads/index.ts) run one after another,
// each in its stages: "first" (before the warm-up), then the emulator's delivery capacity, "emulator",
// "production-like" (the handlers in this process: delivery/wrapped.ts) and "last". Then the operations
// each phase cost, the results (results.json, the page, the plots) and the report.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { initializeApp } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import { callableOpsOf, type CallableOps } from "./callable";
import { costRow, type CostRow } from "./costs";
import { productionLikeDelivery } from "./delivery/direct";
import { wrappedFunctions } from "./delivery/wrapped";
import { BENCH_PROJECT, emulatorHost, loadFunctionParams, rollupIntervalMs } from "./env";
import { REPO_ROOT } from "../lib/firebase-cli";
import { sharedSizes, type BenchOptions } from "./options";
import { emulatorLogPath, opsByOutcome, opsOf } from "./ops";
import { writeResultsPage, type RenderedPlot } from "./page";
import { renderPng } from "./plot";
import { rollupSize, type InstanceSize } from "./product";
import { machineLine, renderReport } from "./report";
import { machine, type BenchResults } from "./results";
import { sleep } from "./pace";
import { OPTIONS_ENV, say } from "./say";
import { phasesOf, ran, selected, targetsOf, WORKLOADS } from "./workloads";
import { emulatorCapacity } from "./workloads/capacity";
import { step, type BenchContext } from "./workloads/context";
import { drainFunctionsQueue, emulatorDelivery } from "./workloads/phase";
import { warmUp } from "./workloads/warmup";
import type { CostPhase } from "./costs";
import type { On } from "./workloads/workload";

function optionsFromEnv(): BenchOptions {
  const json = process.env[OPTIONS_ENV];
  if (json === undefined) throw new Error(`${OPTIONS_ENV} is not set: run the benchmark with \`npm run bench\``);
  return JSON.parse(json) as BenchOptions;
}

async function main(): Promise<number> {
  const options = optionsFromEnv();
  emulatorHost("FIRESTORE_EMULATOR_HOST");
  if (process.env.GCLOUD_PROJECT !== BENCH_PROJECT) {
    throw new Error(`expected to run inside the emulators for ${BENCH_PROJECT}, got GCLOUD_PROJECT=${process.env.GCLOUD_PROJECT}`);
  }
  loadFunctionParams();
  const startedAt = new Date();
  // A named app: the default app belongs to the wrapped functions (another project, delivery/wrapped.ts).
  const app = initializeApp({ projectId: BENCH_PROJECT }, "bench");
  const ctx: BenchContext = { app, db: getFirestore(app), options, intervalMs: rollupIntervalMs(), runId: startedAt.getTime().toString(36) };
  const shared = sharedSizes(options);
  const host = machine();
  say(`bench: ${options.quick ? "quick" : "full"} run${options.only === undefined ? "" : ` of ${options.only.join(", ")} only`} on ${machineLine(host)}; rollup interval ${ctx.intervalMs} ms`);

  // Each workload's answer per stage it ran in, collected once all have run.
  const parts = new Map<string, unknown[]>();
  const stage = async (on: On) => {
    for (const w of selected(options.only).filter((w) => w.stages.includes(on.stage))) parts.set(w.id, [...(parts.get(w.id) ?? []), await w.run(ctx, on)]);
  };
  // First: its cold samples restart every functions worker, which would undo the warm-up.
  await stage({ stage: "first" });
  await step(`warm-up (${shared.warmupSeconds} s of writes per rollup, then a burst)`, () => warmUp(ctx));
  const capacity = await step(`the emulator's delivery capacity: ${shared.capacityEvents} events to a no-op trigger`, () => emulatorCapacity(ctx));
  say(`  ${capacity.eventsPerSecond.toFixed(0)} events/s`);
  await stage({ stage: "emulator", delivery: emulatorDelivery(ctx) });
  const wrapped = wrappedFunctions();
  let productionLike: string;
  try {
    const delivery = productionLikeDelivery(ctx, wrapped);
    productionLike = delivery.description;
    say(productionLike);
    await stage({ stage: "production-like", delivery, wrapped });
  } finally {
    // Restores the environment firebase-functions-test changed, before the callables of the last stage.
    wrapped.cleanup();
  }
  await stage({ stage: "last" });
  const workloads: Record<string, unknown> = {};
  for (const w of WORKLOADS) {
    const answers = parts.get(w.id);
    if (answers !== undefined) workloads[w.id] = w.collect === undefined ? answers[0] : w.collect(answers);
  }

  const size = rollupSize();
  const costs = await step("operations per workload, from the functions' \"rollup ops\" log lines", () => costRows(ctx, size, workloads));
  const finishedAt = new Date();
  const phases = phasesOf(workloads);
  const results: BenchResults = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    seconds: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    machine: host,
    options,
    intervalMs: ctx.intervalMs,
    rollupSize: size,
    capacity,
    productionLike,
    phases,
    workloads,
    costs,
    targets: targetsOf(workloads, costs, ctx.intervalMs),
  };
  mkdirSync(options.outDir, { recursive: true });
  const jsonPath = join(options.outDir, "results.json");
  writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
  // The page and the plots go next to results.json; only --publish replaces the committed copies in docs/
  // (npm test's --quick run never does).
  const plots: RenderedPlot[] = [];
  for (const { workload, result } of ran(workloads)) {
    const plot = workload.plot?.(result, results);
    if (plot !== undefined) plots.push({ file: plot.file, alt: plot.alt, png: await renderPng(plot.spec) });
  }
  const pages = [writeResultsPage(options.outDir, results, plots), ...(options.publish ? [writeResultsPage(join(REPO_ROOT, "docs"), results, plots)] : [])];

  say("");
  say(renderReport(results, `results: ${jsonPath}; pages (with the plot beside them): ${pages.join(", ")}`));

  const oursDrift = phases.filter((p) => p.rollup === "ours" && p.drift !== 0);
  const failures = [
    ...(oursDrift.length === 0 ? [] : [`our rollup's total is not the shard sum in ${oursDrift.map((p) => `${p.workload} (${p.delivery})`).join(", ")}`]),
    ...ran(workloads).flatMap(({ workload, result }) => workload.failures?.(result) ?? []),
  ];
  for (const failure of failures) say(`FAIL: ${failure}`);
  return failures.length === 0 ? 0 : 1;
}

/**
 * Sums each phase's "rollup ops" lines, found by the prefix its counter ids share (workloads/context.ts),
 * and the calls counted on its counters (callable.ts), or those its workload counted itself.
 */
async function costRows(ctx: BenchContext, size: InstanceSize, workloads: Record<string, unknown>): Promise<CostRow[]> {
  const phases: CostPhase[] = ran(workloads).flatMap(({ workload, result }) => workload.costPhases?.(result) ?? workload.phases?.(result) ?? []);
  const callables = new Map<string, CallableOps>(ran(workloads).flatMap(({ workload, result }) => [...(workload.callables?.(result) ?? [])]));
  // Every event queued so far has run once the queue is drained; give the last log lines time to arrive.
  await drainFunctionsQueue(ctx);
  await sleep(2000);
  const logPath = emulatorLogPath(ctx.options.outDir);
  return phases.map((p) => costRow(p, opsOf(logPath, p.opsPrefix), opsByOutcome(logPath, p.opsPrefix), callables.get(p.opsPrefix) ?? callableOpsOf(p.opsPrefix), size));
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
