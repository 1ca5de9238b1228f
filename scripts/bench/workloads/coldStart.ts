// Workload 7: what a cold rollupTotal adds to the first like after idle time (docs/benchmark.md, "Cold
// starts"). In the functions emulator a function is cold when it has no idle worker process: its next
// event waits while the emulator spawns a Node process for it, loads functions/lib in it (firebase-admin,
// firebase-functions, the product) and polls the worker until it answers (firebase-tools 14.27.0,
// lib/emulator/functionsEmulator.js startRuntime, functionsRuntimeWorker.js). The emulator never retires
// an idle worker (it has no idle timeout and ignores minInstances), so idle time alone never makes a
// function cold there; reloading the functions does: RuntimeWorkerPool.refresh() kills every idle worker.
// The emulator hub's `PUT /functions/enableBackgroundTriggers` reloads them and answers once the reload
// is done, which makes one cold sample per reload:
//   1. reload: every worker of both codebases is gone;
//   2. one incrementCounter call the callable rejects (delta 0): boots the callable's worker and writes
//      nothing, so no event reaches rollupTotal and only its start is left in what follows;
//   3. incrementCounter on an idle counter: its event meets rollupTotal cold (the cold sample);
//   4. after `coldIdleMs` of idle time, incrementCounter on the same counter: rollupTotal warm.
// Lag as everywhere in the benchmark (recorder.ts): from the increment's commit (the writeTime the
// callable answers) to the update time of the first parent state whose rollup.readTime covers it. Both
// increments take the leading edge (the counter had no rollup commit in the interval before each).
// The handler's own time comes from its "rollup ops" line (durationMs), so the report can say how much
// of the cold lag is the worker's start and how much the handler's first Firestore connection.
//
// Runs first, before the warm-up: each reload replaces every worker the warm-up would have booted. It
// ends with one more reload, so the workloads after it start from workers of their own, as they did
// before this workload existed (a callable worker left from here, idle for minutes, gave workload 4's
// incrementCounter a tail of 0.3–1 s in all three runs that had it, none in the run without it).
import type { Client } from "../../lib/client";
import { microsCeil } from "../../../functions/src/model/time";
import type { Counter } from "../counters";
import { fixed, int, markdownTable, ms } from "../format";
import { emulatorLogPath, rollupInvocationsOf } from "../ops";
import { sleep } from "../pace";
import { say } from "../say";
import { watchParents, type Watch } from "../recorder";
import { spread, type Spread } from "../stats";
import { createBenchCounters, signedInClient, step, type BenchContext } from "./context";
import { drainFunctionsQueue } from "./phase";
import { sizes } from "../options";
import { type Workload } from "./workload";

/** Shards of each counter (the product's default). */
const SHARDS = 10;
/** Longest wait for the total to cover one increment: a cold start takes seconds here, not this long. */
const COVER_TIMEOUT_MS = 60_000;
/** Time for the last "rollup ops" lines to reach the emulator log before they are read. */
const LOG_FLUSH_MS = 2_000;

export interface ColdStartSample {
  counterId: string;
  /** How long the reload of the functions took (not part of any lag). */
  reloadMs: number;
  /** The first increment after the reload: rollupTotal had no worker. */
  cold: Measured;
  /** The same counter after `idleMs` of idle time: rollupTotal's worker was waiting for it. */
  warm: Measured;
}

interface Measured {
  lagMs: number;
  /** The invocation's own duration from its "rollup ops" line; null if the line was not found. */
  handlerMs: number | null;
}

export interface ColdStartResult {
  idleMs: number;
  samples: ColdStartSample[];
  cold: { lagMs: Spread; handlerMs: Spread };
  warm: { lagMs: Spread; handlerMs: Spread };
  /** Per sample, cold lag − warm lag: what the cold start added to the first increment. */
  addedMs: Spread;
}

