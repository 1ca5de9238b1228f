// Workload 4: what an app pays. incrementCounter through the functions emulator with the Firebase JS SDK
// (signed in with the Auth emulator), against the cheapest callable that increments a counter: the naive
// codebase's naiveIncrement, one raw `increment(1)` through the same transport, all at the same bounded
// concurrency after a warm-up. The ratio of the two is what our callable's own work costs. More paths
// say where the time goes:
// - a call the callable rejects before any Firestore work (delta 0 → invalid-argument): the cost of the
//   HTTP hop, the emulator's routing to a worker process, token decoding and validation;
// - the admin entry's incrementCounter run in this process (no HTTP, no worker): the callable's own
//   operation, its validation and its Firestore work (a cached shape read, then the one-batch update);
// - the callable with a requestId (the README's advice): one more document in the batch;
// - a raw admin-SDK increment from this process: no callable at all.
// It runs last, after the handlers this process delivers events to are gone (firebase-functions-test
// changes the environment), and only the latency table holds it: the naive callable's calls ran in the
// functions emulator, where the benchmark cannot count their reads, so it has no all-in row.
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { withConcurrency } from "../../lib/concurrency";
import { adminEntry } from "../product";
import { createBenchCounter, incrementShard, shardSum, type Counter, type ShardWriteRecord } from "../counters";
import { fixed, int, markdownTable } from "../format";
import type { PhaseResult } from "../recorder";
import { summarize, type Summary } from "../stats";
import { counterIdFor, phasePrefixOf, signedInClient, step, type BenchContext } from "./context";
import { drainFunctionsQueue, emulatorPhase } from "./phase";
import { sizes } from "../options";
import { type Workload } from "./workload";

export type PathName =
  | "callable, rejected input"
  | "callable incrementCounter"
  | "callable incrementCounter + requestId"
  | "admin incrementCounter in-process"
  | "raw admin SDK increment"
  | "naive callable: one raw increment";

export interface PathResult {
  path: PathName;
  calls: number;
  failures: number;
  /** The first failure's message, for the log: failed calls are left out of the latencies. */
  firstError?: string;
  latencyMs: Summary & { mean: number | null };
  seconds: number;
  callsPerSecond: number;
}

export interface EndToEndResult {
  concurrency: number;
  paths: PathResult[];
  /** incrementCounter ÷ naive callable, measured interleaved: latency p50, p99 and mean. */
  ratio: { p50: number | null; p99: number | null; mean: number | null };
  /** Our rollup over the counter both paths wrote (lag from the raw writes, whose commit times are known). */
  rollup: PhaseResult;
  /** Increments naiveIncrement applied (warm-up included): the naive trigger ran once for each. */
  naiveIncrements: number;
  /** What the naive counter's id starts with (its "rollup ops" lines are counted by it). */
  naiveOpsPrefix: string;
}

/** Shards of the workload's counter: the product's default. */
const SHARDS = 10;

const FLAGS = [
  { key: "e2eCalls", flag: "--e2e-calls", full: 200, quick: 16, min: 1, help: "workload 4: calls per path" },
  { key: "e2eConcurrency", flag: "--e2e-concurrency", full: 4, quick: 4, min: 1, help: "workload 4: calls in flight" },
] as const;

