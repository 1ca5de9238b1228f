// The benchmark itself, run by main.ts inside `firebase emulators:exec` (the emulator hosts and the
// project come from the environment it sets). Workloads run one after another; each measures both rollups.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { initializeApp } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import { allInRows, allInTargets } from "./allin";
import { callableOpsOf, type CallableOps } from "./callable";
import { productionLikeDelivery } from "./delivery/direct";
import { wrappedFunctions } from "./delivery/wrapped";
import { BENCH_PROJECT, emulatorHost, loadFunctionParams, rollupIntervalMs } from "./env";
import { HARD_MAX_SHARDS } from "../../functions/src/model/param-rules";
import { REPO_ROOT } from "../lib/firebase-cli";
import type { BenchOptions } from "./options";
import { writeResultsPage } from "./page";
import { hotSpec, renderPng, sustainedSpec } from "./plot";
import { emulatorLogPath, opsByOutcome, opsOf, perMillion } from "./ops";
import { rollupSize, type InstanceSize } from "./product";
import type { PhaseResult } from "./recorder";
import type { CostRow } from "./costs";
import { coldStartLine, machine, machineLine, renderReport, type BenchResults } from "./report";
import { targets, windowsTargets } from "./targets";
import { sleep } from "./pace";
import { OPTIONS_ENV, say } from "./say";
import { burst } from "./workloads/burst";
import { emulatorCapacity } from "./workloads/capacity";
import { coldStart } from "./workloads/coldStart";
import type { BenchContext } from "./workloads/context";
import { endToEnd } from "./workloads/endToEnd";
import { drainFunctionsQueue, emulatorDelivery, type Delivery } from "./workloads/phase";
import { hot } from "./workloads/hot";
import { likes } from "./workloads/likes";
import { mirrored } from "./workloads/mirrored";
import { resets } from "./workloads/resets";
import { redelivery } from "./workloads/redelivery";
import { sparse } from "./workloads/sparse";
import { sustained } from "./workloads/sustained";
import { warmUp } from "./workloads/warmup";
import { windows } from "./workloads/windows";

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
  // A named app: the default app belongs to the wrapped functions (another project, delivery/wrapped.ts).
  const app = initializeApp({ projectId: BENCH_PROJECT }, "bench");
  const ctx: BenchContext = {
    app,
    db: getFirestore(app),
    options,
    intervalMs: rollupIntervalMs(),
    runId: startedAt.getTime().toString(36),
  };
  const host = machine();
  say(`bench: ${options.quick ? "quick" : "full"} run on ${machineLine(host)}; rollup interval ${ctx.intervalMs} ms`);

  // First: its cold samples restart every functions worker, which would undo the warm-up.
  const cold = await step(
    `workload 7, cold start: ${options.coldSamples} cold starts of rollupTotal (one functions reload each), then the same counter after ${options.coldIdleMs} ms idle`,
    () => coldStart(ctx),
  );
  say(`  ${coldStartLine(cold)}`);
  await step(`warm-up (${options.warmupSeconds} s of writes per rollup, then a burst)`, () => warmUp(ctx));
  const capacity = await step(`the emulator's delivery capacity: ${options.capacityEvents} events to a no-op trigger`, () => emulatorCapacity(ctx));
  say(`  ${capacity.eventsPerSecond.toFixed(0)} events/s`);
  const emulator = emulatorDelivery(ctx);
  const w0 = await step(
    `workload 0, sparse: ${options.sparseCounters} idle counters, ${options.sparseIncrements} increments each, ${options.sparseGapMs} ms apart, ours then naive`,
    () => sparse(ctx, emulator),
  );
  const onEmulator = await loadWorkloads(ctx, emulator, [options.sustainedRate]);
  const direct = await directWorkloads(ctx);
  const w8 = await step(
    `workload 8, resets under load: ${options.resetRate} increments/s for ${options.resetSeconds} s on one counter of ${HARD_MAX_SHARDS} shards, a reset every ${options.resetEveryMs} ms; ours, then the one-transaction reset it replaced`,
    () => resets(ctx),
  );
  const w4 = await step(
    `workload 4, end to end: ${options.e2eCalls} calls per path, ${options.e2eConcurrency} in flight`,
    () => endToEnd(ctx),
  );

  const loads = [...onEmulator.sustained, ...direct.sustained, ...onEmulator.burst, ...direct.burst];
  const hotPhases = direct.hot.runs.map((r) => r.phase);
  const windowsPhases = [direct.windows.phases.plain, direct.windows.phases.windowed, ...(direct.windows.naive === undefined ? [] : [direct.windows.naive])];
  const phases = [...w0, ...loads, ...direct.redelivery, direct.mirrors.phase, direct.likes.phase, ...hotPhases, ...windowsPhases, w4.rollup];
  // Workload 4's naive side is the naive callable; its increments ran the naive trigger like any other.
  const naiveE2e = { ...w4.rollup, rollup: "naive" as const, opsPrefix: w4.naiveOpsPrefix, increments: w4.naiveIncrements };
  // Workload 6's calls are setMember's, counted by the workload itself.
  const l = direct.likes;
  const likesCalls = l.likes + l.unlikes;
  const likesCallable = { calls: likesCalls, reads: l.callReadsPerCall * likesCalls, writes: l.callWritesPerCall * likesCalls };
  const size = rollupSize();
  const costs = await step("operations per workload, from the functions' \"rollup ops\" log lines", () =>
    costRows(ctx, size, [...phases, naiveE2e], new Map([[l.phase.opsPrefix, likesCallable]])),
  );
  const finishedAt = new Date();
  const results: BenchResults = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    seconds: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    machine: host,
    options,
    intervalMs: ctx.intervalMs,
    rollupSize: size,
    capacity,
    productionLike: direct.description,
    phases,
    endToEnd: w4,
    mirrors: direct.mirrors,
    likes: direct.likes,
    coldStart: cold,
    resets: w8,
    hot: direct.hot,
    windows: direct.windows,
    targets: [
      ...targets([...w0, ...loads, ...direct.redelivery, ...hotPhases, ...windowsPhases], w4, ctx.intervalMs, direct.mirrors, direct.hot, direct.windows),
      ...allInTargets(allInRows(costs)),
    ],
    sustainedTimeline: [...onEmulator.timeline, ...direct.timeline],
    costs,
  };
  mkdirSync(options.outDir, { recursive: true });
  const jsonPath = join(options.outDir, "results.json");
  writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
  // The plot: workload 1 at the base rate under both deliveries.
  const plotted = loads.filter((p) => p.workload === onEmulator.sustained[0]?.workload);
  const png = await renderPng(
    sustainedSpec(results.sustainedTimeline, {
      rate: options.sustainedRate,
      seconds: options.sustainedSeconds,
      intervalMs: ctx.intervalMs,
      parentWrites: (rollup, delivery) => plotted.find((r) => r.rollup === rollup && r.delivery === delivery)?.parentWrites ?? 0,
    }),
  );
  // The page and the plot go next to results.json; only --publish replaces the committed copies in docs/
  // (npm test's --quick run never does).
  const hotPng = await renderPng(hotSpec(direct.hot, ctx.intervalMs));
  const plots = { sustained: png, hot: hotPng };
  const pages = [writeResultsPage(options.outDir, results, plots), ...(options.publish ? [writeResultsPage(join(REPO_ROOT, "docs"), results, plots)] : [])];

  say("");
  say(renderReport(results, `results: ${jsonPath}; pages (with the plot beside them): ${pages.join(", ")}`));

  const oursDrift = phases.filter((p) => p.rollup === "ours" && p.drift !== 0);
  if (oursDrift.length > 0) {
    say(`FAIL: our rollup's total is not the shard sum in ${oursDrift.map((p) => `${p.workload} (${p.delivery})`).join(", ")}`);
    return 1;
  }
  if (direct.likes.members !== direct.likes.totals) {
    say(`FAIL: workload 6 settled at ${direct.likes.totals} likes in the totals for ${direct.likes.members} member documents`);
    return 1;
  }
  const ours = w8.rows.find((row) => row.reset === "ours")!;
  if (ours.drift !== 0 || ours.failedIncrements > 0 || ours.failedResets > 0) {
    say(`FAIL: workload 8, our reset: drift ${ours.drift}, ${ours.failedIncrements} failed increments, ${ours.failedResets} failed resets`);
    return 1;
  }
  if (direct.mirrors.mirrorDrift !== 0) {
    say(`FAIL: the mirrored field differs from the total on ${direct.mirrors.countersWithMirrorDrift} counter(s) of workload 5`);
    return 1;
  }
  const unmet = windowsTargets(direct.windows).filter((t) => t.met === false);
  if (unmet.length > 0) {
    say(`FAIL: ${unmet.map((t) => `${t.target} (${t.measured})`).join("; ")}`);
    return 1;
  }
  return 0;
}

