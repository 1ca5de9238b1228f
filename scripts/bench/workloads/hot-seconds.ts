// Workload 9's measure of a hot counter, pure: per second of the load, the writes of the counter's busiest
// document (a shard or the parent), its sustained rate over a window, numShards, and when the counter
// calmed down (hot.ts records the writes and the parent's states; these turn them into seconds); and what
// a run of the workload found, which hot.ts makes and hot-report.ts reports.
import type { ParentState, Rollup, ShardWriteRecord } from "../counters";
import type { PhaseResult } from "../recorder";
import type { Summary } from "../stats";

/**
 * The window of the sustained rate. Firestore's guidance is about sustained writes per document; and with
 * shards picked at random, one shard's writes over a short time are noise, a Poisson count: at a mean of
 * 0.8/s the busiest of 700 shards takes about 5 in a typical second, and over 10 s windows it passes 20
 * now and then (a few of the ~35,000 shard-windows of a minute's load); over 20 s windows practically never.
 */
export const SUSTAINED_WINDOW_S = 20;

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

export function growthOf(states: readonly ParentState[], startUs: number, startShards: number): [number, number][] {
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
export function lastWindow(run: { seconds: readonly HotSecond[] }): number | null {
  return run.seconds[run.seconds.length - SUSTAINED_WINDOW_S]?.sustained ?? null;
}

export type HotVariant = "ours, grows" | "ours, fixed" | "naive, fixed";

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