export const endToEnd: Workload<EndToEndResult> = {
  id: "endToEnd",
  flags: FLAGS,
  stages: ["last"],
  run(ctx) {
    const { e2eCalls: calls, e2eConcurrency: concurrency } = sizes(ctx.options, FLAGS);
    return step(`workload 4, end to end: ${calls} calls per path, ${concurrency} in flight`, () => measurePaths(ctx, calls, concurrency));
  },
  phases: (e) => [e.rollup],
  tableRows: () => [["4 end to end", "naive", "emulator", "–", "–", "–", "–", "–", "–", "–", "–", "–", "n/a: see the latency table"]],
  // Its naive side is the naive callable; its increments ran the naive trigger like any other.
  costPhases: (e) => [e.rollup, { ...e.rollup, rollup: "naive", opsPrefix: e.naiveOpsPrefix, increments: e.naiveIncrements }],
  section(e) {
    const failures = e.paths.filter((p) => p.failures > 0).map((p) => `Workload 4, ${p.path}: ${p.failures} calls failed, first: ${p.firstError}`);
    return [...(failures.length > 0 ? [...failures, ""] : []), `Workload 4, latency per call at ${e.concurrency} in flight:`, "", endToEndTable(e)];
  },
  targets: (e) => [
    {
      target: "workload 4: incrementCounter p50 ≤ 1.3× a callable doing one raw increment",
      measured: `latency p50 ×${fixed(e.ratio.p50, 2)}, p99 ×${fixed(e.ratio.p99, 2)}, mean ×${fixed(e.ratio.mean, 2)} (interleaved calls)`,
      met: (e.ratio.p50 ?? Infinity) <= 1.3,
    },
  ],
};

function endToEndTable(e2e: EndToEndResult): string {
  const rows = e2e.paths.map((p) => [
    p.path,
    int(p.calls),
    int(p.failures),
    fixed(p.latencyMs.p50),
    fixed(p.latencyMs.p99),
    fixed(p.latencyMs.max),
    fixed(p.callsPerSecond),
  ]);
  return markdownTable(["path", "calls", "failures", "p50 ms", "p99 ms", "max ms", "calls/s"], rows, 1);
}

async function measurePaths(ctx: BenchContext, calls: number, concurrency: number): Promise<EndToEndResult> {
  const counter = await createBenchCounter(ctx.app, "ours", counterIdFor(ctx, "e2e", "ours"), SHARDS);
  const client = await signedInClient();
  try {
    const increment = (requestId?: string) =>
      client.call<{ applied: boolean }>("incrementCounter", { counterId: counter.id, delta: 1, ...(requestId ? { requestId } : {}) });
    const rejected = async () => {
      try {
        await client.call("incrementCounter", { counterId: counter.id, delta: 0 });
      } catch (error) {
        if ((error as { code?: unknown }).code === "functions/invalid-argument") return;
        throw error;
      }
      throw new Error("incrementCounter accepted delta 0");
    };
    // Warm-up, on a counter of its own: boot a worker per concurrent call before anything is measured
    // (docs/development.md).
    const warm = await createBenchCounter(ctx.app, "ours", counterIdFor(ctx, "e2e-warmup", "ours"), SHARDS);
    const warmIncrement = () => client.call("incrementCounter", { counterId: warm.id, delta: 1 });
    const naiveCounter: Counter = await createBenchCounter(ctx.app, "naive", counterIdFor(ctx, "e2e", "naive"), SHARDS);
    const naiveIncrement = () => client.call("naiveIncrement", { counterId: naiveCounter.id, numShards: SHARDS });
    await withConcurrency(concurrency, Array.from({ length: concurrency * 3 }, () => warmIncrement));
    await withConcurrency(concurrency, Array.from({ length: concurrency * 3 }, () => naiveIncrement));
    await withConcurrency(concurrency, Array.from({ length: concurrency }, () => rejected));

    const paths: PathResult[] = [];
    let applied = 0;
    const raw: ShardWriteRecord[] = [];
    const run = await emulatorPhase(ctx, "4 end to end", [counter], async () => {
      // Each path starts with an idle functions emulator: the rollup events of the previous path's
      // increments must not slow this one down (its own increments' events still run alongside it).
      const measure = async (path: PathName, count: number, call: () => Promise<void>) => {
        await drainFunctionsQueue(ctx);
        paths.push(await timed(path, count, concurrency, call));
      };
      await measure("callable, rejected input", Math.max(1, Math.floor(calls / 2)), rejected);
      // The two paths the target compares run interleaved (ours, naive, ours, …) in one window, so
      // both see the same background load on these shared cores.
      await drainFunctionsQueue(ctx);
      paths.push(
        ...(await timedTogether(calls, concurrency, [
          {
            path: "callable incrementCounter",
            call: async () => {
              if ((await increment()).applied) applied++;
            },
          },
          { path: "naive callable: one raw increment", call: async () => void (await naiveIncrement()) },
        ])),
      );
      await measure("callable incrementCounter + requestId", calls, async () => {
        if ((await increment(randomUUID())).applied) applied++;
      });
      await measure("admin incrementCounter in-process", calls, async () => {
        if ((await adminEntry().incrementCounter(counter.id, 1, { app: ctx.app })).applied) applied++;
      });
      await measure("raw admin SDK increment", calls, async () => {
        raw.push(await incrementShard(ctx.db, counter));
      });
      return { writes: raw, untimed: new Map([[counter.id, applied]]) };
    }, false);
    const callable = paths.find((p) => p.path === "callable incrementCounter")!;
    const direct = paths.find((p) => p.path === "naive callable: one raw increment")!;
    const divide = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);
    return {
      concurrency,
      paths,
      ratio: {
        p50: divide(callable.latencyMs.p50, direct.latencyMs.p50),
        p99: divide(callable.latencyMs.p99, direct.latencyMs.p99),
        mean: divide(callable.latencyMs.mean, direct.latencyMs.mean),
      },
      rollup: run.result,
      naiveIncrements: await shardSum(naiveCounter),
      naiveOpsPrefix: phasePrefixOf(naiveCounter.id),
    };
  } finally {
    await client.close();
  }
}

