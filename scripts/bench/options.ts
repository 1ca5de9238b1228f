// The benchmark's flags: every size, with the full defaults and the --quick ones (the shared ones here,
// each workload's in its file, in the list's order), parsed once outside the emulators (main.ts) and
// handed to the run inside them (run.ts) as JSON.
import { PARAMS } from "../../functions/src/model/params";
import { integerOption, lastValue, readArgv, UsageError } from "../../cli/src/lib/cli";

export interface Flag {
  key: string;
  flag: string;
  full: number;
  quick: number;
  min: number;
  max?: number;
  help: string;
}

/** One flag's value in a run's options, by its key (a flag of another workload: the warm-up sizes itself by workloads 1 and 2). */
export function sizeOf(options: { sizes: Record<string, number> }, key: string): number {
  const value = options.sizes[key];
  if (value === undefined) throw new Error(`the options have no ${key}`);
  return value;
}

/** The values of `flags` in a run's options (what --quick and the flags made them). */
export function sizes<const F extends readonly Flag[]>(options: { sizes: Record<string, number> }, flags: F): Record<F[number]["key"], number> {
  return Object.fromEntries(flags.map(({ key }) => [key, sizeOf(options, key)])) as Record<F[number]["key"], number>;
}

export interface BenchOptions {
  quick: boolean;
  /** Where results.json, the results page and the plots go. */
  outDir: string;
  /** Also write the results page and the plots into docs/ (the committed copies). */
  publish: boolean;
  /** Every sized flag's value, by its key: the shared ones below and each workload's (workloads/). */
  sizes: Record<string, number>;
  /** `--only`: the ids of the workloads to run (the warm-up and the capacity still run); absent: every one. */
  only?: string[];
}

/** rollupTotal's concurrency as deployed by default (functions/src/model/params.ts): what one instance takes at once. */
const ROLLUP_CONCURRENCY = PARAMS.ROLLUP_CONCURRENCY.default;

/** The flags of no one workload: before the workloads', the warm-up; after them, the capacity, the production-like delivery, the settling. */
const SHARED_FIRST = [{ key: "warmupSeconds", flag: "--warmup-seconds", full: 6, quick: 2, min: 0, help: "warm-up writes before measuring" }] as const satisfies readonly Flag[];
const SHARED_LAST = [
  { key: "capacityEvents", flag: "--capacity-events", full: 2000, quick: 150, min: 1, help: "no-op events that measure the emulator's delivery capacity" },
  { key: "deliveryDelayMs", flag: "--delivery-delay-ms", full: 1000, quick: 1000, min: 0, help: "production-like delivery: each delivery a uniform random 0..n ms after its write" },
  { key: "deliveryDuplicatesPercent", flag: "--delivery-duplicates", full: 1, quick: 10, min: 0, max: 100, help: "production-like delivery: % of events delivered twice" },
  { key: "deliveryInstances", flag: "--delivery-instances", full: 2, quick: 2, min: 1, help: "production-like delivery: instances (each its own module memory)" },
  { key: "deliveryConcurrency", flag: "--delivery-concurrency", full: ROLLUP_CONCURRENCY, quick: ROLLUP_CONCURRENCY, min: 1, help: "production-like delivery: deliveries in flight per instance (ROLLUP_CONCURRENCY)" },
  { key: "settleTimeoutSeconds", flag: "--settle-timeout", full: 180, quick: 60, min: 1, help: "longest wait for a rollup to settle" },
] as const satisfies readonly Flag[];

/** The shared flags' values in a run (warm-up, capacity, delivery, settling). */
export const sharedSizes = (options: BenchOptions) => sizes(options, [...SHARED_FIRST, ...SHARED_LAST]);

/** Every sized flag, in --help's order: the shared ones around the workloads' (workloads/index.ts's FLAGS). */
export function allFlags(workloads: readonly Flag[]): Flag[] {
  return [...SHARED_FIRST, ...workloads, ...SHARED_LAST];
}

