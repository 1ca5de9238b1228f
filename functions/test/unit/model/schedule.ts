// One schedule of the model check: a seed chooses a counter, a workload (steady, bursty or sparse
// increments, with resets and reshards), how the platform delivers each event (delay, reordering,
// duplicates, which simulated instance), where invocations crash and how the platform retries them, and
// whether ROLLUP_INTERVAL_MS changes mid-run (a rolling deploy). The real rollup code (rollupShardWrite)
// runs every delivery over the in-memory World; at the end the properties are checked.
import { rollupShardWrite, staleAfterMsFor, type ClaimMemo, type ShardWrite } from "../../../src/counters/rollup";
import { remoteStore, SimulatedCrash, type Fault, type Network } from "./remote";
import { between, chance, pick, rngOf, Sim, type Rng } from "./sim";
import { World } from "./world";

const START_US = 1_800_000_000_000_000; // 2027-01-15, a whole second
const INTERVALS = [200, 500, 1000, 3000];

interface Instance {
  name: string;
  intervalMs: number;
  skewMs: number;
  claims: ClaimMemo;
}

/** What a schedule drew: printed with a failure so a reader sees what kind of schedule broke. */
export interface Shape {
  seed: number;
  intervalMs: number;
  /** The interval every instance moves to, at `changeAtMs` (ms after the start) plus a per-instance lag. */
  newIntervalMs: number | null;
  changeAtMs: number | null;
  instances: number;
  arrivals: "steady" | "bursty" | "sparse";
  writes: number;
  numShards: number;
  resets: number;
  reshards: number;
  maxLatencyMs: number;
  maxDelayMs: number;
  duplicateChance: number;
  crashChance: number;
  retryBaseMs: number;
}

export interface ScheduleResult {
  shape: Shape;
  /** Property violations; empty when the schedule passed. */
  failures: string[];
  trace: string[];
  deliveries: number;
  crashes: number;
}

/** Deliveries of an event after which the simulated platform stops crashing it (so every event completes). */
const CRASHING_ATTEMPTS = 6;

function shapeOf(seed: number): Shape {
  const rng = rngOf(seed);
  const intervalMs = pick(rng, INTERVALS);
  const changes = chance(rng, 0.3);
  return {
    seed,
    intervalMs,
    newIntervalMs: changes ? pick(rng, INTERVALS.filter((i) => i !== intervalMs)) : null,
    changeAtMs: changes ? between(rng, 0, 8000) : null,
    instances: between(rng, 1, 4),
    arrivals: pick(rng, ["steady", "bursty", "sparse"] as const),
    writes: between(rng, 3, 40),
    numShards: between(rng, 1, 5),
    resets: chance(rng, 0.15) ? between(rng, 1, 2) : 0,
    reshards: chance(rng, 0.15) ? between(rng, 1, 2) : 0,
    maxLatencyMs: pick(rng, [1, 10, 40]),
    maxDelayMs: pick(rng, [5, 200, 1500]),
    duplicateChance: pick(rng, [0, 0.1, 0.4]),
    crashChance: pick(rng, [0, 0.15, 0.4]),
    retryBaseMs: pick(rng, [200, 2000, 10_000]),
  };
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
    } else {
      times.push(t);
      t += Math.max(1, Math.round(-Math.log(1 - rng()) * shape.intervalMs * 2.5));
    }
  }
  return times.sort((a, b) => a - b);
}

function faultOf(rng: Rng): Fault {
  const at = pick(rng, ["after-claim", "after-sum", "before-commit", "after-commit", "call"] as const);
  return at === "call" ? { at, n: between(rng, 0, 6), applied: chance(rng, 0.5) } : { at };
}

