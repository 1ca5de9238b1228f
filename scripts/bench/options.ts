// The benchmark's flags: every workload size, with the full defaults and the --quick ones, parsed once
// outside the emulators (main.ts) and handed to the run inside them (run.ts) as JSON.
import { HARD_MAX_SHARDS } from "../../functions/src/model/param-rules";
import { PARAMS } from "../../functions/src/model/params";
import { integerOption, lastValue, readArgv } from "../../cli/src/lib/cli";
import { SHAPE_CACHE_TTL_MS } from "./callable";

export interface BenchOptions {
  quick: boolean;
  /** Where results.json, the results page and the plots go. */
  outDir: string;
  /** Also write the results page and the plots into docs/ (the committed copies). */
  publish: boolean;
  warmupSeconds: number;
  sustainedRate: number;
  /** Workload 1 again at this rate, under production-like delivery only; 0: not run. */
  sustainedHighRate: number;
  sustainedSeconds: number;
  sustainedShards: number;
  sparseCounters: number;
  sparseIncrements: number;
  sparseGapMs: number;
  burstIncrements: number;
  burstCounters: number;
  burstConcurrency: number;
  redeliveryIncrements: number;
  redeliveryCounters: number;
  redeliveryConcurrency: number;
  e2eCalls: number;
  e2eConcurrency: number;
  /** No-op events for measuring the emulator's delivery capacity. */
  capacityEvents: number;
  /** Workload 5 (mirrors): counters, increments per second over them, duration. */
  mirrorCounters: number;
  mirrorRate: number;
  mirrorSeconds: number;
  /** Workload 6 (likes): unique counters, setMember calls per second over them, duration. */
  likesCounters: number;
  likesRate: number;
  likesSeconds: number;
  /** Workload 8 (resets under load): increments per second on one counter, duration, ms between resets. */
  resetRate: number;
  resetSeconds: number;
  resetEveryMs: number;
  /** Workload 7 (cold start): cold samples (one functions reload each), idle time before each warm one. */
  coldSamples: number;
  coldIdleMs: number;
  /** Workload 9 (a hot counter): increments per second on one counter, duration, shards of the fixed counters. */
  hotRate: number;
  hotSeconds: number;
  hotFixedShards: number;
  /** Workload 10 (windowed counters): idle counters per kind, increments on each, ms between two of one counter; windowed counters the midnight commit moves. */
  windowsCounters: number;
  windowsIncrements: number;
  windowsGapMs: number;
  midnightCounters: number;
  /** Production-like delivery (delivery/deliverer.ts): the model's numbers. */
  deliveryDelayMs: number;
  deliveryDuplicatesPercent: number;
  deliveryInstances: number;
  deliveryConcurrency: number;
  /** Longest wait for a rollup to settle after its increments, per phase. */
  settleTimeoutSeconds: number;
}

interface Flag {
  key: Exclude<keyof BenchOptions, "quick" | "outDir" | "publish">;
  flag: string;
  full: number;
  quick: number;
  min: number;
  max?: number;
  help: string;
}

/** rollupTotal's concurrency as deployed by default (functions/src/model/params.ts): what one instance takes at once. */
const ROLLUP_CONCURRENCY = PARAMS.ROLLUP_CONCURRENCY.default;

/**
 * Workloads 0 and 10: ms between two increments of one idle counter, longer than the callable's shape
 * cache keeps a shape (functions/src/counters/shape.ts), so that each of them reads the parent as an
 * increment on a real app's idle counter (a like every few minutes) does.
 */
const IDLE_GAP_MS = SHAPE_CACHE_TTL_MS + 1000;

