// One schedule of the model check: a seed chooses a counter, a workload (steady, bursty or sparse
// increments, with resets, reshards, and deletes of the counter followed by its creation again), how the
// platform delivers each event (delay, reordering, duplicates, which simulated instance), where invocations
// crash and how the platform retries them, how long an owner carries a chain before it hands over, and
// whether ROLLUP_INTERVAL_MS changes mid-run (a rolling deploy), whether the platform gives up on
// some events for good (the sweep runs every 5 minutes, as the scheduled rollupSweep would, and once more at
// the end), whether the counter starts with a claim the previous version left (its lease), and whether the total
// is mirrored to app documents that the app creates and deletes at any time, also between the steps of a
// commit, and whether the counter is hot enough to grow its shards (growth.ts), with increments that pick
// shards from a stale numShards and shards written before they counted their writes. The real rollup code (rollupShardWrite, sweepRollups) runs every delivery over the
// in-memory World; at the end the properties are checked:
// - every write of the counter's last incarnation is covered (rollup.readTime at or after it) and total = Σ
//   shards — except, in a schedule with dropped events, the writes of dropped events that never got as far as
//   a promise: no one knows of those (the next increment, or reconcile, covers them); no lease is left;
// - with an unchanged interval, no window of one interval holds more than two parent writes' read times;
// - in a schedule without crashes, drops, interval changes, resets, reshards, deletes or churning mirrors,
//   every write is covered within its delivery delay, two intervals and the calls' latency (bounded lag);
// - every mirror target that existed when the total was last written holds that total, and no commit
//   ever said "gone" of a counter whose parent exists;
// - the shards are exactly 0..numShards-1, a commit grows only from the numShards it read, at most x4 and
//   never past MAX_GROWN_SHARDS, and a hot counter (sustained rate well above capacity, no faults) grew.
// Some schedules' counter is windowed (windowed.ts): the schedule then starts just before a UTC midnight,
// each write's day comes from its writer's clock, some writes commit up to an hour after that reading and
// some events come an hour late, the workload may jump days ahead, and the midnight commit runs after each
// midnight and at random times, racing the rollups; windowed.ts says what its windows are held to.
import { sumAndCommit, BoundedMemo } from "../../../functions/src/rollup/commit";
import { noOps } from "../../../functions/src/rollup/ops";
import { rollupShardWrite } from "../../../functions/src/rollup/index";
import { GROW_CHUNK, MAX_STEP_FACTOR, type GrowthSettings } from "../../../functions/src/rollup/growth";
import { ownerKeyOf, staleAfterMsFor } from "../../../functions/src/rollup/plan";
import { sweepRollups } from "../../../functions/src/rollup/sweep";
import { commitMidnight } from "../../../functions/src/rollup/midnight";
import { type NowMemo, type ParentMemo, type ShardWrite } from "../../../functions/src/rollup/types";
import { dayOf, everyDayOpen, nextMidnightMs } from "../../../functions/src/model/windows";
import { remoteStore, SimulatedCrash, type Fault, type Network } from "./remote";
import type { MirrorTarget } from "../../../functions/src/model/mirror-rules";
import { between, chance, pick, rngOf, Sim, type Rng } from "./sim";
import { DAY_MS, midnightsMs, movedFailures, settledFailures, slowLagUs, windowedStartUs, windowedTimes, windowShapeOf, type WindowShape } from "./windowed";
import { World, type WorldMutant } from "./world";

const START_US = 1_800_000_000_000_000; // 2027-01-15, a whole second
const INTERVALS = [200, 500, 1000, 3000];

interface Instance {
  name: string;
  intervalMs: number;
  skewMs: number;
  /** A windowed schedule's day clock, ms off the store's (windowed.ts); the rollup's clock otherwise. */
  daySkewMs: number | null;
  leads: NowMemo;
  parents: ParentMemo;
}

/** What a schedule drew: printed with a failure so a reader sees what kind of schedule broke. */
export interface Shape {
  seed: number;
  intervalMs: number;
  /** The interval every instance moves to, at `changeAtMs` (ms after the start) plus a per-instance lag. */
  newIntervalMs: number | null;
  changeAtMs: number | null;
  instances: number;
  arrivals: "steady" | "bursty" | "sparse" | "hot";
  /** Increments per second of a hot schedule (null otherwise). */
  hotRate: number | null;
  /** SHARD_WRITES_PER_SECOND, MAX_GROWN_SHARDS and the streak a counter must keep to grow. */
  growth: GrowthSettings;
  /** Shards created without `writes` (a counter from before shards counted them). */
  legacyShards: boolean;
  /** How stale an instance's numShards may be when it picks a shard (the shape cache's TTL). */
  staleShapeMs: number;
  writes: number;
  numShards: number;
  resets: number;
  reshards: number;
  /** Deletes of the counter, each followed by its creation again `recreateGapMs` later (0: none). */
  recreations: number;
  recreateGapMs: number;
  /** How long an owner carries a chain before it hands over (RollupDeps.chainBudgetMs). */
  chainBudgetMs: number;
  /** The counter starts with a claim of the previous version pending (its lease), and writes deferred to it. */
  legacyLease: { deferred: number; claimerRetried: boolean } | null;
  maxLatencyMs: number;
  maxDelayMs: number;
  duplicateChance: number;
  crashChance: number;
  retryBaseMs: number;
  /** Chance that the platform gives up on an event: every delivery fails, then it is dropped. */
  dropChance: number;
  /** Mirror targets of the counter (MIRRORS): 0, 1, or 2 (two fields of one document, or two documents). */
  mirrors: MirrorTarget[];
  /** Times the app creates or deletes a target while the workload runs. */
  targetFlips: number;
  /** Chance that the app creates or deletes a target right before each step of a mirrored commit. */
  targetChurn: number;
  /** A windowed counter's schedule (windowed.ts); null for a plain counter. */
  windowed: WindowShape | null;
}

