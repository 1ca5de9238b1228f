// Workload 9: one hot counter. The same load (a steady rate of increments on one counter, production-like
// delivery) on three counters: ours created with the default shape (DEFAULT_SHARDS), free to grow; ours
// with a fixed 10 shards (MAX_GROWN_SHARDS=10 for the phase, so it cannot grow); and the naive trigger on
// 10 shards. What it measures is where the writes land: per second, the most writes any one document of
// the counter took (a shard or the parent), and how the counter's numShards followed the load.
//
// Increments pick their shard as incrementCounter does, from a numShards that may be stale: the callable
// caches each counter's shape for up to SHAPE_CACHE_TTL_MS per instance, so at any moment the instances
// serving a hot counter know numShards as of 0 to SHAPE_CACHE_TTL_MS ago. Each increment here uses the
// parent's numShards as of a uniform random moment in that past (a listener on the parent records every
// value).
import { PARAMS } from "../../../functions/src/model/params";
import { SHAPE_CACHE_TTL_MS } from "../callable";
import type { Counter, ParentState, Rollup, ShardWriteRecord } from "../counters";
import { paced } from "../pace";
import type { PhaseResult } from "../recorder";
import { summarize, type Summary } from "../stats";
import type { BenchContext } from "./context";
import type { Delivery } from "./phase";

/** Increments in flight at most: enough for the rate once the counter has shards to spread them over. */
const MAX_IN_FLIGHT = 64;

/**
 * The window of the sustained rate. Firestore's guidance is about sustained writes per document; and with
 * shards picked at random, one shard's writes over a short time are noise, a Poisson count: at a mean of
 * 0.8/s the busiest of 700 shards takes about 5 in a typical second, and over 10 s windows it passes 20
 * now and then (a few of the ~35,000 shard-windows of a minute's load); over 20 s windows practically never.
 */
export const SUSTAINED_WINDOW_S = 20;

export type HotVariant = "ours, grows" | "ours, fixed" | "naive, fixed";

export interface HotSecond {
  /** Seconds since the load started (this second is [second, second + 1)). */
  second: number;
  /** Increments committed in this second. */
  increments: number;
  /** The most writes one document of the counter took in this second: a shard's increments or the parent's writes. */
  hottest: number;
  /** Which document that was: "parent" or "shard <n>". */
  hottestDoc: string;
  /**
   * The most writes one document took over the SUSTAINED_WINDOW_S seconds from this one, per second: the
   * sustained rate of the busiest document (null in the last seconds, where the window passes the load's end).
   */
  sustained: number | null;
  /** Writes to the parent in this second. */
  parentWrites: number;
  /** numShards on the parent at the end of this second. */
  numShards: number;
}

export interface HotRun {
  variant: HotVariant;
  rollup: Rollup;
  startShards: number;
  endShards: number;
  phase: PhaseResult;
  /** One entry per second of the load. */
  seconds: HotSecond[];
  /** The second from which every later window has its busiest document at ≤ 2 × SHARD_WRITES_PER_SECOND (calmFrom); null: never. */
  calmFromSecond: number | null;
  /** Each increment's latency (the recorded write: queued behind earlier writes to its shard, then the read of its after snapshot). */
  latencyMs: Summary;
  /** The same over the last SUSTAINED_WINDOW_S seconds of the load. */
  lateLatencyMs: Summary;
  /** numShards each time it changed: [second, numShards]. */
  growth: [number, number][];
}

export interface HotResult {
  rate: number;
  seconds: number;
  fixedShards: number;
  shardWritesPerSecond: number;
  runs: HotRun[];
}

export async function hot(ctx: BenchContext, delivery: Delivery): Promise<HotResult> {
  const { hotRate: rate, hotSeconds: seconds, hotFixedShards: fixedShards } = ctx.options;
  const shardWritesPerSecond = Number(process.env.SHARD_WRITES_PER_SECOND);
  const variants: { variant: HotVariant; rollup: Rollup; shards: number; maxGrownShards?: number }[] = [
    { variant: "ours, grows", rollup: "ours", shards: PARAMS.DEFAULT_SHARDS.default },
    { variant: "ours, fixed", rollup: "ours", shards: fixedShards, maxGrownShards: fixedShards },
    { variant: "naive, fixed", rollup: "naive", shards: fixedShards },
  ];
  const runs: HotRun[] = [];
  for (const v of variants) {
    const saved = process.env.MAX_GROWN_SHARDS;
    if (v.maxGrownShards !== undefined) process.env.MAX_GROWN_SHARDS = String(v.maxGrownShards);
    try {
      runs.push(await hotRun(delivery, v.variant, v.rollup, v.shards, rate, seconds, shardWritesPerSecond));
    } finally {
      process.env.MAX_GROWN_SHARDS = saved;
    }
  }
  return { rate, seconds, fixedShards, shardWritesPerSecond, runs };
}