const FLAGS: Flag[] = [
  { key: "warmupSeconds", flag: "--warmup-seconds", full: 6, quick: 2, min: 0, help: "warm-up writes before measuring" },
  { key: "sustainedRate", flag: "--sustained-rate", full: 100, quick: 20, min: 1, help: "workload 1: increments per second" },
  { key: "sustainedHighRate", flag: "--sustained-high-rate", full: 300, quick: 0, min: 0, help: "workload 1 again at this rate, production-like delivery only (0: not run)" },
  { key: "sustainedSeconds", flag: "--sustained-seconds", full: 30, quick: 3, min: 1, help: "workload 1: duration" },
  { key: "sustainedShards", flag: "--sustained-shards", full: 50, quick: 10, min: 1, max: HARD_MAX_SHARDS, help: "workload 1: shards of the counter" },
  { key: "sparseCounters", flag: "--sparse-counters", full: 40, quick: 6, min: 1, help: "workload 0: idle counters (1 shard each, DEFAULT_SHARDS)" },
  { key: "sparseIncrements", flag: "--sparse-increments", full: 5, quick: 2, min: 1, help: "workload 0: isolated increments per counter" },
  { key: "sparseGapMs", flag: "--sparse-gap-ms", full: IDLE_GAP_MS, quick: IDLE_GAP_MS, min: 1, help: "workload 0: ms between two increments of one counter (above the callable's shape cache TTL: each call reads the parent)" },
  { key: "burstIncrements", flag: "--burst-increments", full: 1000, quick: 60, min: 1, help: "workload 2: increments" },
  { key: "burstCounters", flag: "--burst-counters", full: 100, quick: 6, min: 1, help: "workload 2: counters (10 shards each)" },
  { key: "burstConcurrency", flag: "--burst-concurrency", full: 16, quick: 8, min: 1, help: "workload 2: increments in flight" },
  { key: "redeliveryIncrements", flag: "--redelivery-increments", full: 10000, quick: 60, min: 1, help: "workload 3: increments (each event delivered twice)" },
  { key: "redeliveryCounters", flag: "--redelivery-counters", full: 100, quick: 6, min: 1, help: "workload 3: counters" },
  { key: "redeliveryConcurrency", flag: "--redelivery-concurrency", full: 16, quick: 8, min: 1, help: "workload 3: deliveries in flight" },
  { key: "e2eCalls", flag: "--e2e-calls", full: 200, quick: 16, min: 1, help: "workload 4: calls per path" },
  { key: "e2eConcurrency", flag: "--e2e-concurrency", full: 4, quick: 4, min: 1, help: "workload 4: calls in flight" },
  { key: "mirrorCounters", flag: "--mirror-counters", full: 10, quick: 3, min: 1, help: "workload 5: mirrored counters (10 shards each)" },
  { key: "mirrorRate", flag: "--mirror-rate", full: 100, quick: 20, min: 1, help: "workload 5: increments per second over them" },
  { key: "mirrorSeconds", flag: "--mirror-seconds", full: 20, quick: 3, min: 1, help: "workload 5: duration" },
  { key: "likesCounters", flag: "--likes-counters", full: 10, quick: 3, min: 1, help: "workload 6: unique counters (10 shards each)" },
  { key: "likesRate", flag: "--likes-rate", full: 100, quick: 20, min: 1, help: "workload 6: setMember calls per second over them" },
  { key: "likesSeconds", flag: "--likes-seconds", full: 20, quick: 3, min: 1, help: "workload 6: duration" },
  { key: "resetRate", flag: "--reset-rate", full: 200, quick: 60, min: 1, help: `workload 8: increments per second on one counter of ${HARD_MAX_SHARDS} shards, resets running` },
  { key: "resetSeconds", flag: "--reset-seconds", full: 20, quick: 5, min: 1, help: "workload 8: duration, per reset implementation" },
  { key: "resetEveryMs", flag: "--reset-every-ms", full: 500, quick: 500, min: 1, help: "workload 8: pause between two resets" },
  { key: "coldSamples", flag: "--cold-samples", full: 8, quick: 2, min: 1, help: "workload 7: cold starts of rollupTotal (one functions reload each)" },
  { key: "coldIdleMs", flag: "--cold-idle-ms", full: 5000, quick: 3000, min: 1, help: "workload 7: idle time before each warm increment" },
  { key: "hotRate", flag: "--hot-rate", full: 1000, quick: 60, min: 1, help: "workload 9: increments per second on one hot counter" },
  { key: "hotSeconds", flag: "--hot-seconds", full: 60, quick: 45, min: 1, help: "workload 9: duration, per counter" },
  { key: "hotFixedShards", flag: "--hot-fixed-shards", full: 10, quick: 10, min: 1, max: HARD_MAX_SHARDS, help: "workload 9: shards of the fixed counters (ours that cannot grow, and naive)" },
  { key: "windowsCounters", flag: "--windows-counters", full: 40, quick: 6, min: 1, help: "workload 10: idle counters (1 shard each, DEFAULT_SHARDS), plain, windowed and naive" },
  { key: "windowsIncrements", flag: "--windows-increments", full: 5, quick: 2, min: 1, help: "workload 10: isolated increments per counter" },
  { key: "windowsGapMs", flag: "--windows-gap-ms", full: IDLE_GAP_MS, quick: IDLE_GAP_MS, min: 1, help: "workload 10: ms between two increments of one counter (as workload 0's)" },
  { key: "midnightCounters", flag: "--midnight-counters", full: 1000, quick: 100, min: 1, help: "workload 10: windowed counters with a window to move, committed by the midnight commit" },
  { key: "capacityEvents", flag: "--capacity-events", full: 2000, quick: 150, min: 1, help: "no-op events that measure the emulator's delivery capacity" },
  { key: "deliveryDelayMs", flag: "--delivery-delay-ms", full: 1000, quick: 1000, min: 0, help: "production-like delivery: each delivery a uniform random 0..n ms after its write" },
  { key: "deliveryDuplicatesPercent", flag: "--delivery-duplicates", full: 1, quick: 10, min: 0, max: 100, help: "production-like delivery: % of events delivered twice" },
  { key: "deliveryInstances", flag: "--delivery-instances", full: 2, quick: 2, min: 1, help: "production-like delivery: instances (each its own module memory)" },
  { key: "deliveryConcurrency", flag: "--delivery-concurrency", full: ROLLUP_CONCURRENCY, quick: ROLLUP_CONCURRENCY, min: 1, help: "production-like delivery: deliveries in flight per instance (ROLLUP_CONCURRENCY)" },
  { key: "settleTimeoutSeconds", flag: "--settle-timeout", full: 180, quick: 60, min: 1, help: "longest wait for a rollup to settle" },
];