export async function runSchedule(seed: number): Promise<ScheduleResult> {
  const shape = shapeOf(seed);
  const rng = rngOf(seed ^ 0x5bd1e995);
  const sim = new Sim(START_US);
  const world = new World(sim);
  const net: Network = { sim, rng, maxLatencyMs: shape.maxLatencyMs };
  const counterId = `model-${seed}`;
  const trace: string[] = [];
  const failures: string[] = [];
  let deliveries = 0;
  let crashes = 0;
  const ms = () => ((sim.now() - START_US) / 1000).toFixed(3);
  const log = (line: string) => trace.push(`${ms().padStart(10)} ms  ${line}`);

  const instances: Instance[] = Array.from({ length: shape.instances }, (_, i) => ({
    name: `i${i}`,
    intervalMs: shape.intervalMs,
    skewMs: between(rng, -30, 30),
    claims: new Map(),
  }));
  world.createCounter(counterId, shape.numShards);

  const deliver = (event: ShardWrite, attempt: number) => {
    const instance = pick(rng, instances);
    const fault: Fault = attempt < CRASHING_ATTEMPTS && chance(rng, shape.crashChance) ? faultOf(rng) : { at: "none" };
    const intervalMs = instance.intervalMs;
    deliveries++;
    const label = `${event.eventId} (write ${((event.writtenAtUs - START_US) / 1000).toFixed(3)}) #${attempt} on ${instance.name} [${intervalMs} ms${fault.at === "none" ? "" : `, crash ${JSON.stringify(fault)}`}]`;
    log(`deliver ${label}`);
    rollupShardWrite(event, {
      store: remoteStore(world, net, fault),
      intervalMs,
      staleAfterMs: staleAfterMsFor(intervalMs),
      nowMs: () => Math.floor(sim.now() / 1000) + instance.skewMs,
      sleep: (waitMs) => sim.sleep(waitMs),
      claims: instance.claims,
    }).then(
      (outcome) => log(`done    ${label}: ${JSON.stringify({ ...outcome, ops: undefined })}`),
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        log(`threw   ${label}: ${message}`);
        if (!(error instanceof SimulatedCrash) && !message.includes("retrying the event")) failures.push(`unexpected error: ${message}`);
        crashes++;
        // The platform retries a failed event with exponential backoff.
        const backoffMs = Math.min(shape.retryBaseMs * 2 ** attempt, 600_000) * (0.5 + rng());
        sim.at(sim.now() + Math.round(backoffMs * 1000), () => deliver(event, attempt + 1));
      },
    );
  };

  const publish = (events: ShardWrite[]) => {
    for (const event of events) {
      sim.at(sim.now() + between(rng, 0, shape.maxDelayMs * 1000), () => deliver(event, 0));
      if (chance(rng, shape.duplicateChance)) sim.at(sim.now() + between(rng, 0, 3_000_000), () => deliver(event, 0));
    }
  };

  const times = arrivalTimes(rng, shape);
  const endMs = times[times.length - 1]!;
  for (const t of times) {
    sim.at(START_US + t * 1000, () => {
      const delta = chance(rng, 0.2) ? -between(rng, 1, 3) : between(rng, 1, 5);
      const event = world.increment(counterId, between(rng, 0, 99), delta);
      log(`write   ${event.eventId} shard ${event.shardId} ${delta > 0 ? "+" : ""}${delta}`);
      publish([event]);
    });
  }
  for (let i = 0; i < shape.resets; i++) {
    sim.at(START_US + between(rng, 0, endMs) * 1000, () => {
      log("reset");
      publish(world.reset(counterId));
    });
  }
  for (let i = 0; i < shape.reshards; i++) {
    sim.at(START_US + between(rng, 0, endMs) * 1000, () => {
      const to = between(rng, 1, 6);
      log(`reshard to ${to}`);
      publish(world.reshard(counterId, to));
    });
  }
  if (shape.newIntervalMs !== null) {
    for (const instance of instances) {
      sim.at(START_US + (shape.changeAtMs! + between(rng, 0, 2000)) * 1000, () => {
        instance.intervalMs = shape.newIntervalMs!;
        log(`${instance.name} now runs with ROLLUP_INTERVAL_MS=${shape.newIntervalMs}`);
      });
    }
  }

  await sim.run();

  const state = world.state(counterId);
  if (state.total !== state.shardSum) failures.push(`total ${state.total} != sum of the shards ${state.shardSum}`);
  const uncovered = state.writesUs.filter((w) => state.coveredUntilUs === null || w > state.coveredUntilUs);
  if (uncovered.length > 0) {
    failures.push(
      `${uncovered.length} write(s) not covered: rollup.readTime ${state.coveredUntilUs === null ? "absent" : ((state.coveredUntilUs - START_US) / 1000).toFixed(3)} ms, ` +
        `uncovered writes at ${uncovered.map((w) => ((w - START_US) / 1000).toFixed(3)).join(", ")} ms`,
    );
  }
  if (shape.newIntervalMs === null) {
    const busiest = mostWithin(state.commits.map((c) => c.readUs), shape.intervalMs * 1000);
    if (busiest.count > 2) {
      failures.push(`${busiest.count} parent writes read within one interval (${shape.intervalMs} ms), from ${((busiest.fromUs - START_US) / 1000).toFixed(3)} ms`);
    }
  }
  return { shape, failures, trace, deliveries, crashes };
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
