// A made-up run of the benchmark (`--quick` sizes, small round numbers), of the shape the results page, the
// targets and the all-in table read: a result for every workload of the list, and the rows, costs and
// targets that follow from them, computed by the benchmark's own code (results.ts) as run.ts computes a
// run's. Tests change a piece (a phase's lag, a workload's result) and judge or print it again.
import type { CallableOps } from "../../scripts/bench/callable";
import { costRow, type CostRow } from "../../scripts/bench/costs";
import type { Rollup } from "../../scripts/bench/counters";
import { parseOptions } from "../../scripts/bench/options";
import type { Ops } from "../../scripts/bench/ops";
import type { DeliveryLabel, PhaseResult } from "../../scripts/bench/recorder";
import type { BenchResults } from "../../scripts/bench/results";
import { FLAGS, phasesOf, ran, targetsOf } from "../../scripts/bench/workloads";
import type { ColdStartResult } from "../../scripts/bench/workloads/coldStart";
import type { DocumentsResult } from "../../scripts/bench/workloads/documents";
import type { DocumentPhase } from "../../scripts/bench/workloads/documents-load";
import type { EndToEndResult, PathName } from "../../scripts/bench/workloads/endToEnd";
import type { HotResult, HotRun, HotVariant } from "../../scripts/bench/workloads/hot-seconds";
import { calmFrom, type HotSecond } from "../../scripts/bench/workloads/hot-seconds";
import type { LeaderboardResult } from "../../scripts/bench/workloads/leaderboard";
import type { LikesResult } from "../../scripts/bench/workloads/likes";
import type { MirrorResult } from "../../scripts/bench/workloads/mirrored";
import type { ResetsResult } from "../../scripts/bench/workloads/resets";
import type { SustainedResult } from "../../scripts/bench/workloads/sustained";
import type { WindowsResult } from "../../scripts/bench/workloads/windows";
import type { CostPhase } from "../../scripts/bench/costs";

const SIZE = { vcpu: 1, gib: 0.25 };
const INTERVAL_MS = 1000;
/** Every delivery the production-like model made twice of a phase's events. */
const DUPLICATES = 2;

/** A phase's row: ours writes the parent once per ten increments, the naive trigger once per delivered event. */
export function phase(workload: string, rollup: Rollup, delivery: DeliveryLabel, more: Partial<PhaseResult> = {}): PhaseResult {
  const increments = more.increments ?? 60;
  const duplicates = delivery === "emulator" ? 0 : delivery === "all twice, shuffled" ? increments : DUPLICATES;
  const parentWrites = rollup === "ours" ? Math.ceil(increments / 10) : increments + duplicates;
  return {
    workload,
    rollup,
    delivery,
    opsPrefix: `${workload.split(/[ ,]/)[1]}-${rollup}-${delivery.length}-`,
    deliveries: delivery === "emulator" ? null : { deliveries: increments + duplicates, duplicates, retries: 0, maxInFlight: 12, busyMs: 800 },
    counters: 3,
    increments,
    parentWrites,
    drift: rollup === "ours" ? 0 : duplicates,
    countersWithDrift: rollup === "ours" || duplicates === 0 ? 0 : 1,
    settledExactly: true,
    lagFrom: delivery === "all twice, shuffled" ? "first delivery" : "commit",
    lagMs: { count: increments, p50: 30, p99: 700, max: 900, uncovered: 0 },
    loadSeconds: 3,
    incrementsPerSecond: increments / 3,
    settleMs: 600,
    statesSeen: parentWrites,
    ...more,
  };
}

/** Both rollups of a workload under a delivery. */
const pair = (workload: string, delivery: DeliveryLabel, more: Partial<PhaseResult> = {}) => [phase(workload, "ours", delivery, more), phase(workload, "naive", delivery, more)];

const spread = (min: number, p50: number, max: number) => ({ count: 2, min, p50, max });