export const DEFAULT_OUT_DIR = "bench-results";
/** The results page and the plots, in <out>/ and, with --publish, in docs/. */
export const RESULTS_PAGE = "benchmark-results.md";
export const PLOT_FILE = "bench-sustained.png";
export const HOT_PLOT_FILE = "bench-hot.png";

export function helpText(): string {
  const rows = FLAGS.map((f) => `  ${`${f.flag} <n>`.padEnd(30)}${f.help} (default ${f.full}; --quick ${f.quick})`);
  return `Usage: npm run bench -- [options]
       node --import tsx scripts/bench/main.ts [options]

Starts its own emulator suite (auth, firestore, functions on ports 9199, 8180, 5101; hub 4410) with the
product functions and a benchmark-only naive rollup (scripts/bench/firebase.bench.json), first measures
what a cold rollupTotal adds to an increment's lag (workload 7: it restarts the functions' workers), then
the emulator's delivery capacity, runs the workloads through both rollups (workloads 1 and 2 under the
emulator's delivery and under production-like delivery), prints tables, writes <out>/results.json,
<out>/${RESULTS_PAGE} (the tables as a page), <out>/${PLOT_FILE} and <out>/${HOT_PLOT_FILE}.

  --quick                       small sizes (seconds of load): a smoke test; fails unless our drift is 0
  --out <dir>                   results folder (default ${DEFAULT_OUT_DIR}/)
  --publish                     also write the page and the plots into docs/ (the committed copies; a
                                --quick run's page says so in its header)
${rows.join("\n")}
  -h, --help                    this text

Exit code: 0 when every workload completed, our rollup's drift is 0 everywhere and workload 10's midnight
commit moved every windowed counter; 1 otherwise; 2 on bad arguments.`;
}

/** Parses argv; throws UsageError (cli/src/lib/cli.ts) on anything it does not understand. */
export function parseOptions(argv: string[]): BenchOptions | "help" {
  const read = readArgv(argv, {
    flags: ["--quick", "--publish"],
    values: {
      "--out": "a results folder",
      ...Object.fromEntries(FLAGS.map((f) => [f.flag, range(f)])),
    },
  });
  if (read === "help") return read;
  const quick = read.flags.has("--quick");
  const options: BenchOptions = {
    quick,
    outDir: lastValue(read, "--out") ?? DEFAULT_OUT_DIR,
    publish: read.flags.has("--publish"),
    ...(Object.fromEntries(FLAGS.map((f) => [f.key, quick ? f.quick : f.full])) as Record<Flag["key"], number>),
  };
  for (const flag of FLAGS) options[flag.key] = integerOption(read, flag.flag, { min: flag.min, max: flag.max ?? Number.MAX_SAFE_INTEGER }, options[flag.key]);
  return options;
}

/** Every sized flag with the value this run used, in the order of --help (for the results page). */
export function flagValues(options: BenchOptions): { flag: string; value: number; help: string }[] {
  return FLAGS.map((f) => ({ flag: f.flag, value: options[f.key], help: f.help }));
}

function range(flag: Flag): string {
  return flag.max === undefined ? `a whole number from ${flag.min} up` : `a whole number from ${flag.min} to ${flag.max}`;
}
