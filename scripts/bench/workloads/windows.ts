// Workload 10: what windowed counters cost (docs/windows.md). Two parts:
// - The same idle-counter load as workload 0 (1-shard counters, DEFAULT_SHARDS, as a real app's idle
//   counters are; every increment lands on a counter whose rollup has been quiet, so each one is its own
//   commit: where a window's extra aggregation weighs the most per increment), under the given delivery,
//   on plain counters, then on windowed ones, then on the naive trigger's (which has no windows: the row
//   "vs naive" compares both of ours with, under the same delivery). The plain and windowed rows of the
//   cost table differ by what windows cost; besides drift, each windowed counter's windows must hold its
//   total once settled.
// - The midnight commit: N windowed counters with a window not at 0 (one increment each, rolled up by the
//   product's rollup), then the product's commitMovedWindows run directly against them with its day clock a
//   day ahead (RollupDeps.dayClockMs, only ever ahead of the real clock: model/windows.ts), as the
//   scheduled rollupWindows runs it after a UTC midnight; then once more, which must find nothing. They live
//   on a project of their own (MIDNIGHT_PROJECT), so the commit's query finds exactly them.
import { randomUUID } from "node:crypto";
import { initializeApp, type App } from "firebase-admin/app";
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import { withConcurrency } from "../../lib/concurrency";
import { rollupConfig } from "../../../functions/src/config/read";
import { pause } from "../../../functions/src/model/backoff";
import { dayOf } from "../../../functions/src/model/days";
import { counterRef } from "../../../functions/src/model/paths";
import { PARAMS } from "../../../functions/src/model/params";
import { commitMovedWindows } from "../../../functions/src/rollup/midnight";
import { findMovedWindows, firestoreRollupStore } from "../../../functions/src/rollup/firestore-store";
import { rollupShardWrite } from "../../../functions/src/rollup/index";
import type { RollupDeps } from "../../../functions/src/rollup/types";
import { createBenchCounter, incrementShard, type Counter } from "../counters";
import { MIDNIGHT_PROJECT } from "../env";
import type { Ops } from "../ops";
import { paced } from "../pace";
import type { PhaseResult } from "../recorder";
import { counterIdFor, type BenchContext } from "./context";
import type { Delivery } from "./phase";
import { IDLE_SHARDS } from "./sparse";

/** Increments in flight at most; far above what the paced rate needs. */
const MAX_IN_FLIGHT = 8;
/** Counters created and rolled up at once while the midnight commit's counters are set up. */
const SETUP_CONCURRENCY = 16;
const DAY_MS = 86_400_000;

export type CounterKind = "plain" | "windowed";
/** The load's three phases: ours on plain and on windowed counters, and the naive trigger's (plain: it has no windows). */
type LoadKind = CounterKind | "naive";

export interface MidnightRun {
  /** Counters the commit's query found. */
  found: number;
  /** How each found counter ended (midnight.ts): committed, changed, gone, failed. */
  outcomes: Record<string, number>;
  /** What the run cost: one invocation, its reads, writes and aggregations, its duration (no waits). */
  ops: Ops;
}

export interface MidnightResult {
  /** Windowed counters set up with a window to move (N). */
  counters: number;
  shards: number;
  /** The day the windows were for (the real clock's) and the day the commit moved them to (the day clock's). */
  fromDay: string;
  toDay: string;
  first: MidnightRun;
  /** Counters whose windows, after the first run, are for `toDay` with `today` 0 and their increment in the week. */
  moved: number;
  /** The same commit again right after the first: it must find none. */
  second: MidnightRun;
}

export interface WindowsResult {
  /** The load on plain counters, then on windowed ones (rows "10 windows, plain" / "10 windows, windowed"). */
  phases: Record<CounterKind, PhaseResult>;
  /** The same load on the naive trigger's counters (row "10 windows, naive"); absent from runs before it was measured. */
  naive?: PhaseResult;
  /** Σ over the windowed counters of |windows.last7Days − total| + |windows.last30Days − total| once settled. */
  windowsDrift: number;
  midnight: MidnightResult;
}

export async function windows(ctx: BenchContext, delivery: Delivery): Promise<WindowsResult> {
  const plain = await idleLoad(ctx, delivery, "plain");
  const windowed = await idleLoad(ctx, delivery, "windowed");
  const naive = await idleLoad(ctx, delivery, "naive");
  return {
    phases: { plain: plain.phase, windowed: windowed.phase },
    naive: naive.phase,
    windowsDrift: await windowsDriftOf(windowed.counters),
    midnight: await midnight(ctx),
  };
}

const KEYS: Record<LoadKind, string> = { plain: "winplain", windowed: "windowed", naive: "winnaive" };

