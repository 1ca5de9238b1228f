// What a phase measures, and how:
// - every shard write is recorded with its commit time (the batch's WriteResult.writeTime);
// - every state of every parent is recorded by a snapshot listener, with the parent's update time (the
//   commit time of the write that made it);
// - parent writes are exact counters kept on the parent by the rollups themselves, incremented in the
//   same write that changes `total` (ours `rollup.commits`, naive `writes`), read before and after;
// - drift is read at the end: total − Σ shards (shards read one by one).
//
// Lag of a write W (commit time t): the time from t to the update time of the first parent state that
// covers W. Ours: the state's `rollup.readTime` ≥ t (the product's own coverage rule). Naive: the
// state is at or after t and its total ≥ the true sum just after W (every delta is +1, so the true sum
// only grows). Both times come from the Firestore emulator's clock, under either delivery: production-like
// delivery's random delay is part of the lag, as Eventarc's would be. Workload 3 measures from each
// event's first delivery instead (this machine's clock, which the emulator shares).
import { parentStateOf, readParent, shardSum, type Counter, type ParentState, type Rollup, type ShardWriteRecord } from "./counters";
import type { DeliveryStats } from "./delivery/deliverer";
import { sleep } from "./pace";
import { summarize, type Summary } from "./stats";
import { phasePrefixOf } from "./workloads/context";

/**
 * How a phase's events reached the rollups: the emulator's own delivery (one event at a time across
 * every trigger: docs/benchmark.md), or delivered by the benchmark to the exported handlers:
 * production-like (delivery/deliverer.ts), or workload 3's every event twice in one shuffled order.
 */
export type DeliveryLabel = "emulator" | "production-like" | "all twice, shuffled";

export interface Watch {
  /** Every distinct state seen of this counter's parent, in update-time order. */
  states(counterId: string): ParentState[];
  /** Date.now() of the last new state on any watched parent. */
  lastChangeMs(): number;
  stop(): void;
}

/** Listens to every parent; resolves once each has delivered its first snapshot. */
export async function watchParents(counters: readonly Counter[]): Promise<Watch> {
  const states = new Map<string, ParentState[]>(counters.map((c) => [c.id, []]));
  let lastChange = Date.now();
  let failure: Error | undefined;
  const unsubscribes: (() => void)[] = [];
  await Promise.all(
    counters.map(
      (counter) =>
        new Promise<void>((resolve, reject) => {
          unsubscribes.push(
            counter.parent.onSnapshot(
              (snap) => {
                const state = parentStateOf(counter.rollup, snap);
                const seen = states.get(counter.id)!;
                if (state !== undefined && (seen.length === 0 || seen[seen.length - 1]!.atUs < state.atUs)) {
                  seen.push(state);
                  lastChange = Date.now();
                }
                resolve();
              },
              (error) => {
                failure = error;
                reject(error);
              },
            ),
          );
        }),
    ),
  );
  return {
    states(counterId) {
      if (failure !== undefined) throw failure;
      return states.get(counterId) ?? [];
    },
    lastChangeMs: () => lastChange,
    stop: () => unsubscribes.forEach((unsubscribe) => unsubscribe()),
  };
}

/**
 * Waits until the listeners have seen each parent's current state. A phase whose handlers have all
 * returned is over, but its last parent write may not have reached the listener yet.
 */
export async function caughtUp(counters: readonly Counter[], watch: Watch, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  for (const counter of counters) {
    const { atUs } = await readParent(counter);
    while ((watch.states(counter.id).at(-1)?.atUs ?? 0) < atUs) {
      if (Date.now() - started > timeoutMs) throw new Error(`the listener on ${counter.parent.path} missed its last state`);
      await sleep(20);
    }
  }
}

export interface SettleOptions {
  intervalMs: number;
  timeoutMs: number;
}