/** The share of schedules whose counter is windowed. */
const WINDOWED_SHARE = 0.3;

const MIRROR_SETS: MirrorTarget[][] = [
  [{ path: "posts/p", field: "likeCount", value: "total" }],
  [{ path: "posts/p", field: "likeCount", value: "total" }, { path: "posts/p", field: "stats.likes", value: "total" }],
  [{ path: "posts/p", field: "likeCount", value: "total" }, { path: "feeds/p", field: "likes", value: "total" }],
];

/** What a windowed schedule went through (null for a plain one). */
export interface WindowedRun {
  /** The store's clock passed a UTC midnight while writes were still landing or being rolled up. */
  crossedMidnight: boolean;
  /** Writes committed more than a minute after the clock reading that chose their day. */
  slowWrites: number;
  /** Events first delivered a minute or more late. */
  lateEvents: number;
  /** Commits by the midnight commit. */
  midnightCommits: number;
}

export interface ScheduleResult {
  shape: Shape;
  windowed: WindowedRun | null;
  /** Property violations; empty when the schedule passed. */
  failures: string[];
  trace: string[];
  deliveries: number;
  crashes: number;
  dropped: number;
  /** Growth steps the counter took. */
  growths: number;
  /** How the resets' writes went (World.resetOutcomes). */
  resets: Record<string, number>;
  /** Rollup commits of a single-shard snapshot sum (functions/src/rollup/plan.ts), and of an aggregation's sum. */
  snapshotCommits: number;
  summedCommits: number;
  /** How reconcile's repairs ended: committed, changed (a rollup or a reset wrote first), gone, threw, … */
  repairs: Record<string, number>;
  /** How the deliveries that completed ended (a commit by its path and, for a chain, how the chain ended). */
  outcomes: Record<string, number>;
}

/** Deliveries of an event after which the simulated platform stops crashing it (so every event completes). */
const CRASHING_ATTEMPTS = 6;
/** Deliveries of a doomed event before the simulated platform gives up on it (24 h of retries, in short). */
const DOOMED_ATTEMPTS = 3;
/** Longest time between a reset's read and its write: a few rollup intervals, so that commits and growth land in between. */
const RESET_WRITE_LAG_MS = 3000;
/** A reset's attempts (reset.ts): a stale read is only another reset, a reshard or a delete in between. */
const RESET_ATTEMPTS = 20;
/** How often the sweep runs in schedules that drop events (rollupSweep: every 5 minutes). */
const SWEEP_EVERY_MS = 300_000;