/**
 * Workloads 1 and 2 (the load workloads) under one delivery: workload 1 at each rate, then workload 2.
 * Returns the plot's time series of workload 1 at the first rate.
 */
async function loadWorkloads(ctx: BenchContext, delivery: Delivery, rates: readonly number[]) {
  const { options } = ctx;
  const sustainedRuns = [];
  for (const rate of rates) {
    sustainedRuns.push(
      await step(
        `workload 1, sustained, ${delivery.label} delivery: ${rate}/s for ${options.sustainedSeconds} s on one counter of ${options.sustainedShards} shards, ours then naive`,
        () => sustained(ctx, delivery, rate),
      ),
    );
  }
  const burstResults = await step(
    `workload 2, burst, ${delivery.label} delivery: ${options.burstIncrements} increments over ${options.burstCounters} counters, ${options.burstConcurrency} writes in flight, ours then naive`,
    () => burst(ctx, delivery),
  );
  return { sustained: sustainedRuns.flatMap((r) => r.results), burst: burstResults, timeline: sustainedRuns[0]?.timeline ?? [] };
}

/**
 * The workloads whose events the benchmark delivers itself, to handlers in this process
 * (delivery/wrapped.ts): workloads 1 and 2 under production-like delivery (workload 1 also at the high
 * rate, which the emulator's one-at-a-time delivery could only queue), workload 3, and workloads 5, 6, 9
 * and 10 (whose midnight commit runs in this process too).
 */