export const DEFAULT_OUT_DIR = "bench-results";
/** The results page, in <out>/ and, with --publish, in docs/ (with the workloads' plots beside it). */
export const RESULTS_PAGE = "benchmark-results.md";

export function helpText(flags: readonly Flag[], ids: readonly string[] = []): string {
  const rows = flags.map((f) => `  ${`${f.flag} <n>`.padEnd(30)}${f.help} (default ${f.full}; --quick ${f.quick})`);
  return `Usage: npm run bench -- [options]
       node --import tsx scripts/bench/main.ts [options]

Starts its own emulator suite (auth, firestore, functions on ports 9199, 8180, 5101; hub 4410) with the
product functions and a benchmark-only naive rollup (scripts/bench/firebase.bench.json), first measures
what a cold rollupTotal adds to an increment's lag (workload 7: it restarts the functions' workers), then
the emulator's delivery capacity, runs the workloads through both rollups (workloads 1 and 2 under the
emulator's delivery and under production-like delivery), prints tables, writes <out>/results.json,
<out>/${RESULTS_PAGE} (the tables as a page) and the plots beside it (PNG).

  --quick                       small sizes (seconds of load): a smoke test; fails unless our drift is 0
  --out <dir>                   results folder (default ${DEFAULT_OUT_DIR}/)
  --publish                     also write the page and the plots into docs/ (the committed copies; a
                                --quick run's page says so in its header)
  --only <ids>                  run only these workloads (comma-separated ids: ${ids.join(", ")}); its page
                                says so in its header (not with --publish)
${rows.join("\n")}
  -h, --help                    this text

Exit code: 0 when every workload completed, our rollup's drift is 0 everywhere (workload 11: every document
counter equals its documents, after the live load and after the backfill) and workload 10's midnight commit
moved every windowed counter; 1 otherwise; 2 on bad arguments.`;
}

/** Parses argv; throws UsageError (cli/src/lib/cli.ts) on anything it does not understand (`ids`: the workloads `--only` may name). */
export function parseOptions(argv: string[], flags: readonly Flag[], ids: readonly string[] = []): BenchOptions | "help" {
  const read = readArgv(argv, {
    flags: ["--quick", "--publish"],
    values: {
      "--out": "a results folder",
      "--only": "workload ids, comma-separated",
      ...Object.fromEntries(flags.map((f) => [f.flag, range(f)])),
    },
  });
  if (read === "help") return read;
  const quick = read.flags.has("--quick");
  const sizes: Record<string, number> = {};
  for (const f of flags) sizes[f.key] = integerOption(read, f.flag, { min: f.min, max: f.max ?? Number.MAX_SAFE_INTEGER }, quick ? f.quick : f.full);
  const onlyValue = lastValue(read, "--only");
  const only = onlyValue?.split(",").map((id) => id.trim());
  const unknown = only?.filter((id) => !ids.includes(id)) ?? [];
  if (only !== undefined && read.flags.has("--publish")) throw new UsageError("--publish replaces the whole results page in docs/: run every workload for it, not --only");
  if (unknown.length > 0) throw new UsageError(`--only: no workload ${unknown.map((id) => JSON.stringify(id)).join(", ")}; the workloads are ${ids.join(", ")}`);
  return { quick, outDir: lastValue(read, "--out") ?? DEFAULT_OUT_DIR, publish: read.flags.has("--publish"), sizes, ...(only === undefined ? {} : { only }) };
}

/** Every sized flag with the value this run used, in the order of --help (for the results page). */
export function flagValues(options: BenchOptions, flags: readonly Flag[]): { flag: string; value: number; help: string }[] {
  return flags.map((f) => ({ flag: f.flag, value: options.sizes[f.key]!, help: f.help }));
}

function range(flag: Flag): string {
  return flag.max === undefined ? `a whole number from ${flag.min} up` : `a whole number from ${flag.min} to ${flag.max}`;
}