function hotRun(variant: HotVariant, rollup: Rollup, startShards: number, endShards: number): HotRun {
  const seconds: HotSecond[] = Array.from({ length: 45 }, (_, second) => {
    const hottest = variant === "ours, grows" ? (second < 10 ? 60 : 2) : rollup === "naive" ? 60 : 6;
    return { second, increments: 60, hottest, hottestDoc: rollup === "naive" ? "parent" : "shard 0", sustained: second + 20 <= 45 ? hottest : null, parentWrites: rollup === "naive" ? 60 : 1, numShards: endShards };
  });
  const summary = { count: 2700, p50: 12, p99: 40, max: 60 };
  const workload = variant === "ours, grows" ? "9 hot, grows" : `9 hot, ${startShards} shards`;
  return {
    variant,
    rollup,
    startShards,
    endShards,
    phase: phase(workload, rollup, "production-like", { counters: 1, increments: 2700, loadSeconds: 45 }),
    seconds,
    calmFromSecond: calmFrom(seconds, 2),
    latencyMs: summary,
    lateLatencyMs: summary,
    growth: startShards === endShards ? [] : [[10.2, 4], [11.4, endShards]],
  };
}

function paths(): EndToEndResult["paths"] {
  const names: PathName[] = [
    "callable, rejected input",
    "callable incrementCounter",
    "naive callable: one raw increment",
    "callable incrementCounter + requestId",
    "admin incrementCounter in-process",
    "raw admin SDK increment",
  ];
  return names.map((path, i) => ({ path, calls: 16, failures: 0, latencyMs: { count: 16, p50: 20 + i, p99: 40 + i, max: 50 + i, mean: 22 + i }, seconds: 1, callsPerSecond: 16 }));
}