const FLAGS = [
  { key: "coldSamples", flag: "--cold-samples", full: 8, quick: 1, min: 1, help: "workload 7: cold starts of rollupTotal (one functions reload each)" },
  { key: "coldIdleMs", flag: "--cold-idle-ms", full: 5000, quick: 3000, min: 1, help: "workload 7: idle time before each warm increment" },
] as const;

export const coldStart: Workload<ColdStartResult> = {
  id: "coldStart",
  flags: FLAGS,
  stages: ["first"],
  async run(ctx) {
    const { coldSamples: count, coldIdleMs: idleMs } = sizes(ctx.options, FLAGS);
    const cold = await step(
      `workload 7, cold start: ${count} cold starts of rollupTotal (one functions reload each), then the same counter after ${idleMs} ms idle`,
      () => measureColdStarts(ctx, count, idleMs),
    );
    say(`  ${coldStartLine(cold)}`);
    return cold;
  },
  section: (c) => [
    `Workload 7, cold start: the first increment after rollupTotal's worker was replaced (a functions reload), then the same counter again after ${fixed(c.idleMs / 1000)} s idle; lag from the increment's commit to the total covering it:`,
    "",
    coldStartTable(c),
    "",
    coldStartLine(c),
  ],
};

/** Workload 7: the cold and the warm increments side by side, each with its median and range. */
function coldStartTable(c: ColdStartResult): string {
  const row = (label: string, m: ColdStartResult["cold"]) => [
    label,
    int(m.lagMs.count),
    ms(m.lagMs.p50),
    ms(m.lagMs.min),
    ms(m.lagMs.max),
    ms(m.handlerMs.p50),
    `${ms(m.handlerMs.min)}–${ms(m.handlerMs.max)}`,
  ];
  return markdownTable(
    ["rollupTotal", "samples", "lag p50 ms", "lag min ms", "lag max ms", "handler p50 ms", "handler range ms"],
    [row("cold (no worker: a new process starts)", c.cold), row(`warm (after ${fixed(c.idleMs / 1000)} s idle)`, c.warm)],
    1,
  );
}

/** What the cold start added to the first increment: the per-sample difference, and where it went. */
function coldStartLine(c: ColdStartResult): string {
  const start = c.addedMs.p50 === null || c.cold.handlerMs.p50 === null || c.warm.handlerMs.p50 === null
    ? ""
    : `; the handler itself took ${ms(c.cold.handlerMs.p50)} ms cold against ${ms(c.warm.handlerMs.p50)} ms warm (its first Firestore call loads the client and connects), ` +
      `so about ${ms(c.addedMs.p50 - (c.cold.handlerMs.p50 - c.warm.handlerMs.p50))} ms went to starting the worker`;
  return (
    `A cold rollupTotal added ${ms(c.addedMs.p50)} ms to the first increment's lag (median of ${c.addedMs.count} paired samples, ` +
    `range ${ms(c.addedMs.min)}–${ms(c.addedMs.max)} ms)${start}.`
  );
}