/**
 * Waits until every parent's total equals the sum of what was written to its shards, then one more
 * interval (a rollup still in flight would show up in the write count). Gives up when no parent changed
 * for a while (an event was lost or the rollup is stuck) or after the timeout; the drift then says so.
 */
export async function settle(
  counters: readonly Counter[],
  watch: Watch,
  truth: ReadonlyMap<string, number>,
  options: SettleOptions,
): Promise<{ exact: boolean }> {
  const quietMs = Math.max(8_000, 4 * options.intervalMs + 2_000);
  const started = Date.now();
  for (;;) {
    const exact = counters.every((c) => {
      const seen = watch.states(c.id);
      return seen.length > 0 && seen[seen.length - 1]!.total === truth.get(c.id);
    });
    if (exact) {
      await sleep(options.intervalMs + 500);
      return { exact: true };
    }
    const now = Date.now();
    if (now - started > options.timeoutMs) return { exact: false };
    if (now - Math.max(watch.lastChangeMs(), started) > quietMs) return { exact: false };
    await sleep(100);
  }
}

export interface LagSummary extends Summary {
  /** Writes no recorded parent state covers (the total never caught up with them). */
  uncovered: number;
}

export interface PhaseResult {
  workload: string;
  rollup: Rollup;
  delivery: DeliveryLabel;
  /** What this phase's counter ids start with (their "rollup ops" lines are counted by it). */
  opsPrefix: string;
  /** Where the benchmark delivered the events itself: what the delivery did; null for the emulator's. */
  deliveries: DeliveryStats | null;
  counters: number;
  increments: number;
  /** Events delivered, where they are not the increments (workload 11: every write of a comment, counted or not). */
  events?: number;
  /** Exact parent writes by the rollup during the phase (see header). */
  parentWrites: number;
  /** Σ over the phase's counters of (total − Σ shards) once events settled. */
  drift: number;
  countersWithDrift: number;
  settledExactly: boolean;
  /** Where each write's lag starts: its commit, or (workload 3) the first delivery of its event. */
  lagFrom: "commit" | "first delivery";
  lagMs: LagSummary;
  /**
   * Wall time of the phase's load and increments per second through it: the writes (their commits),
   * or in workload 3 the deliveries of their events (each delivered twice).
   */
  loadSeconds: number;
  /** null where the load was not one stream of increments (workload 4: see its per-path table). */
  incrementsPerSecond: number | null;
  /**
   * From the last write's commit (workload 3: the first delivery) until every parent is exact for good
   * (its total equals the final shard sum from that state on), in ms; null if some parent never is.
   */
  settleMs: number | null;
  /** Parent states the listeners saw (≤ parent writes; equal when no state was skipped). */
  statesSeen: number;
}

export interface PhaseInput {
  workload: string;
  rollup: Rollup;
  delivery: DeliveryLabel;
  deliveries?: DeliveryStats;
  counters: readonly Counter[];
  writes: readonly ShardWriteRecord[];
  /** Increments per counter whose commit times are unknown (callables): counted, not in the lag. */
  untimed?: ReadonlyMap<string, number> | undefined;
  watch: Watch;
  /** Parent write counts before the phase, per counter. */
  baselineWrites: ReadonlyMap<string, number>;
  loadSeconds: number;
  /** Whether increments / loadSeconds is a meaningful throughput for this phase. */
  reportThroughput?: boolean;
  settledExactly: boolean;
  /** Workload 3: when each write's event was first delivered (µs), by index into `writes`. */
  lagOriginsUs?: readonly number[];
  /** Workload 3: when the deliveries started (µs); otherwise settling counts from the last write. */
  settleOriginUs?: number;
}