/** Every workload's result, by its id: what a --quick run could have found. */
export function workloadResults() {
  const sparse = pair("0 sparse", "emulator", { increments: 12, counters: 6 });
  const sustained: SustainedResult = {
    phases: [...pair("1 sustained 20/s", "emulator"), ...pair("1 sustained 20/s", "production-like")],
    timeline: [
      { rollup: "ours", delivery: "emulator", series: "true sum (Σ shards)", seconds: 0, value: 0 },
      { rollup: "ours", delivery: "emulator", series: "total on the parent", seconds: 1.2, value: 20 },
    ],
  };
  const burst = [...pair("2 burst", "emulator"), ...pair("2 burst", "production-like")];
  const redelivery = pair("3 redelivery", "all twice, shuffled");
  const mirrors: MirrorResult = {
    phase: phase("5 mirrors", "ours", "production-like"),
    targetStatesSeen: 6,
    targetLagMs: { count: 60, p50: 400, p99: 900, max: 950, uncovered: 0 },
    mirrorDrift: 0,
    countersWithMirrorDrift: 0,
    rule: "mirror-ours-x-{n}=benchposts/x-{n}:stats.likeCount",
  };
  const likes: LikesResult = { phase: phase("6 likes", "ours", "production-like"), likes: 40, unlikes: 20, callReadsPerCall: 3, callWritesPerCall: 4, members: 20, totals: 20 };
  const coldStart: ColdStartResult = {
    idleMs: 3000,
    samples: [
      { counterId: "cold-ours-x-0", reloadMs: 900, cold: { lagMs: 1100, handlerMs: 190 }, warm: { lagMs: 60, handlerMs: 40 } },
      { counterId: "cold-ours-x-1", reloadMs: 950, cold: { lagMs: 1300, handlerMs: 210 }, warm: { lagMs: 70, handlerMs: 38 } },
    ],
    cold: { lagMs: spread(1100, 1100, 1300), handlerMs: spread(190, 190, 210) },
    warm: { lagMs: spread(60, 60, 70), handlerMs: spread(38, 38, 40) },
    addedMs: spread(1040, 1040, 1230),
  };
  const resetRow = (reset: "ours" | "transaction") => ({
    reset,
    shards: 200,
    increments: 300,
    failedIncrements: 0,
    resets: 8,
    failedResets: 0,
    resetMs: { count: 8, p50: 90, p99: 150, max: 150 },
    duringMs: { count: 40, p50: 12, p99: 30, max: 35 },
    outsideMs: { count: 260, p50: 8, p99: 20, max: 25 },
    drift: 0,
  });
  const resets: ResetsResult = { rate: 60, seconds: 5, resetEveryMs: 500, rows: [resetRow("ours"), resetRow("transaction")] };
  const hot: HotResult = {
    rate: 60,
    seconds: 45,
    fixedShards: 10,
    shardWritesPerSecond: 1,
    runs: [hotRun("ours, grows", "ours", 1, 64), hotRun("ours, fixed", "ours", 10, 10), hotRun("naive, fixed", "naive", 10, 10)],
  };
  const windowsPhase = (kind: string, rollup: Rollup) => phase(`10 windows, ${kind}`, rollup, "production-like", { increments: 12, counters: 6 });
  const idleOps = (reads: number): Ops => ({ invocations: 1, reads, writes: reads - 1, commitWrites: reads - 1, aggregations: 0, waitMs: 0, durationMs: 900 });
  const windows: WindowsResult = {
    phases: { plain: windowsPhase("plain", "ours"), windowed: windowsPhase("windowed", "ours") },
    naive: windowsPhase("naive", "naive"),
    windowsDrift: 0,
    midnight: {
      counters: 100,
      shards: 1,
      fromDay: "2026-11-27",
      toDay: "2026-11-28",
      first: { found: 100, outcomes: { committed: 100 }, ops: idleOps(101) },
      moved: 100,
      second: { found: 0, outcomes: {}, ops: { ...idleOps(1), writes: 0, durationMs: 5 } },
    },
  };
  const endToEnd: EndToEndResult = {
    concurrency: 4,
    paths: paths(),
    ratio: { p50: 1.1, p99: 1.2, mean: 1.1 },
    rollup: phase("4 end to end", "ours", "emulator", { incrementsPerSecond: null }),
    naiveIncrements: 60,
    naiveOpsPrefix: "e2e-naive-x-",
  };
  const documents: DocumentsResult = {
    phases: [
      documentPhase("ours", "11 documents", "recount"),
      documentPhase("naive", "11 documents", null),
      documentPhase("ours", "11 documents, records", "records"),
      documentPhase("ours", "11 documents, calm", "recount"),
      documentPhase("naive", "11 documents, calm", null),
      documentPhase("ours", "11 documents, viral", "recount"),
      documentPhase("naive", "11 documents, viral", null),
      documentPhase("ours", "11 documents moving to records", "recount"),
    ],
    move: { limit: 20, movingAtUs: 5_000_000, recordsAtUs: 27_500_000, steps: 1, reads: 120, writes: 60, runningMs: 800 },
    backfill: backfill(),
  };
  const summary = (p50: number, max: number) => ({ count: 20, p50, p99: max, max });
  const leaderboard: LeaderboardResult = {
    phases: [phase("12 leaderboard, on no board", "ours", "emulator", { counters: 20, increments: 100 }), phase("12 leaderboard, on a board", "ours", "emulator", { counters: 20, increments: 100 })],
    boardCost: { workload: "12 leaderboard, the board's rollup", rollup: "ours", delivery: "emulator", opsPrefix: "bench", increments: 100, deliveries: null, parentWrites: 4 },
    lagMs: { p50: 900, p99: 2100, max: 2400, writes: 51, uncovered: 0 },
    maxWritesPerSecond: { summary: 1, entry: 2 },
    summaryWrites: 4,
    buckets: 1,
    reads: { counters: 20, ours: { entries: summary(8, 13), billed: summary(3, 3) }, countAbove: { entries: summary(8, 13), billed: summary(1, 1) }, wrong: [] },
  };
  return { sparse, sustained, burst, redelivery, mirrors, likes, coldStart, resets, hot, windows, documents, leaderboard, endToEnd };
}

/**
 * A phase of workload 11 (`workload`) of `rollup`, ours kept as `kept`: 40 writes of comments, 30 of them counted;
 * the usual trigger off by its one duplicated counted change; every version of ours by recount exact.
 */
function documentPhase(rollup: Rollup, workload: string, kept: "recount" | "records" | null): DocumentPhase {
  const ours = rollup === "ours";
  const hop = { count: 30, p50: 400, p99: 900, max: 950 };
  return {
    phase: phase(workload, rollup, "production-like", { increments: 30, events: 40, counters: 4, drift: ours ? 0 : 1 }),
    kept,
    writes: 40,
    counted: 30,
    seeded: 0,
    versions: kept === "recount" ? { states: 12, off: 0 } : null,
    drift: ours ? { net: 0, absolute: 0, counters: 0 } : { net: 1, absolute: 1, counters: 1 },
    duplicatedCounted: 1,
    expectedNaiveDrift: 1,
    driftAsDuplicated: !ours,
    rule: kept === "recount" ? "benchDocPosts/{post}/comments/{comment}[status==published]=documents-prod-ours-x-{post}" : kept === "records" ? "benchDocGroups/{group}/posts/{post}/comments/{comment}[status==published]=documents-records-ours-x-{post}" : null,
    rollupDeliveries: kept === "records" ? { deliveries: 31, duplicates: 1, retries: 0, maxInFlight: 4, busyMs: 500 } : null,
    shardWritesMerged: 0,
    hops: kept === "records" ? { toShard: hop, shardToTotal: hop } : null,
  };
}

