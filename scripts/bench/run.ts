// The benchmark itself, run by main.ts inside `firebase emulators:exec` (the emulator hosts and the
// project come from the environment it sets). Workloads run one after another; each measures both rollups.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { initializeApp } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import type { Rollup } from "./counters";
import { BENCH_PROJECT, emulatorHost, loadFunctionParams, rollupIntervalMs } from "./env";
import type { BenchOptions } from "./options";
import { renderPng, sustainedSpec } from "./plot";
import { emulatorLogPath, opsOf, perMillion } from "./ops";
import {
  costTable,
  endToEndTable,
  machine,
  machineLine,
  pricesLine,
  resultsTable,
  statesNote,
  targets,
  targetsTable,
  type BenchResults,
  type CostRow,
} from "./report";
import { sleep } from "./pace";
import { OPTIONS_ENV, say } from "./say";
import { burst } from "./workloads/burst";
import type { BenchContext } from "./workloads/context";
import { endToEnd } from "./workloads/endToEnd";
import { drainFunctionsQueue } from "./workloads/phase";
import { redelivery } from "./workloads/redelivery";
import { sparse } from "./workloads/sparse";
import { sustained } from "./workloads/sustained";
import { warmUp } from "./workloads/warmup";

function optionsFromEnv(): BenchOptions {
  const json = process.env[OPTIONS_ENV];
  if (json === undefined) throw new Error(`${OPTIONS_ENV} is not set: run the benchmark with \`npm run bench\``);
  return JSON.parse(json) as BenchOptions;
}

async function step<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  say(`… ${label}`);
  const result = await work();
  say(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

async function main(): Promise<number> {
  const options = optionsFromEnv();
  emulatorHost("FIRESTORE_EMULATOR_HOST");
  if (process.env.GCLOUD_PROJECT !== BENCH_PROJECT) {
    throw new Error(`expected to run inside the emulators for ${BENCH_PROJECT}, got GCLOUD_PROJECT=${process.env.GCLOUD_PROJECT}`);
  }
  loadFunctionParams();
  const startedAt = new Date();
  const ctx: BenchContext = {
    // A named app: the default app belongs to the wrapped functions of workload 3 (another project).
    db: getFirestore(initializeApp({ projectId: BENCH_PROJECT }, "bench")),
    options,
    intervalMs: rollupIntervalMs(),
    runId: startedAt.getTime().toString(36),
  };
  const host = machine();
  say(`bench: ${options.quick ? "quick" : "full"} run on ${machineLine(host)}; rollup interval ${ctx.intervalMs} ms`);

  await step(`warm-up (${options.warmupSeconds} s of writes per rollup, then a burst)`, () => warmUp(ctx));
  const w0 = await step(
    `workload 0, sparse: ${options.sparseCounters} idle counters, ${options.sparseIncrements} increments each, ${options.sparseGapMs} ms apart, ours then naive`,
    () => sparse(ctx),
  );
  const w1 = await step(
    `workload 1, sustained: ${options.sustainedRate}/s for ${options.sustainedSeconds} s on one counter of ${options.sustainedShards} shards, ours then naive`,
    () => sustained(ctx),
  );
  const w2 = await step(
    `workload 2, burst: ${options.burstIncrements} increments over ${options.burstCounters} counters, ${options.burstConcurrency} in flight, ours then naive`,
    () => burst(ctx),
  );
  const w3 = await step(
    `workload 3, redelivery: ${options.redeliveryIncrements} increments over ${options.redeliveryCounters} counters, every event delivered twice, shuffled`,
    () => redelivery(ctx),
  );
  const w4 = await step(
    `workload 4, end to end: ${options.e2eCalls} calls per path, ${options.e2eConcurrency} in flight`,
    () => endToEnd(ctx),
  );

  const phases = [...w0, ...w1.results, ...w2, ...w3, w4.rollup];
  const targetList = targets([...w0, ...w1.results, ...w2, ...w3], w4, ctx.intervalMs);
  // Workload 4's naive side is the naive callable; its increments ran the naive trigger like any other.
  const naiveE2e = { workload: w4.rollup.workload, rollup: "naive" as const, increments: w4.naiveIncrements };
  const costs = await step("operations per workload, from the functions' \"rollup ops\" log lines", () =>
    costRows(ctx, [...phases, naiveE2e]),
  );
  const finishedAt = new Date();
  const results: BenchResults = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    seconds: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    machine: host,
    options,
    intervalMs: ctx.intervalMs,
    phases,
    endToEnd: w4,
    targets: targetList,
    sustainedTimeline: w1.timeline,
    costs,
  };
  mkdirSync(options.outDir, { recursive: true });
  const jsonPath = join(options.outDir, "results.json");
  writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
  const writesOf = (rollup: Rollup) => w1.results.find((r) => r.rollup === rollup)?.parentWrites ?? 0;
  const png = await renderPng(
    sustainedSpec(w1.timeline, {
      rate: options.sustainedRate,
      seconds: options.sustainedSeconds,
      intervalMs: ctx.intervalMs,
      parentWrites: { ours: writesOf("ours"), naive: writesOf("naive") },
    }),
  );
  const pngPaths = [join(options.outDir, "bench-sustained.png"), ...(options.plotCopy === undefined ? [] : [options.plotCopy])];
  for (const path of pngPaths) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, png);
  }

  say("");
  say(resultsTable(phases));
  say("");
  say(statesNote(phases));
  for (const r of w3.filter((p) => p.retries > 0)) say(`Workload 3, ${r.rollup}: ${r.retries} deliveries threw and were delivered again.`);
  for (const p of w4.paths.filter((p) => p.failures > 0)) say(`Workload 4, ${p.path}: ${p.failures} calls failed, first: ${p.firstError}`);
  say("");
  say(`Workload 4, latency per call at ${w4.concurrency} in flight:`);
  say("");
  say(endToEndTable(w4));
  say("");
  say("Operations and cost per 1,000,000 increments (the rollup side; counted from the functions' logs):");
  say("");
  say(costTable(costs));
  say("");
  say(pricesLine());
  say("");
  say(targetsTable(targetList));
  say("");
  say(`results: ${jsonPath}; plot: ${pngPaths.join(", ")}; ${results.seconds.toFixed(0)} s in all`);

  const oursDrift = phases.filter((p) => p.rollup === "ours" && p.drift !== 0);
  if (oursDrift.length > 0) {
    say(`FAIL: our rollup's total is not the shard sum in ${oursDrift.map((p) => p.workload).join(", ")}`);
    return 1;
  }
  return 0;
}

/** Each phase's counters have ids `<workload>-<rollup>-<runId>-<n>` (context.ts): sum their ops lines. */
const WORKLOAD_KEYS: Record<string, string> = {
  "0 sparse": "sparse",
  "1 sustained": "sustained",
  "2 burst": "burst",
  "3 redelivery": "redelivery",
  "4 end to end": "e2e",
};

async function costRows(ctx: BenchContext, phases: readonly { workload: string; rollup: Rollup; increments: number }[]): Promise<CostRow[]> {
  // Every event queued so far has run once the queue is drained; give the last log lines time to arrive.
  await drainFunctionsQueue(ctx);
  await sleep(2000);
  const logPath = emulatorLogPath(ctx.options.outDir);
  return phases.map((p) => {
    const prefix = `${WORKLOAD_KEYS[p.workload] ?? p.workload}-${p.rollup}-${ctx.runId}-`;
    return { workload: p.workload, rollup: p.rollup, increments: p.increments, perMillion: perMillion(opsOf(logPath, prefix), p.increments) };
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
