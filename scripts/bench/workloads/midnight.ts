// Workload 10's midnight commit, run directly: N windowed counters with a window not at 0 (one increment
// each, rolled up by the product's rollup), then the product's commitMidnight against them with its day
// clock a day ahead (RollupDeps.dayClockMs, only ever ahead of the real clock: functions/src/model/windows.ts), as the
// scheduled rollupWindows runs it after a UTC midnight; then once more, which must find nothing. They live
// on a project of their own (MIDNIGHT_PROJECT), so the commit's query finds exactly them.
//
// The one file of the benchmark that reaches past the packages' entries into the rollup (eslint.config.mjs,
// NOT_MODEL_YET): the main entry's rollupWindows runs the commit with the real clock, on the default app's
// project, and rollupTotal rolls up on that project too, so neither can move windows a day ahead here.
import { randomUUID } from "node:crypto";
import { initializeApp, type App } from "firebase-admin/app";
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import { withConcurrency } from "../../lib/concurrency";
import { rollupConfig } from "../../../functions/src/config/read";
import { pause } from "../../../functions/src/model/backoff";
import { counterRef } from "../../../functions/src/model/paths";
import { PARAMS } from "../../../functions/src/model/params";
import { shardStateOf } from "../../../functions/src/model/shards";
import { dayOf } from "../../../functions/src/model/windows";
import { commitMidnight } from "../../../functions/src/rollup/midnight";
import { firestoreRollupStore } from "../../../functions/src/rollup/firestore-store";
import { rollupShardWrite } from "../../../functions/src/rollup/index";
import type { RollupDeps } from "../../../functions/src/rollup/types";
import { createBenchCounter, incrementShard } from "../counters";
import { MIDNIGHT_PROJECT } from "../env";
import type { Ops } from "../ops";
import { counterIdFor, type BenchContext } from "./context";

/** Counters created and rolled up at once while the midnight commit's counters are set up. */
const SETUP_CONCURRENCY = 16;
const DAY_MS = 86_400_000;

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

export async function midnight(ctx: BenchContext, n: number): Promise<MidnightResult> {
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
  const first = await timedRun(atMidnight);
  const moved = await movedCount(db, ids, dayOf(dayClock));
  const second = await timedRun(atMidnight);
  return { counters: n, shards, fromDay, toDay: dayOf(dayClock), first, moved, second };
}

/** A windowed counter with today's window at 1: created, incremented once, and that increment rolled up by the product's rollup. */
async function windowAtOne(app: App, id: string, shards: number, deps: RollupDeps): Promise<void> {
  const counter = await createBenchCounter(app, "ours", id, shards, { windowed: true });
  const write = await incrementShard(counter.parent.firestore, counter);
  // The event of that write, as the trigger would get it (the rollup reads only its counts).
  const shard = { before: shardStateOf({ count: 0, writes: 0 }), after: shardStateOf({ count: 1, writes: 1 }) };
  const outcome = await rollupShardWrite({ eventId: randomUUID(), counterId: id, shardId: String(write.shard), writtenAtUs: write.writtenAtUs, ...shard }, deps);
  if (outcome.kind !== "committed") throw new Error(`setting up the midnight commit: the rollup of counter ${id} ended "${outcome.kind}", not committed`);
}

async function timedRun(deps: RollupDeps): Promise<MidnightRun> {
  const started = performance.now();
  const report = await commitMidnight(deps);
  const durationMs = performance.now() - started;
  return {
    found: report.found,
    outcomes: report.outcomes,
    ops: { invocations: 1, reads: report.ops.reads, writes: report.ops.writes, commitWrites: report.ops.writes, aggregations: report.ops.aggregations, waitMs: report.ops.waitMs, durationMs },
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