/** Workload 0's load, under `delivery`, on counters of one kind. */
async function idleLoad(ctx: BenchContext, delivery: Delivery, kind: LoadKind): Promise<{ phase: PhaseResult; counters: Counter[] }> {
  const { windowsCounters: count, windowsIncrements: perCounter, windowsGapMs: gapMs } = ctx.options;
  const rollup = kind === "naive" ? "naive" : "ours";
  const counters = await delivery.createCounters(KEYS[kind], rollup, count, IDLE_SHARDS, { windowed: kind === "windowed" });
  const run = await delivery.run(`10 windows, ${kind}`, counters, async (increment) => ({
    writes: await paced(count * perCounter, (count * 1000) / gapMs, MAX_IN_FLIGHT, (i) => increment(counters[i % count]!)),
  }));
  return { phase: run.result, counters };
}

/** Every increment here is today's, or yesterday's across a midnight: the week and the month hold all of them. */
async function windowsDriftOf(counters: readonly Counter[]): Promise<number> {
  let drift = 0;
  for (const counter of counters) {
    const parent = await counter.parent.get();
    const total = parent.get("total") as unknown;
    const week = parent.get("windows.last7Days") as unknown;
    const month = parent.get("windows.last30Days") as unknown;
    if (typeof total !== "number" || typeof week !== "number" || typeof month !== "number") return Number.POSITIVE_INFINITY;
    drift += Math.abs(week - total) + Math.abs(month - total);
  }
  return drift;
}

async function midnight(ctx: BenchContext): Promise<MidnightResult> {
  const n = ctx.options.midnightCounters;
  const shards = PARAMS.DEFAULT_SHARDS.default;
  const app = initializeApp({ projectId: MIDNIGHT_PROJECT }, "midnight");
  const db = getFirestore(app);
  const { intervalMs, staleAfterMs } = rollupConfig();
  const deps: RollupDeps = { store: firestoreRollupStore(db), intervalMs, staleAfterMs, nowMs: Date.now, sleep: pause };
  const fromDay = dayOf(Date.now());
  const ids = Array.from({ length: n }, (_, i) => counterIdFor(ctx, "midnight", "ours", i));
  await withConcurrency(SETUP_CONCURRENCY, ids.map((id) => () => windowAtOne(app, id, shards, deps)));

  // After the next UTC midnight, as rollupWindows runs then; fixed, so both runs and the check agree on the day.
  const dayClock = Date.now() + DAY_MS;
  const atMidnight: RollupDeps = { ...deps, dayClockMs: () => dayClock };
  const first = await timedRun(db, atMidnight);
  const moved = await movedCount(db, ids, dayOf(dayClock));
  const second = await timedRun(db, atMidnight);
  return { counters: n, shards, fromDay, toDay: dayOf(dayClock), first, moved, second };
}

/** A windowed counter with today's window at 1: created, incremented once, and that increment rolled up by the product's rollup. */
async function windowAtOne(app: App, id: string, shards: number, deps: RollupDeps): Promise<void> {
  const counter = await createBenchCounter(app, "ours", id, shards, { windowed: true });
  const write = await incrementShard(counter.parent.firestore, counter);
  // The event of that write, as the trigger would get it (the rollup reads only its counts).
  const shard = { before: { count: 0, writes: 0 }, after: { count: 1, writes: 1 } };
  const outcome = await rollupShardWrite({ eventId: randomUUID(), counterId: id, shardId: String(write.shard), writtenAtUs: write.writtenAtUs, ...shard }, deps);
  if (outcome.kind !== "committed") throw new Error(`setting up the midnight commit: the rollup of counter ${id} ended "${outcome.kind}", not committed`);
}

async function timedRun(db: Firestore, deps: RollupDeps): Promise<MidnightRun> {
  const started = performance.now();
  const report = await commitMovedWindows(deps, findMovedWindows(db));
  const durationMs = performance.now() - started;
  return {
    found: report.found,
    outcomes: report.outcomes,
    ops: { invocations: 1, reads: report.ops.reads, writes: report.ops.writes, aggregations: report.ops.aggregations, waitMs: report.ops.waitMs, durationMs },
  };
}

/** Counters whose windows moved to `day`: today 0, the one increment still in the week and the month. */
async function movedCount(db: Firestore, ids: readonly string[], day: string): Promise<number> {
  let moved = 0;
  for (let i = 0; i < ids.length; i += 100) {
    const snaps = await db.getAll(...ids.slice(i, i + 100).map((id) => counterRef(db, id)));
    for (const snap of snaps) {
      const w = snap.get("windows") as unknown;
      if (typeof w !== "object" || w === null) continue;
      const { day: d, today, last7Days, last30Days } = w as Record<string, unknown>;
      if (d === day && today === 0 && last7Days === 1 && last30Days === 1) moved++;
    }
  }
  return moved;
}