function backfill(): DocumentsResult["backfill"] {
  return {
    documents: 200,
    posts: 4,
    published: 150,
    rule: "benchBackfillPosts/{post}/comments/{comment}[status==published]=documents-backfill-ours-x-{post}",
    first: { seen: 200, counted: 150, takenOut: 0, seconds: 2 },
    documentsPerSecond: 100,
    kept: ["recount"],
    drift: { net: 0, absolute: 0, counters: 0 },
    second: { seen: 200, counted: 0, takenOut: 0, seconds: 1 },
  };
}

export type WorkloadResults = ReturnType<typeof workloadResults>;

/**
 * What the functions' "rollup ops" lines and the calls could have counted for a phase: ours a read per
 * invocation and a write per parent write, naive a write per invocation; ours's calls a parent read for
 * every other call (shape-cache misses), naive's none.
 */
function madeUpCostRow(p: CostPhase, callable: CallableOps): CostRow {
  const invocations = p.increments + (p.deliveries?.duplicates ?? 0);
  const ours = p.rollup === "ours";
  const ops: Ops = { invocations, reads: ours ? invocations : 0, writes: p.parentWrites, commitWrites: p.parentWrites, aggregations: ours ? p.parentWrites : 0, waitMs: ours ? 2000 : 0, durationMs: invocations * 20 };
  const byOutcome = ours
    ? [
        { outcome: "committed-lead (parent remembered)", ops: { ...ops, invocations: p.parentWrites } },
        { outcome: "covered", ops: { ...ops, invocations: invocations - p.parentWrites, writes: 0, commitWrites: 0 } },
      ]
    : [{ outcome: "committed", ops }];
  return costRow(p, ops, byOutcome, callable, SIZE);
}

/** A whole run's results from `workloads` (workloadResults, maybe changed), as run.ts assembles a run's. */
export function benchResults(workloads: WorkloadResults = workloadResults(), { quick = true } = {}): BenchResults {
  const options = parseOptions(quick ? ["--quick"] : [], FLAGS);
  if (options === "help") throw new Error("no options");
  const byId: Record<string, unknown> = { ...workloads };
  const counted = new Map(ran(byId).flatMap(({ workload, result }) => [...(workload.callables?.(result) ?? [])]));
  const costs = ran(byId)
    .flatMap(({ workload, result }) => workload.costPhases?.(result) ?? workload.phases?.(result) ?? [])
    .map((p) => {
      // The calls of ours were counted by the benchmark (every other one read the parent); the naive callable's, one write each; workload 4's, not at all.
      const calls = p.workload.startsWith("4 ") ? { calls: 0, reads: 0, writes: 0 } : { calls: p.increments, reads: p.rollup === "ours" ? p.increments / 2 : 0, writes: p.increments };
      return madeUpCostRow(p, counted.get(p.opsPrefix) ?? calls);
    });
  return {
    startedAt: "2026-11-27T22:00:00.000Z",
    finishedAt: "2026-11-27T22:07:00.000Z",
    seconds: 420,
    machine: { cores: 2, cpu: "AMD EPYC", memoryGiB: 24, node: "v22.23.3", java: 'openjdk version "17.0.15" 2025-04-15', functionsEmulatorParallel: "16" },
    options,
    intervalMs: INTERVAL_MS,
    rollupSize: SIZE,
    capacity: { events: 151, writesPerSecond: 250, seconds: 1.5, eventsPerSecond: 100 },
    productionLike: "production-like delivery: this process delivers each recorded event to the exported handler (a made-up run)",
    phases: phasesOf(byId),
    workloads: byId,
    costs,
    targets: targetsOf(byId, costs, INTERVAL_MS),
  };
}