async function hotRun(
  delivery: Delivery,
  variant: HotVariant,
  rollup: Rollup,
  shards: number,
  rate: number,
  seconds: number,
  shardWritesPerSecond: number,
): Promise<HotRun> {
  const key = variant === "ours, grows" ? "hotgrow" : "hotfixed";
  const counter = (await delivery.createCounters(key, rollup, 1, shards))[0]!;
  const known = shapeHistory(counter);
  const latencies: { atMs: number; ms: number }[] = [];
  try {
    const workload = variant === "ours, grows" ? "9 hot, grows" : `9 hot, ${shards} shards`;
    const run = await delivery.run(workload, [counter], async (increment) => {
      // The load is offered for `seconds`: increments not started by then are not sent (a machine that
      // cannot keep up shows a lower rate, not a longer load).
      const endMs = Date.now() + seconds * 1000;
      const made = await paced(rate * seconds, rate, MAX_IN_FLIGHT, async () => {
        const started = Date.now();
        if (started >= endMs) return undefined;
        const record = await increment({ ...counter, numShards: known.asOf(started - Math.random() * SHAPE_CACHE_TTL_MS) });
        latencies.push({ atMs: started, ms: Date.now() - started });
        return record;
      });
      return { writes: made.filter((w): w is ShardWriteRecord => w !== undefined) };
    });
    const startUs = run.startedAtMs * 1000;
    const states = run.states.get(counter.id) ?? [];
    const perSecond = hotSeconds(run.writes, states, startUs, seconds, shards);
    const limit = 2 * shardWritesPerSecond;
    const lateFromMs = run.startedAtMs + (seconds - SUSTAINED_WINDOW_S) * 1000;
    return {
      variant,
      rollup,
      startShards: shards,
      endShards: states.at(-1)?.numShards ?? shards,
      phase: run.result,
      seconds: perSecond,
      calmFromSecond: calmFrom(perSecond, limit),
      latencyMs: summarize(latencies.map((l) => l.ms)),
      lateLatencyMs: summarize(latencies.filter((l) => l.atMs >= lateFromMs).map((l) => l.ms)),
      growth: growthOf(states, startUs, shards),
    };
  } finally {
    known.stop();
  }
}

/** Every numShards the parent has had, with when it was seen, so an increment can use a stale one. */
function shapeHistory(counter: Counter): { asOf(ms: number): number; stop(): void } {
  const seen: { atMs: number; numShards: number }[] = [{ atMs: 0, numShards: counter.numShards }];
  const stop = counter.parent.onSnapshot((snap) => {
    const numShards = snap.get("numShards") as unknown;
    if (typeof numShards === "number" && numShards !== seen.at(-1)!.numShards) seen.push({ atMs: Date.now(), numShards });
  });
  return {
    asOf(ms) {
      let value = seen[0]!.numShards;
      for (const entry of seen) if (entry.atMs <= ms) value = entry.numShards;
      return value;
    },
    stop,
  };
}

/**
 * Per second of the load: the increments, the hottest document (the shard with the most increments, or the
 * parent if it was written more), its sustained rate over the trailing window, and numShards.
 */
export function hotSeconds(
  writes: readonly ShardWriteRecord[],
  states: readonly ParentState[],
  startUs: number,
  seconds: number,
  startShards: number,
): HotSecond[] {
  const secondOf = (us: number) => Math.floor((us - startUs) / 1_000_000);
  const perDoc = Array.from({ length: seconds }, () => new Map<string, number>());
  const bump = (second: number, doc: string, n: number) => {
    const bucket = perDoc[second];
    if (bucket !== undefined) bucket.set(doc, (bucket.get(doc) ?? 0) + n);
  };
  for (const w of writes) bump(secondOf(w.writtenAtUs), `shard ${w.shard}`, 1);
  const increments = perDoc.map((bucket) => [...bucket.values()].reduce((a, b) => a + b, 0));
  // Parent writes: the exact counter the rollups keep on the parent, between consecutive states.
  let previous: ParentState | undefined;
  const numShards: number[] = new Array<number>(seconds).fill(Number.NaN);
  for (const state of states) {
    const second = secondOf(state.atUs);
    if (previous !== undefined && state.writes > previous.writes) bump(second, "parent", state.writes - previous.writes);
    if (second >= 0 && second < seconds) numShards[second] = state.numShards;
    previous = state;
  }
  let shardsNow = startShards;
  return perDoc.map((bucket, second) => {
    if (!Number.isNaN(numShards[second]!)) shardsNow = numShards[second]!;
    let hottest = 0;
    let hottestDoc = "–";
    for (const [doc, n] of bucket) {
      if (n > hottest) [hottest, hottestDoc] = [n, doc];
    }
    const window = new Map<string, number>();
    const end = second + SUSTAINED_WINDOW_S;
    if (end <= seconds) for (let s = second; s < end; s++) for (const [doc, n] of perDoc[s]!) window.set(doc, (window.get(doc) ?? 0) + n);
    const sustained = end <= seconds ? Math.max(0, ...window.values()) / SUSTAINED_WINDOW_S : null;
    return { second, increments: increments[second]!, hottest, hottestDoc, sustained, parentWrites: bucket.get("parent") ?? 0, numShards: shardsNow };
  });
}

/**
 * The first second from which every window of SUSTAINED_WINDOW_S seconds to the end of the load has its
 * busiest document at ≤ limit writes/s; null if the last window is above (or the load is shorter than a window).
 */
export function calmFrom(perSecond: readonly HotSecond[], limit: number): number | null {
  let from: number | null = null;
  for (const s of perSecond) {
    if (s.sustained === null) break;
    if (s.sustained > limit) from = null;
    else from ??= s.second;
  }
  return from;
}

function growthOf(states: readonly ParentState[], startUs: number, startShards: number): [number, number][] {
  const out: [number, number][] = [];
  let last = startShards;
  for (const state of states) {
    if (state.numShards !== last) {
      out.push([Math.round((state.atUs - startUs) / 100_000) / 10, state.numShards]);
      last = state.numShards;
    }
  }
  return out;
}

/** The busiest document's writes per second over the load's last window (null: the load is shorter than one). */
export function lastWindow(run: Pick<HotRun, "seconds">): number | null {
  return run.seconds[run.seconds.length - SUSTAINED_WINDOW_S]?.sustained ?? null;
}