/** Reads the final parents and shards and computes the phase's row. */
export async function measurePhase(input: PhaseInput): Promise<PhaseResult> {
  let parentWrites = 0;
  let drift = 0;
  let countersWithDrift = 0;
  let statesSeen = 0;
  const lags: number[] = [];
  let uncovered = 0;
  let exactAtUs = 0;
  let allExact = true;
  const byCounter = groupWrites(input.writes, input.lagOriginsUs);
  for (const counter of input.counters) {
    const [final, sum] = await Promise.all([readParent(counter), shardSum(counter)]);
    parentWrites += final.writes - (input.baselineWrites.get(counter.id) ?? 0);
    const counterDrift = final.total - sum;
    drift += counterDrift;
    if (counterDrift !== 0) countersWithDrift++;
    const states = input.watch.states(counter.id);
    statesSeen += states.filter((s) => s.writes > (input.baselineWrites.get(counter.id) ?? 0)).length;
    const writes = byCounter.get(counter.id) ?? [];
    for (const lag of lagsOf(counter.rollup, writes, states)) {
      if (lag === null) uncovered++;
      else lags.push(lag);
    }
    const exactFrom = exactSince(states, sum);
    if (exactFrom === null) allExact = false;
    else exactAtUs = Math.max(exactAtUs, exactFrom);
  }
  const settleOriginUs = input.settleOriginUs ?? Math.max(0, ...input.writes.map((w) => w.writtenAtUs));
  const increments = input.writes.length + [...(input.untimed?.values() ?? [])].reduce((a, b) => a + b, 0);
  return {
    workload: input.workload,
    rollup: input.rollup,
    delivery: input.delivery,
    opsPrefix: phasePrefixOf(input.counters[0]!.id),
    deliveries: input.deliveries ?? null,
    counters: input.counters.length,
    increments,
    parentWrites,
    drift,
    countersWithDrift,
    settledExactly: input.settledExactly,
    lagFrom: input.lagOriginsUs === undefined ? "commit" : "first delivery",
    lagMs: { ...summarize(lags), uncovered },
    loadSeconds: input.loadSeconds,
    incrementsPerSecond: input.reportThroughput === false ? null : increments / input.loadSeconds,
    settleMs: allExact && input.writes.length > 0 ? Math.max(0, (exactAtUs - settleOriginUs) / 1000) : null,
    statesSeen,
  };
}

/** Update time of the state from which the total equals `sum` for good; null if the last state differs. */
function exactSince(states: readonly ParentState[], sum: number): number | null {
  let since: number | null = null;
  for (const state of states) {
    if (state.total !== sum) since = null;
    else since ??= state.atUs;
  }
  return since;
}

interface TimedWrite extends ShardWriteRecord {
  originUs: number;
}

export function groupWrites(writes: readonly ShardWriteRecord[], originsUs: readonly number[] | undefined): Map<string, TimedWrite[]> {
  const groups = new Map<string, TimedWrite[]>();
  writes.forEach((write, i) => {
    const list = groups.get(write.counterId) ?? [];
    list.push({ ...write, originUs: originsUs?.[i] ?? write.writtenAtUs });
    groups.set(write.counterId, list);
  });
  for (const list of groups.values()) list.sort((a, b) => a.writtenAtUs - b.writtenAtUs);
  return groups;
}

/** Lag in ms of each write of one counter (null: never covered), by the rules in the header. */
function lagsOf(rollup: Rollup, writes: readonly TimedWrite[], states: readonly ParentState[]): (number | null)[] {
  let trueSum = 0;
  return writes.map((write) => {
    trueSum += write.delta;
    const target = trueSum;
    const covering = states.find((s) =>
      rollup === "ours"
        ? s.coveredUntilUs !== null && s.coveredUntilUs >= write.writtenAtUs
        : s.atUs >= write.writtenAtUs && s.total >= target,
    );
    return covering === undefined ? null : Math.max(0, (covering.atUs - write.originUs) / 1000);
  });
}

/** Parent write counts of the counters right now (the phase's baseline). */
export async function baselineOf(counters: readonly Counter[]): Promise<Map<string, number>> {
  const entries = await Promise.all(counters.map(async (c) => [c.id, (await readParent(c)).writes] as const));
  return new Map(entries);
}