/**
 * Runs `calls` calls of each path, interleaved, `concurrency` in flight in all. Each path's calls/s is
 * its share of the common window, so only latencies compare between them.
 */
async function timedTogether(
  calls: number,
  concurrency: number,
  entries: { path: PathName; call: () => Promise<void> }[],
): Promise<PathResult[]> {
  const latencies = entries.map(() => [] as number[]);
  const failures = entries.map(() => 0);
  const firstErrors: (string | undefined)[] = entries.map(() => undefined);
  const started = performance.now();
  const tasks = Array.from({ length: calls * entries.length }, (_, i) => async () => {
    const k = i % entries.length;
    const t0 = performance.now();
    try {
      await entries[k]!.call();
      latencies[k]!.push(performance.now() - t0);
    } catch (error) {
      failures[k]!++;
      firstErrors[k] ??= error instanceof Error ? error.message : String(error);
    }
  });
  await withConcurrency(concurrency, tasks);
  const seconds = (performance.now() - started) / 1000;
  return entries.map((entry, k) => ({
    path: entry.path,
    calls,
    failures: failures[k]!,
    ...(firstErrors[k] === undefined ? {} : { firstError: firstErrors[k] }),
    latencyMs: withMean(latencies[k]!),
    seconds,
    callsPerSecond: (calls - failures[k]!) / seconds,
  }));
}

function withMean(samples: number[]): Summary & { mean: number | null } {
  return { ...summarize(samples), mean: samples.length === 0 ? null : samples.reduce((a, b) => a + b, 0) / samples.length };
}

async function timed(path: PathName, calls: number, concurrency: number, call: () => Promise<void>): Promise<PathResult> {
  const latencies: number[] = [];
  let failures = 0;
  let firstError: string | undefined;
  const started = performance.now();
  await withConcurrency(
    concurrency,
    Array.from({ length: calls }, () => async () => {
      const t0 = performance.now();
      try {
        await call();
        latencies.push(performance.now() - t0);
      } catch (error) {
        failures++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    path,
    calls,
    failures,
    ...(firstError === undefined ? {} : { firstError }),
    latencyMs: withMean(latencies),
    seconds,
    callsPerSecond: (calls - failures) / seconds,
  };
}