async function directWorkloads(ctx: BenchContext) {
  const { options } = ctx;
  const wrapped = wrappedFunctions();
  try {
    const productionLike = productionLikeDelivery(ctx, wrapped);
    say(productionLike.description);
    const rates = [options.sustainedRate, ...(options.sustainedHighRate > 0 ? [options.sustainedHighRate] : [])];
    const loads = await loadWorkloads(ctx, productionLike, rates);
    const redeliveryResults = await step(
      `workload 3, redelivery: ${options.redeliveryIncrements} increments over ${options.redeliveryCounters} counters, every event delivered twice, shuffled`,
      () => redelivery(ctx, wrapped),
    );
    const mirrors = await step(
      `workload 5, mirrors on, production-like delivery: ${options.mirrorRate}/s for ${options.mirrorSeconds} s over ${options.mirrorCounters} mirrored counters, ours only`,
      () => mirrored(ctx, productionLike),
    );
    const likesResult = await step(
      `workload 6, likes on unique counters, production-like delivery: ${options.likesRate} setMember calls/s for ${options.likesSeconds} s over ${options.likesCounters} counters, ours only`,
      () => likes(ctx, productionLike),
    );
    const hotResult = await step(
      `workload 9, a hot counter, production-like delivery: ${options.hotRate}/s for ${options.hotSeconds} s on one counter: ours from the default shape (it grows), ours fixed at ${options.hotFixedShards} shards, naive on ${options.hotFixedShards} shards`,
      () => hot(ctx, productionLike),
    );
    const windowsResult = await step(
      `workload 10, windowed counters, production-like delivery: ${options.windowsCounters} idle counters, ${options.windowsIncrements} increments each, ${options.windowsGapMs} ms apart, ours plain, ours windowed, then naive; then the midnight commit on ${options.midnightCounters} windowed counters, and once more`,
      () => windows(ctx, productionLike),
    );
    const moved = windowsResult.midnight;
    say(`  midnight commit: ${moved.moved} of ${moved.counters} counters moved in ${(moved.first.ops.durationMs / 1000).toFixed(1)} s; again right after: ${moved.second.found} found, ${moved.second.ops.reads} read(s)`);
    return { ...loads, redelivery: redeliveryResults, mirrors, likes: likesResult, hot: hotResult, windows: windowsResult, description: productionLike.description };
  } finally {
    // Restores the environment firebase-functions-test changed, before workload 4's callables.
    wrapped.cleanup();
  }
}

/**
 * Sums each phase's "rollup ops" lines, found by the prefix its counter ids share (context.ts), and the
 * calls counted on its counters (callable.ts; `callables` gives a phase's calls counted elsewhere, by prefix).
 */
async function costRows(
  ctx: BenchContext,
  size: InstanceSize,
  phases: readonly Pick<PhaseResult, "workload" | "rollup" | "delivery" | "opsPrefix" | "increments" | "deliveries" | "parentWrites">[],
  callables: ReadonlyMap<string, CallableOps>,
): Promise<CostRow[]> {
  // Every event queued so far has run once the queue is drained; give the last log lines time to arrive.
  await drainFunctionsQueue(ctx);
  await sleep(2000);
  const logPath = emulatorLogPath(ctx.options.outDir);
  return phases.map((p) => {
    const ops = opsOf(logPath, p.opsPrefix);
    return {
      workload: p.workload,
      rollup: p.rollup,
      delivery: p.delivery,
      increments: p.increments,
      // The benchmark's own deliveries measured their instances' billed time; the emulator's ran one at a time.
      perMillion: perMillion(ops, p.increments, p.deliveries?.busyMs ?? ops.durationMs, size),
      byOutcome: opsByOutcome(logPath, p.opsPrefix),
      parentWrites: p.parentWrites,
      callable: callables.get(p.opsPrefix) ?? callableOpsOf(p.opsPrefix),
    };
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