async function measureColdStarts(ctx: BenchContext, count: number, idleMs: number): Promise<ColdStartResult> {
  const counters = await createBenchCounters(ctx, "cold", "ours", count, SHARDS);
  const client = await signedInClient();
  const watch = await watchParents(counters);
  const measured: Omit<ColdStartSample, "cold" | "warm">[] = [];
  const lags: { cold: number; warm: number }[] = [];
  try {
    // Creating the counters ran rollupTotal (one event per new shard): every event queued so far must have
    // run, or one could boot a worker after a reload and that sample would not be cold. Later samples
    // queue nothing behind them: a sample ends once its last event's commit is seen.
    await drainFunctionsQueue(ctx);
    for (const counter of counters) {
      const reloadStarted = Date.now();
      await reloadFunctions();
      const reloadMs = Date.now() - reloadStarted;
      await rejectedCall(client, counter.id);
      const cold = await incrementAndCover(client, counter, watch);
      await sleep(idleMs);
      const warm = await incrementAndCover(client, counter, watch);
      measured.push({ counterId: counter.id, reloadMs });
      lags.push({ cold, warm });
    }
  } finally {
    watch.stop();
    await client.close();
  }
  await reloadFunctions(); // leaves no worker of this workload to the next ones (header)
  await sleep(LOG_FLUSH_MS);
  const logPath = emulatorLogPath(ctx.options.outDir);
  const samples = measured.map((m, i): ColdStartSample => {
    // The sample's two invocations that committed: the first increment made the total 1, the second 2.
    const committed = rollupInvocationsOf(logPath, m.counterId).filter((line) => line.outcome === "committed-lead");
    const handlerMs = (total: number) => committed.find((line) => line.total === total)?.durationMs ?? null;
    return { ...m, cold: { lagMs: lags[i]!.cold, handlerMs: handlerMs(1) }, warm: { lagMs: lags[i]!.warm, handlerMs: handlerMs(2) } };
  });
  const handlers = (pick: (s: ColdStartSample) => Measured) =>
    spread(samples.map((s) => pick(s).handlerMs).filter((ms): ms is number => ms !== null));
  return {
    idleMs,
    samples,
    cold: { lagMs: spread(samples.map((s) => s.cold.lagMs)), handlerMs: handlers((s) => s.cold) },
    warm: { lagMs: spread(samples.map((s) => s.warm.lagMs)), handlerMs: handlers((s) => s.warm) },
    addedMs: spread(samples.map((s) => s.cold.lagMs - s.warm.lagMs)),
  };
}

/**
 * Reloads every functions codebase through the emulator hub and resolves once the reload is done: the
 * functions emulator has then killed every idle worker (RuntimeWorkerPool.refresh), so each function's
 * next request or event starts a new worker process. The hub's address comes from `emulators:exec`.
 */
async function reloadFunctions(): Promise<void> {
  const hub = process.env.FIREBASE_EMULATOR_HUB;
  if (hub === undefined || hub === "") throw new Error("FIREBASE_EMULATOR_HUB is not set: run the benchmark with `npm run bench`");
  const response = await fetch(`http://${hub}/functions/enableBackgroundTriggers`, { method: "PUT" });
  if (!response.ok) throw new Error(`reloading the functions through the emulator hub failed: ${response.status} ${await response.text()}`);
}

/** Boots incrementCounter's worker with a call it refuses before any Firestore work (delta 0). */
async function rejectedCall(client: Client, counterId: string): Promise<void> {
  try {
    await client.call("incrementCounter", { counterId, delta: 0 });
  } catch (error) {
    if ((error as { code?: unknown }).code === "functions/invalid-argument") return;
    throw error;
  }
  throw new Error("incrementCounter accepted delta 0");
}

/** One incrementCounter call; resolves with the ms from its commit to the first parent state covering it. */
async function incrementAndCover(client: Client, counter: Counter, watch: Watch): Promise<number> {
  const answer = await client.call<{ applied: boolean; writeTime: { seconds: number; nanoseconds: number } }>("incrementCounter", {
    counterId: counter.id,
    delta: 1,
  });
  if (!answer.applied) throw new Error(`incrementCounter on ${counter.id} answered applied: false`);
  const writtenAtUs = microsCeil(answer.writeTime);
  const started = Date.now();
  for (;;) {
    const covering = watch.states(counter.id).find((s) => s.coveredUntilUs !== null && s.coveredUntilUs >= writtenAtUs);
    if (covering !== undefined) return Math.max(0, (covering.atUs - writtenAtUs) / 1000);
    if (Date.now() - started > COVER_TIMEOUT_MS) {
      throw new Error(`the total of ${counter.id} did not cover an increment within ${COVER_TIMEOUT_MS / 1000} s`);
    }
    await sleep(10);
  }
}