function shapeOf(seed: number): Shape {
  const rng = rngOf(seed);
  const intervalMs = pick(rng, INTERVALS);
  const changes = chance(rng, 0.3);
  const arrivals = pick(rng, ["steady", "bursty", "sparse", "hot"] as const);
  const shape: Shape = {
    seed,
    intervalMs,
    newIntervalMs: changes ? pick(rng, INTERVALS.filter((i) => i !== intervalMs)) : null,
    changeAtMs: changes ? between(rng, 0, 8000) : null,
    instances: between(rng, 1, 4),
    arrivals,
    hotRate: arrivals === "hot" ? pick(rng, [8, 20, 60]) : null,
    growth: { shardWritesPerSecond: pick(rng, [1, 2]), maxShards: pick(rng, [6, 40, 500]), hotForMs: pick(rng, [1000, 3000]) },
    legacyShards: chance(rng, 0.2),
    staleShapeMs: pick(rng, [0, 5000]),
    writes: arrivals === "hot" ? between(rng, 60, 300) : between(rng, 3, 40),
    // One shard as often as the rest: new counters start with one (DEFAULT_SHARDS) and grow.
    numShards: chance(rng, 0.5) ? 1 : between(rng, 2, 5),
    resets: chance(rng, 0.15) ? between(rng, 1, 2) : 0,
    reshards: chance(rng, 0.2) ? between(rng, 1, 2) : 0,
    maxLatencyMs: pick(rng, [1, 10, 40]),
    maxDelayMs: pick(rng, [5, 200, 1500]),
    duplicateChance: pick(rng, [0, 0.1, 0.4]),
    crashChance: pick(rng, [0, 0.15, 0.4]),
    retryBaseMs: pick(rng, [200, 2000, 10_000]),
    dropChance: chance(rng, 0.2) ? pick(rng, [0.05, 0.2]) : 0,
    ...(chance(rng, 0.4)
      ? { mirrors: pick(rng, MIRROR_SETS), targetFlips: between(rng, 0, 6), targetChurn: pick(rng, [0, 0.1, 0.3, 0.6]) }
      : { mirrors: [], targetFlips: 0, targetChurn: 0 }),
    windowed: null,
    recreations: 0,
    recreateGapMs: 0,
    chainBudgetMs: 60_000,
    legacyLease: null,
  };
  // Drawn after the rest, so that the schedules of before keep their draws up to here.
  if (chance(rng, WINDOWED_SHARE)) {
    const win = windowShapeOf(rng, shape.writes);
    shape.windowed = win;
    if (win.cluster !== null) shape.writes = win.cluster;
    if (win.windowMirror !== null && shape.mirrors.length > 0) shape.mirrors = [...shape.mirrors, win.windowMirror];
  }
  shape.chainBudgetMs = pick(rng, [2_000, 8_000, 60_000]);
  if (shape.windowed === null && chance(rng, 0.2)) {
    // Created again at once (a deletion with nothing to clean up), within an interval, or later.
    shape.recreations = between(rng, 1, 2);
    shape.recreateGapMs = pick(rng, [0, Math.round(intervalMs / 3), intervalMs, 3000]);
  }
  if (shape.windowed === null && chance(rng, 0.1)) shape.legacyLease = { deferred: between(rng, 1, 5), claimerRetried: chance(rng, 0.5) };
  return shape;
}

/** When each write lands, in ms after the start. */
function arrivalTimes(rng: Rng, shape: Shape): number[] {
  const times: number[] = [];
  let t = between(rng, 0, shape.intervalMs);
  while (times.length < shape.writes) {
    if (shape.arrivals === "steady") {
      times.push(t);
      t += Math.max(1, Math.round(shape.intervalMs * (0.05 + rng() * 1.45)));
    } else if (shape.arrivals === "bursty") {
      const burst = between(rng, 2, 12);
      for (let i = 0; i < burst && times.length < shape.writes; i++) times.push(t + between(rng, 0, 60));
      t += Math.round(shape.intervalMs * (0.3 + rng() * 3));
    } else if (shape.arrivals === "hot") {
      // A sustained rate, well past a few shards' capacity: Poisson arrivals at hotRate per second.
      times.push(t);
      t += Math.max(1, Math.round((-Math.log(1 - rng()) * 1000) / shape.hotRate!));
    } else {
      times.push(t);
      t += Math.max(1, Math.round(-Math.log(1 - rng()) * shape.intervalMs * 2.5));
    }
  }
  return times.sort((a, b) => a - b);
}

/** Where a crashing invocation of the rollup stops (remote.ts): after a stage, or at its n-th Firestore call. */
export function faultOf(rng: Rng): Fault {
  const at = pick(rng, ["after-sum", "before-commit", "after-commit", "call"] as const);
  return at === "call" ? { at, n: between(rng, 0, 6), applied: chance(rng, 0.5) } : { at };
}

/** What a run may change: a mutant of the world's writers (functions/test/model.test.ts expects it caught). */
export interface RunOptions {
  mutant?: WorldMutant;
}

export async function runSchedule(seed: number, options: RunOptions = {}): Promise<ScheduleResult> {
  const shape = shapeOf(seed);
  const rng = rngOf(seed ^ 0x5bd1e995);
  const win = shape.windowed;
  const startUs = win === null ? START_US : windowedStartUs(win);
  const sim = new Sim(startUs);
  const world = new World(sim, { mirrors: shape.mirrors, rng, mutant: options.mutant });
  const net: Network = { sim, rng, maxLatencyMs: shape.maxLatencyMs };
  const counterId = `model-${seed}`;
  const trace: string[] = [];
  const failures: string[] = [];
  let deliveries = 0;
  let crashes = 0;
  const outcomes: Record<string, number> = {};
  const doomed = new Set<string>();
  const dropped = new Set<string>();
  const ms = () => ((sim.now() - startUs) / 1000).toFixed(3);
  const log = (line: string) => trace.push(`${ms().padStart(10)} ms  ${line}`);

  const instances: Instance[] = Array.from({ length: shape.instances }, (_, i) => ({
    name: `i${i}`,
    intervalMs: shape.intervalMs,
    skewMs: between(rng, -30, 30),
    daySkewMs: win === null ? null : win.daySkewsMs[i]!,
    leads: new BoundedMemo(),
    parents: new BoundedMemo(),
  }));
  const dayClockOf = (instance: Instance): { dayClockMs?: () => number } =>
    instance.daySkewMs === null ? {} : { dayClockMs: () => Math.floor(sim.now() / 1000) + instance.daySkewMs! };
  // A windowed schedule's writers (and resetters) read clocks a few ms off the store's.
  const writerClockMs = () => Math.floor(sim.now() / 1000) + pick(rng, win!.writerSkewsMs);
  const run: WindowedRun | null = win === null ? null : { crossedMidnight: false, slowWrites: 0, lateEvents: 0, midnightCommits: 0 };
  world.createCounter(counterId, shape.numShards, shape.legacyShards, win === null ? null : dayOf(writerClockMs()));
  // numShards over time, for instances whose cached shape is up to staleShapeMs old.
  const shapes: { atUs: number; numShards: number }[] = [{ atUs: startUs, numShards: shape.numShards }];
  const knownShards = (): number => {
    const asOfUs = sim.now() - between(rng, 0, shape.staleShapeMs * 1000);
    const current = world.state(counterId).numShards;
    if (shapes[shapes.length - 1]!.numShards !== current) shapes.push({ atUs: sim.now(), numShards: current });
    let known = shapes[0]!.numShards;
    for (const s of shapes) if (s.atUs <= asOfUs) known = s.numShards;
    return known;
  };

  const deliver = (event: ShardWrite, attempt: number) => {
    const instance = pick(rng, instances);
    const crashing = doomed.has(event.eventId) || (attempt < CRASHING_ATTEMPTS && chance(rng, shape.crashChance));
    const fault: Fault = crashing ? faultOf(rng) : { at: "none" };
    const intervalMs = instance.intervalMs;
    deliveries++;
    const label = `${event.eventId} (write ${((event.writtenAtUs - startUs) / 1000).toFixed(3)}) #${attempt} on ${instance.name} [${intervalMs} ms${fault.at === "none" ? "" : `, crash ${JSON.stringify(fault)}`}]`;
    log(`deliver ${label}`);
    rollupShardWrite(event, {
      store: remoteStore(world, net, fault),
      intervalMs,
      staleAfterMs: staleAfterMsFor(intervalMs),
      nowMs: () => Math.floor(sim.now() / 1000) + instance.skewMs,
      ...dayClockOf(instance),
      sleep: (waitMs) => sim.sleep(waitMs),
      leads: instance.leads,
      parents: instance.parents,
      growth: shape.growth,
      chainBudgetMs: shape.chainBudgetMs,
    })
      .then((outcome) => {
        log(`done    ${label}: ${JSON.stringify({ ...outcome, ops: undefined })}`);
        const name = outcome.kind === "committed" ? `${outcome.path}${outcome.end === undefined ? "" : `-${outcome.end}`}` : outcome.kind === "defer" && outcome.memo === true ? "defer-memo" : outcome.kind;
        outcomes[name] = (outcomes[name] ?? 0) + 1;
        // A doomed event's instance dies after the work, before the platform hears back: it failed.
        if (doomed.has(event.eventId)) throw new SimulatedCrash("after the invocation returned");
      })
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        log(`threw   ${label}: ${message}`);
        if (!(error instanceof SimulatedCrash) && !message.includes("retrying the event")) failures.push(`unexpected error: ${message}`);
        crashes++;
        if (doomed.has(event.eventId) && attempt + 1 >= DOOMED_ATTEMPTS) {
          dropped.add(event.eventId);
          log(`dropped ${event.eventId}: the platform gives up on it`);
          return;
        }
        // The platform retries a failed event with exponential backoff.
        const backoffMs = Math.min(shape.retryBaseMs * 2 ** attempt, 600_000) * (0.5 + rng());
        sim.at(sim.now() + Math.round(backoffMs * 1000), () => deliver(event, attempt + 1));
      });
  };

  const publish = (events: ShardWrite[]) => {
    for (const event of events) {
      if (chance(rng, shape.dropChance)) doomed.add(event.eventId);
      if (win !== null && chance(rng, win.lateChance)) {
        // Late: yesterday's writes delivered after midnight, and after rollups that covered later writes.
        run!.lateEvents++;
        sim.at(sim.now() + between(rng, 60_000_000, 4_200_000_000), () => deliver(event, 0));
      } else sim.at(sim.now() + between(rng, 0, shape.maxDelayMs * 1000), () => deliver(event, 0));
      if (chance(rng, shape.duplicateChance)) sim.at(sim.now() + between(rng, 0, 3_000_000), () => deliver(event, 0));
    }
  };

  const drawn = arrivalTimes(rng, shape);
  const times = win === null ? drawn : windowedTimes(rng, drawn, win);
  const endMs = times[times.length - 1]!;
  // The app's documents: each target exists or not from the start, and the app creates and deletes them
  // while the workload runs, also between the steps of a commit (until a little after the last write, so
  // that every schedule can settle).
  const flip = () => {
    const path = pick(rng, world.targetPaths());
    world.flipTarget(path);
    log(`app ${path} flipped`);
  };
  for (const path of world.targetPaths()) if (chance(rng, 0.5)) world.flipTarget(path);
  for (let i = 0; i < shape.targetFlips; i++) sim.at(startUs + between(rng, 0, endMs) * 1000, flip);
  const churnUntilUs = startUs + (endMs + 10_000) * 1000;
  world.mirrorStep = async () => {
    await sim.sleep(between(rng, 0, shape.maxLatencyMs * 1000) / 1000);
    if (sim.now() < churnUntilUs && chance(rng, shape.targetChurn)) flip();
  };
  const increment = (delta: number, day?: { day: string; clockMs: number }) => {
    if (!world.exists(counterId)) {
      log(`write   ${delta > 0 ? "+" : ""}${delta} refused: the counter is deleted (not-found)`);
      return;
    }
    const event = world.increment(counterId, between(rng, 0, 9999), delta, knownShards(), day);
    log(`write   ${event.eventId} shard ${event.shardId} ${delta > 0 ? "+" : ""}${delta}${day === undefined ? "" : ` on ${day.day}`}`);
    publish([event]);
  };
  for (const t of times) {
    sim.at(startUs + t * 1000, () => {
      const delta = chance(rng, 0.2) ? -between(rng, 1, 3) : between(rng, 1, 5);
      if (win === null) return increment(delta);
      // The day is the writer's clock's; the write commits now, or (slow) up to DAY_CLOSES_AFTER_MS after that reading.
      const clockMs = writerClockMs();
      const day = { day: dayOf(clockMs), clockMs };
      const lagUs = chance(rng, win.slowChance) ? slowLagUs(rng, sim.now(), clockMs) : 0;
      if (lagUs === 0) return increment(delta, day);
      if (lagUs < 60_000_000) return void sim.at(sim.now() + lagUs, () => increment(delta, day));
      run!.slowWrites++;
      log(`slow    write ${delta > 0 ? "+" : ""}${delta} on ${day.day} (clock ${new Date(clockMs).toISOString()}) commits in ${(lagUs / 1000).toFixed(3)} ms`);
      sim.at(sim.now() + lagUs, () => increment(delta, day));
    });
  }
  // A reset reads a snapshot, then writes up to RESET_WRITE_LAG_MS later (reset.ts): increments, rollup
  // commits, growth, reshards and the other reset land in between; a stale read is read again.
  const reset = (attempt: number) => {
    if (!world.exists(counterId)) {
      log("reset refused: the counter is deleted (not-found)");
      return;
    }
    const clockMs = win === null ? undefined : writerClockMs();
    const snap = world.resetRead(counterId, clockMs);
    log(`reset read at ${((snap.read.readUs - startUs) / 1000).toFixed(3)}${snap.today === null ? "" : ` on ${snap.today}`} (attempt ${attempt})`);
    sim.at(sim.now() + between(rng, 0, RESET_WRITE_LAG_MS * 1000), () => {
      const result = world.resetWrite(counterId, snap);
      log(`reset write: ${result.kind}`);
      if (result.kind === "committed") publish(result.events);
      else if (result.kind === "retry" && attempt < RESET_ATTEMPTS) sim.at(sim.now() + between(rng, 0, 50_000), () => reset(attempt + 1));
      else if (result.kind === "retry") failures.push(`a reset kept reading again (${RESET_ATTEMPTS} attempts)`);
    });
  };
  for (let i = 0; i < shape.resets; i++) sim.at(startUs + between(rng, 0, endMs) * 1000, () => reset(1));
  for (let i = 0; i < shape.reshards; i++) {
    sim.at(startUs + between(rng, 0, endMs) * 1000, () => {
      // Down to one shard often: late events of writes made before it must not pass for the whole sum
      // (functions/src/rollup/plan.ts, the single-shard snapshot sum).
      const to = chance(rng, 0.4) ? 1 : between(rng, 2, 6);
      if (!world.exists(counterId)) {
        log(`reshard to ${to} refused: the counter is deleted (not-found)`);
        return;
      }
      log(`reshard to ${to}`);
      publish(world.reshard(counterId, to));
    });
  }
  // deleteCounter, then createCounter with the same id (its shards anew): late events of the deleted one's
  // writes come to the new one, and instances remember the deleted one's parent and promise. The first comes
  // right before the last write in half of these schedules: that write then lands on the new counter while
  // instances still hold the old one's promise, and no later write covers it.
  const recreateAt = (i: number): number => (i === 0 && times.length > 1 && chance(rng, 0.5) ? times[times.length - 2]! + (times[times.length - 1]! - times[times.length - 2]!) / 2 : between(rng, 0, endMs));
  for (let i = 0; i < shape.recreations; i++) {
    sim.at(startUs + Math.round(recreateAt(i) * 1000), () => {
      if (!world.exists(counterId)) return;
      world.deleteCounter(counterId);
      log("delete the counter");
      sim.at(sim.now() + shape.recreateGapMs * 1000, () => {
        if (world.exists(counterId)) return;
        const numShards = chance(rng, 0.5) ? 1 : between(rng, 2, 5);
        world.createCounter(counterId, numShards, false, null);
        log(`create the counter again with ${numShards} shard(s)`);
      });
    });
  }
  if (shape.newIntervalMs !== null) {
    for (const instance of instances) {
      sim.at(startUs + (shape.changeAtMs! + between(rng, 0, 2000)) * 1000, () => {
        instance.intervalMs = shape.newIntervalMs!;
        log(`${instance.name} now runs with ROLLUP_INTERVAL_MS=${shape.newIntervalMs}`);
      });
    }
  }

  const sweep = () => {
    const instance = pick(rng, instances);
    log(`sweep on ${instance.name}`);
    sweepRollups({
      store: remoteStore(world, net, { at: "none" }),
      intervalMs: instance.intervalMs,
      staleAfterMs: staleAfterMsFor(instance.intervalMs),
      nowMs: () => Math.floor(sim.now() / 1000),
      sleep: (waitMs: number) => sim.sleep(waitMs),
      growth: shape.growth,
    }).then(
      (report) => log(`swept: ${JSON.stringify({ ...report, ops: undefined })}`),
      (error: unknown) => failures.push(`the sweep threw: ${String(error)}`),
    );
  };
  {
    // Every 5 minutes while anything else is to come, the days-long quiet of a jump skipped (nothing happens in
    // it); and once more after everything else (below).
    const periodUs = SWEEP_EVERY_MS * 1000;
    const tick = () => {
      const nextUs = sim.nextAtUs();
      sweep();
      if (nextUs !== undefined) sim.at(sim.now() + periodUs * Math.max(1, Math.ceil((nextUs - sim.now()) / periodUs)), tick);
    };
    sim.at(startUs + periodUs, tick);
  }
  if (shape.legacyLease !== null) {
    // Before the deploy, the previous version's claimer claimed the slot of its write and writes after it
    // deferred to its lease; the claimer failed (its retry, if it comes, runs this version).
    const legacy = shape.legacyLease;
    const writes: ShardWrite[] = [];
    for (let i = 0; i < legacy.deferred; i++) writes.push(world.increment(counterId, between(rng, 0, 9999), between(rng, 1, 5), shape.numShards));
    const claimer = writes[0]!;
    world.plantLegacyLease(counterId, { eventId: ownerKeyOf(claimer), dueMs: Math.floor(sim.now() / 1000) + shape.intervalMs });
    log(`legacy lease: ${writes.map((w) => w.eventId).join(", ")} deferred to the claim of ${claimer.eventId}${legacy.claimerRetried ? ", whose retry comes" : ""}`);
    if (legacy.claimerRetried) sim.at(sim.now() + between(rng, 0, 20_000_000), () => deliver(claimer, 1));
  }

  // Reconcile's repair (functions/src/reconcile/), in a quarter of the schedules: the rollup's own commit of
  // a fresh sum, every kept day summed again, onto the parent as read, racing the rollups, resets, reshards and
  // the midnight commit, and crashing as often as they do (a failed repair is only run again by hand). Drawn
  // from a generator of its own, so that the schedules without repairs are the ones they were before.
  const repairRng = rngOf(seed ^ 0x2545f491);
  const repairs: Record<string, number> = {};
  const repairNet: Network = { sim, rng: repairRng, maxLatencyMs: shape.maxLatencyMs };
  const repair = () => {
    const instance = pick(repairRng, instances);
    const f: Fault = chance(repairRng, shape.crashChance) ? faultOf(repairRng) : { at: "none" };
    log(`reconcile --fix on ${instance.name}${f.at === "none" ? "" : ` [crash ${JSON.stringify(f)}]`}`);
    const store = remoteStore(world, repairNet, f, "reconcile");
    const nowMs = () => Math.floor(sim.now() / 1000) + instance.skewMs;
    const deps = { store, intervalMs: 0, staleAfterMs: 0, nowMs, ...dayClockOf(instance), sleep: (waitMs: number) => sim.sleep(waitMs) };
    store
      .readParent(counterId)
      .then((parent) => {
        if (!parent.view.parentExists) return "gone";
        const days = parent.view.days == null ? parent.view.days : everyDayOpen(parent.view.days.moveAtMs);
        const target = { counterId, parent: { ...parent, view: { ...parent.view, days } }, targetUs: 0, leadWrittenAtUs: null, sinceUs: nowMs() * 1000, reconciled: {} };
        return sumAndCommit({ deps, ops: noOps() }, target).then((step) => step.kind);
      })
      .then(
        (outcome) => {
          repairs[outcome] = (repairs[outcome] ?? 0) + 1;
          log(`repaired: ${outcome}`);
        },
        // A repair that throws as a rollup may (a crash, mirror targets that kept flipping) fixed nothing: its one
        // write is atomic, and every write it made is held to the truth by the world, as the rollup's are.
        (error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          repairs.threw = (repairs.threw ?? 0) + 1;
          log(`repair threw: ${message}`);
          if (!(error instanceof SimulatedCrash) && !message.includes("retrying the event")) failures.push(`reconcile's repair threw: ${message}`);
        },
      );
  };
  if (chance(repairRng, 0.25)) {
    for (let i = between(repairRng, 1, 3); i > 0; i--) sim.at(startUs + between(repairRng, 0, endMs + 2000) * 1000, repair);
  }

  // The midnight commit (rollupWindows), crashing as often as the invocations, over a network of its own
  // latency: a slow one finds a counter, and rollups commit onto it before it does.
  const midnightNet: Network = { sim, rng, maxLatencyMs: win?.midnightLatencyMs ?? shape.maxLatencyMs };
  const midnight = (fault?: Fault) => {
    const instance = pick(rng, instances);
    const f: Fault = fault ?? (chance(rng, shape.crashChance) ? faultOf(rng) : { at: "none" });
    log(`midnight commit on ${instance.name}${f.at === "none" ? "" : ` [crash ${JSON.stringify(f)}]`}`);
    commitMidnight(
      {
        store: remoteStore(world, midnightNet, f, "midnight"),
        intervalMs: instance.intervalMs,
        staleAfterMs: staleAfterMsFor(instance.intervalMs),
        nowMs: () => Math.floor(sim.now() / 1000) + instance.skewMs,
        ...dayClockOf(instance),
        sleep: (waitMs) => sim.sleep(waitMs),
        growth: shape.growth,
      },
    ).then(
      (report) => log(`moved:  ${JSON.stringify({ found: report.found, outcomes: report.outcomes })}`),
      (error: unknown) => failures.push(`the midnight commit threw: ${String(error)}`),
    );
  };
  if (win !== null) {
    // After every midnight the workload spans (the scheduled run comes within 10 minutes; one may come at
    // once, racing the rollups of writes at midnight), and at random times while writes land.
    for (const m of midnightsMs(win.lastDay, startUs / 1000 + endMs + 2 * 3_600_000)) {
      if (chance(rng, 0.9)) sim.at((m + between(rng, 0, 600_000)) * 1000, () => midnight());
      for (let i = between(rng, 0, 2); i > 0; i--) sim.at((m + between(rng, 0, 400)) * 1000, () => midnight());
    }
    for (let i = 0; i < win.racingRuns; i++) sim.at(startUs + between(rng, 0, endMs + 3_600_000) * 1000, () => midnight());
  }

  await sim.run();
  // Retries are over and nothing else will come: the next run of the sweep fulfils what is left (a promise
  // whose owner's retry came early and returned, one whose owner's event was dropped, a legacy claim).
  sim.at(sim.now() + SWEEP_EVERY_MS * 1000, sweep);
  await sim.run();

  const state = world.state(counterId);
  const uncovered = state.writes.filter((w) => state.coveredUntilUs === null || w.atUs > state.coveredUntilUs);
  // The one loss no one can repair: an event the platform dropped before it ever made a promise.
  const excused = uncovered.filter((w) => dropped.has(w.eventId) && !world.promisers.has(w.claimKey));
  const lost = uncovered.filter((w) => !excused.includes(w));
  if (lost.length > 0) {
    failures.push(
      `${lost.length} write(s) not covered: rollup.readTime ${state.coveredUntilUs === null ? "absent" : ((state.coveredUntilUs - startUs) / 1000).toFixed(3)} ms, ` +
        `uncovered writes at ${lost.map((w) => `${((w.atUs - startUs) / 1000).toFixed(3)} (${w.eventId}${dropped.has(w.eventId) ? ", dropped after its promise" : ""})`).join(", ")} ms`,
    );
  }
  if (uncovered.length === 0 && world.exists(counterId) && state.total !== state.shardSum) failures.push(`total ${state.total} != sum of the shards ${state.shardSum}`);
  if (state.lease !== null) failures.push(`a claim of the previous version due at ${((state.lease.data.dueMs * 1000 - startUs) / 1000).toFixed(3)} ms is left after the sweep`);
  const clean = shape.crashChance === 0 && shape.dropChance === 0 && shape.newIntervalMs === null && shape.resets === 0 && shape.reshards === 0 &&
    shape.recreations === 0 && shape.targetFlips === 0 && shape.targetChurn === 0 && shape.legacyLease === null && win === null;
  if (clean) {
    // Bounded lag: a write is deferred to a promise due less than an interval after it, or commits at once.
    const boundUs = (shape.maxDelayMs + 2 * shape.intervalMs + 10 * shape.maxLatencyMs + 100) * 1000;
    // Reconcile's repairs cover writes as the rollup's commits do.
    const covering = state.commits.filter((c) => c.source !== "midnight");
    const late = state.writes.flatMap((w) => {
      const first = covering.find((c) => c.readUs >= w.atUs);
      return first !== undefined && first.atUs - w.atUs > boundUs ? [`${w.eventId} (write ${((w.atUs - startUs) / 1000).toFixed(3)}) covered after ${((first.atUs - w.atUs) / 1000).toFixed(3)} ms`] : [];
    });
    if (late.length > 0) failures.push(`covered later than ${boundUs / 1000} ms: ${late.slice(0, 5).join(", ")}`);
  }
  failures.push(...world.violations);
  if (state.staleMirrors.length > 0) failures.push(`mirror targets not holding the total: ${state.staleMirrors.join(", ")}`);
  if (state.misplacedShards.length > 0) failures.push(`shards outside 0..${state.numShards - 1}: ${state.misplacedShards.join(", ")}`);
  for (const g of state.growths) {
    if (g.to > g.from * MAX_STEP_FACTOR || g.to > g.from + GROW_CHUNK || g.to > shape.growth.maxShards) {
      failures.push(`grew ${g.from} -> ${g.to} in one step (at most x${MAX_STEP_FACTOR}, +${GROW_CHUNK}, ${shape.growth.maxShards} shards)`);
    }
  }
  if (state.growths.length > 0) log(`grew: ${state.growths.map((g) => `${g.from}->${g.to} at ${((g.atUs - startUs) / 1000).toFixed(0)} ms`).join(", ")}`);
  const hotEnough = shape.hotRate !== null && shape.hotRate >= 4 * shape.numShards * shape.growth.shardWritesPerSecond && shape.growth.maxShards > shape.numShards;
  const undisturbed = !shape.legacyShards && shape.recreations === 0 && shape.crashChance === 0 && shape.dropChance === 0 && shape.reshards === 0 && shape.resets === 0 &&
    (win === null || (win.cluster === null && win.jumpDays === null && win.slowChance === 0));
  if (hotEnough && undisturbed && endMs > 3 * shape.growth.hotForMs && state.growths.length === 0) {
    failures.push(`a counter at ${shape.hotRate} writes/s for ${endMs} ms on ${shape.numShards} shards never grew`);
  }
  if (shape.newIntervalMs === null) {
    // The rollup's own writes: the midnight commit adds one a day on top (midnight.ts).
    // Per incarnation: a counter created again starts with a leading edge of its own.
    for (const incarnation of new Set(state.commits.map((c) => c.incarnationUs))) {
      const commits = state.commits.filter((c) => c.source === "rollup" && c.incarnationUs === incarnation);
      const busiest = mostWithin(commits.map((c) => c.readUs), shape.intervalMs * 1000);
      if (busiest.count > 2) {
        failures.push(`${busiest.count} parent writes read within one interval (${shape.intervalMs} ms), from ${((busiest.fromUs - startUs) / 1000).toFixed(3)} ms`);
      }
    }
  }
  if (win !== null && run !== null) {
    const settled = state.windowed!;
    const lastUs = Math.max(startUs, ...state.writes.map((w) => w.atUs), ...state.commits.filter((c) => c.source === "rollup").map((c) => c.readUs));
    run.crossedMidnight = dayOf(startUs / 1000) !== dayOf(lastUs / 1000);
    failures.push(...settledFailures(settled, world.trueDays(counterId, settled.sinceUs)));
    // A later day: the midnight commit moves the windows of a counter no one touches any more.
    // At least a minute after midnight: the instance that runs it may have a day clock up to a minute behind.
    const atMs = nextMidnightMs(sim.now() / 1000) + (win.finalDays - 1) * DAY_MS + between(rng, 61_000, 600_000);
    const seen = world.violations.length;
    sim.at(atMs * 1000, () => midnight({ at: "none" }));
    await sim.run();
    failures.push(...world.violations.slice(seen));
    const moved = world.state(counterId);
    failures.push(...movedFailures(moved.windowed!, world.trueDays(counterId, moved.windowed!.sinceUs), atMs));
    if (moved.staleMirrors.length > 0) failures.push(`after the midnight commit, mirror targets not holding their values: ${moved.staleMirrors.join(", ")}`);
    run.midnightCommits = moved.commits.filter((c) => c.source === "midnight").length;
    log(`windows ${JSON.stringify(moved.windowed)}`);
  }
  return { shape, windowed: run, failures, trace, deliveries, crashes, dropped: dropped.size, growths: state.growths.length, resets: world.resetOutcomes, snapshotCommits: world.snapshotCommits, summedCommits: world.summedCommits, repairs, outcomes };
}

/** The most of `timesUs` within any half-open window of `windowUs`, and where that window starts. */
export function mostWithin(timesUs: number[], windowUs: number): { count: number; fromUs: number } {
  const sorted = [...timesUs].sort((a, b) => a - b);
  let best = { count: 0, fromUs: 0 };
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + windowUs) j++;
    if (j - i > best.count) best = { count: j - i, fromUs: sorted[i]! };
  }
  return best;
}
