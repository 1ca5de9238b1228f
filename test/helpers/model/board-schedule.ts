// One schedule of the leaderboards' model check (functions/test/board-model.test.ts): a seed chooses a board
// of a few counters (world.ts, each on the board: board-world.ts), a workload of increments and decrements
// spread over them (steady, bursty, or hot enough on one counter to grow its shards), resets, deletes and
// creations again, reshards, how the platform delivers both kinds of event (the shards' to the counters'
// rollup, the entries' to the board's: delays, so reordering, duplicates, 1 to 4 instances each with its own
// memos, crashes at every stage and retries with backoff), and how long owners carry chains. The real
// rollup code runs both (rollupShardWrite, sweepRollups), over the two in-memory stores; buckets are small
// (2 to 6 counters: functions/src/model/board-buckets.ts) so that the boards split and merge. Once the last event, its retries and a last sweep
// are done, the properties:
// - every counter's total = Σ its shards; every counter that exists has its entry at its total, and no
//   other entry is left (a deleted counter left the board);
// - the board's summary was read at or after the last entry write that moved a total, and each of its buckets holds exactly
//   the entries in its range, at most the cap unless it holds one total only;
// - every counter's rank, read as rankOf reads it (the summary and one count inside its bucket), is 1 + the
//   counters whose total is greater;
// - no window of one interval holds more than two of the summary's writes (its read times);
// - in a schedule without crashes, every entry write that moved a total is in a summary within its delivery
//   delay, two intervals and the calls' latency (a rank's lag).
import { BoundedMemo } from "../../../functions/src/rollup/commit";
import { rollupShardWrite } from "../../../functions/src/rollup/index";
import { staleAfterMsFor } from "../../../functions/src/rollup/plan";
import { sweepRollups } from "../../../functions/src/rollup/sweep";
import type { GrowthSettings } from "../../../functions/src/rollup/growth";
import type { NowMemo, ParentMemo, RollupDeps, ShardWrite } from "../../../functions/src/rollup/types";
import { BoardWorld, type BoardMutant } from "./board-world";
import { remoteStore, SimulatedCrash, type Network } from "./remote";
import { faultOf, mostWithin } from "./schedule";
import { between, chance, pick, rngOf, Sim, type Rng } from "./sim";
import { World, type WorldMutant } from "./world";

const START_US = 1_800_000_000_000_000;
const INTERVALS = [200, 500, 1000, 3000];
/** Deliveries of an event after which the simulated platform stops crashing it (so every event completes). */
const CRASHING_ATTEMPTS = 6;
const SWEEP_AFTER_MS = 300_000;

export interface BoardShape {
  seed: number;
  intervalMs: number;
  instances: number;
  counters: number;
  writes: number;
  arrivals: "steady" | "bursty" | "hot";
  /** Most counters a bucket holds, and the merge threshold (functions/src/model/board-buckets.ts), small. */
  cap: number;
  resets: number;
  /** Deletes of a counter, each followed by its creation again `recreateGapMs` later. */
  recreations: number;
  recreateGapMs: number;
  reshards: number;
  growth: GrowthSettings;
  maxLatencyMs: number;
  maxDelayMs: number;
  duplicateChance: number;
  crashChance: number;
  retryBaseMs: number;
  chainBudgetMs: number;
}

export interface BoardScheduleResult {
  shape: BoardShape;
  failures: string[];
  trace: string[];
  deliveries: { counter: number; board: number };
  crashes: number;
  /** The summary's writes, and its most buckets. */
  summaryCommits: number;
  buckets: number;
  growths: number;
}

function shapeOf(seed: number): BoardShape {
  const rng = rngOf(seed);
  const arrivals = pick(rng, ["steady", "bursty", "hot"] as const);
  const intervalMs = pick(rng, INTERVALS);
  return {
    seed,
    intervalMs,
    instances: between(rng, 1, 4),
    counters: between(rng, 2, 12),
    writes: arrivals === "hot" ? between(rng, 60, 200) : between(rng, 5, 80),
    arrivals,
    cap: between(rng, 2, 6),
    resets: chance(rng, 0.3) ? between(rng, 1, 3) : 0,
    recreations: chance(rng, 0.3) ? between(rng, 1, 3) : 0,
    recreateGapMs: pick(rng, [0, Math.round(intervalMs / 3), intervalMs, 3000]),
    reshards: chance(rng, 0.2) ? between(rng, 1, 2) : 0,
    growth: { shardWritesPerSecond: 1, maxShards: pick(rng, [4, 40]), hotForMs: 1000 },
    maxLatencyMs: pick(rng, [1, 10, 40]),
    maxDelayMs: pick(rng, [5, 200, 1500]),
    duplicateChance: pick(rng, [0, 0.1, 0.4]),
    crashChance: pick(rng, [0, 0.15, 0.4]),
    retryBaseMs: pick(rng, [200, 2000, 10_000]),
    chainBudgetMs: pick(rng, [2_000, 8_000, 60_000]),
  };
}

interface Instance {
  name: string;
  skewMs: number;
  /** Memos per kind of rollup: the counters' and the board's run in functions of their own. */
  counter: { leads: NowMemo; parents: ParentMemo };
  board: { leads: NowMemo; parents: ParentMemo };
}

/** What a run may break on purpose (functions/test/board-model.test.ts expects each caught). */
export interface BoardRunOptions {
  worldMutant?: WorldMutant;
  boardMutant?: BoardMutant;
}

export async function runBoardSchedule(seed: number, options: BoardRunOptions = {}): Promise<BoardScheduleResult> {
  const shape = shapeOf(seed);
  const rng: Rng = rngOf(seed ^ 0x27d4eb2f);
  const sim = new Sim(START_US);
  // The two stores share one clock: the World's commit and read times, which order every write.
  const clock = { commitUs: (): number => world.nextCommitUs(), readUs: (): number => world.nextReadUs() };
  const board: BoardWorld = new BoardWorld("players", clock, { cap: shape.cap, mergeAtMost: Math.max(1, Math.floor(shape.cap / 2)), splits: 1000 }, options.boardMutant);
  const world: World = new World(sim, { rng, board, ...(options.worldMutant === undefined ? {} : { mutant: options.worldMutant }) });
  const net: Network = { sim, rng, maxLatencyMs: shape.maxLatencyMs };
  const trace: string[] = [];
  const failures: string[] = [];
  const deliveries = { counter: 0, board: 0 };
  let crashes = 0;
  const log = (line: string) => trace.push(`${((sim.now() - START_US) / 1000).toFixed(3).padStart(10)} ms  ${line}`);
  const instances: Instance[] = Array.from({ length: shape.instances }, (_, i) => ({
    name: `i${i}`,
    skewMs: between(rng, -30, 30),
    counter: { leads: new BoundedMemo(), parents: new BoundedMemo() },
    board: { leads: new BoundedMemo(), parents: new BoundedMemo() },
  }));

  const deliver = (kind: "counter" | "board", event: ShardWrite, attempt: number) => {
    const instance = pick(rng, instances);
    const crashing = attempt < CRASHING_ATTEMPTS && chance(rng, shape.crashChance);
    const fault = crashing ? faultOf(rng) : ({ at: "none" } as const);
    deliveries[kind]++;
    const label = `${kind} ${event.eventId} (${event.counterId}/${event.shardId.slice(0, 8)} at ${((event.writtenAtUs - START_US) / 1000).toFixed(3)}) #${attempt} on ${instance.name}${fault.at === "none" ? "" : ` crash ${JSON.stringify(fault)}`}`;
    log(`deliver ${label}`);
    const deps: RollupDeps = {
      store: remoteStore(kind === "counter" ? world : board, net, fault),
      intervalMs: shape.intervalMs,
      staleAfterMs: staleAfterMsFor(shape.intervalMs),
      nowMs: () => Math.floor(sim.now() / 1000) + instance.skewMs,
      sleep: (ms) => sim.sleep(ms),
      ...instance[kind],
      chainBudgetMs: shape.chainBudgetMs,
      ...(kind === "counter" ? { growth: shape.growth } : {}),
    };
    rollupShardWrite(event, deps).then(
      (outcome) => log(`done    ${label}: ${outcome.kind}${outcome.kind === "committed" ? ` ${outcome.path} ${outcome.total}` : ""}`),
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        log(`threw   ${label}: ${message}`);
        if (!(error instanceof SimulatedCrash) && !message.includes("retrying the event")) failures.push(`unexpected error: ${message}`);
        crashes++;
        const backoffMs = Math.min(shape.retryBaseMs * 2 ** attempt, 600_000) * (0.5 + rng());
        sim.at(sim.now() + Math.round(backoffMs * 1000), () => deliver(kind, event, attempt + 1));
      },
    );
  };
  const publish = (kind: "counter" | "board", events: ShardWrite[]) => {
    for (const event of events) {
      sim.at(sim.now() + between(rng, 0, shape.maxDelayMs * 1000), () => deliver(kind, event, 0));
      if (chance(rng, shape.duplicateChance)) sim.at(sim.now() + between(rng, 0, 3_000_000), () => deliver(kind, event, 0));
    }
  };
  board.onEvent = (event) => {
    log(`entry   ${event.eventId} ${event.shardId.slice(0, 8)}${event.countChanged === false ? " (total unchanged)" : ""}`);
    publish("board", [event]);
  };

  const ids = Array.from({ length: shape.counters }, (_, i) => `player-${i}`);
  for (const id of ids) world.createCounter(id, chance(rng, 0.6) ? 1 : between(rng, 2, 4));

  // The workload: one counter gets most of a hot schedule's writes (it grows); the rest spread.
  const hot = pick(rng, ids);
  const times: number[] = [];
  let t = between(rng, 0, shape.intervalMs);
  for (let i = 0; i < shape.writes; i++) {
    times.push(t);
    if (shape.arrivals === "steady") t += Math.max(1, Math.round(shape.intervalMs * (0.05 + rng() * 1.45)));
    else if (shape.arrivals === "bursty") t += chance(rng, 0.2) ? Math.round(shape.intervalMs * (0.5 + rng() * 3)) : between(rng, 0, 40);
    else t += Math.max(1, Math.round(-Math.log(1 - rng()) * 1000 / 30));
  }
  const endMs = t;
  for (const at of times) {
    sim.at(START_US + at * 1000, () => {
      const id = shape.arrivals === "hot" && chance(rng, 0.7) ? hot : pick(rng, ids);
      if (!world.exists(id)) return;
      const delta = chance(rng, 0.2) ? -between(rng, 1, 3) : between(rng, 1, 5);
      const event = world.increment(id, between(rng, 0, 9999), delta);
      log(`write   ${event.eventId} ${id} ${delta > 0 ? "+" : ""}${delta}`);
      publish("counter", [event]);
    });
  }
  for (let i = 0; i < shape.resets; i++) {
    sim.at(START_US + between(rng, 0, endMs) * 1000, () => {
      const id = pick(rng, ids);
      if (!world.exists(id)) return;
      const snap = world.resetRead(id);
      sim.at(sim.now() + between(rng, 0, 2_000_000), () => {
        const result = world.resetWrite(id, snap);
        log(`reset   ${id}: ${result.kind}`);
        if (result.kind === "committed") publish("counter", result.events);
      });
    });
  }
  for (let i = 0; i < shape.recreations; i++) {
    sim.at(START_US + between(rng, 0, endMs) * 1000, () => {
      const id = pick(rng, ids);
      if (!world.exists(id)) return;
      world.deleteCounter(id);
      log(`delete  ${id}`);
      // Half of them come back: a deleted counter must leave the board, and one created again join it at 0.
      if (chance(rng, 0.5)) {
        sim.at(sim.now() + shape.recreateGapMs * 1000, () => {
          if (world.exists(id)) return;
          world.createCounter(id, chance(rng, 0.5) ? 1 : between(rng, 2, 4));
          log(`create  ${id} again`);
        });
      }
    });
  }
  for (let i = 0; i < shape.reshards; i++) {
    sim.at(START_US + between(rng, 0, endMs) * 1000, () => {
      const id = pick(rng, ids);
      if (!world.exists(id)) return;
      log(`reshard ${id}`);
      publish("counter", world.reshard(id, between(rng, 1, 5)));
    });
  }

  await sim.run();
  // Retries are over: the next runs of the sweep fulfil what owners left (the counters' first, whose commits
  // write entries, then the board's).
  const sweep = (kind: "counter" | "board") => {
    const deps: RollupDeps = {
      store: remoteStore(kind === "counter" ? world : board, net, { at: "none" }),
      intervalMs: shape.intervalMs,
      staleAfterMs: staleAfterMsFor(shape.intervalMs),
      nowMs: () => Math.floor(sim.now() / 1000),
      sleep: (ms) => sim.sleep(ms),
      ...(kind === "counter" ? { growth: shape.growth } : {}),
    };
    sweepRollups(deps).then(
      (report) => log(`swept ${kind}: ${JSON.stringify(report.promises)}`),
      (error: unknown) => failures.push(`the ${kind} sweep threw: ${String(error)}`),
    );
  };
  sim.at(sim.now() + SWEEP_AFTER_MS * 1000, () => sweep("counter"));
  await sim.run();
  sim.at(sim.now() + SWEEP_AFTER_MS * 1000, () => sweep("board"));
  await sim.run();

  // The counters and their entries.
  const totals = new Map<string, number>();
  let growths = 0;
  for (const id of ids) {
    const state = world.state(id);
    growths += state.growths.length;
    if (!world.exists(id)) {
      if (board.entryTotal(id) !== undefined) failures.push(`${id} was deleted but its entry (${board.entryTotal(id)}) is on the board`);
      continue;
    }
    if (state.total !== state.shardSum) failures.push(`${id}: total ${state.total} != sum of the shards ${state.shardSum}`);
    if (board.entryTotal(id) !== state.total) failures.push(`${id}: total ${state.total}, entry ${board.entryTotal(id) ?? "missing"}`);
    totals.set(id, state.total);
  }
  if (board.entryCount() !== totals.size) failures.push(`the board has ${board.entryCount()} entries for ${totals.size} counters`);
  // The summary.
  const summary = board.readSummary();
  const lastEntryUs = Math.max(0, ...board.entryWrites.filter((w) => w.moved).map((w) => w.atUs));
  if (lastEntryUs > 0 && (summary.readUs === null || summary.readUs < lastEntryUs)) {
    failures.push(`the summary was read at ${summary.readUs === null ? "never" : ((summary.readUs - START_US) / 1000).toFixed(3)} ms, before the last entry write at ${((lastEntryUs - START_US) / 1000).toFixed(3)} ms`);
  }
  failures.push(...board.summaryProblems());
  // The ranks.
  for (const [id, total] of totals) {
    const expected = 1 + [...totals.values()].filter((x) => x > total).length;
    const rank = board.rankOf(total);
    if (rank !== expected) failures.push(`${id} at ${total}: rank ${rank}, truly ${expected}`);
  }
  if (shape.crashChance === 0) {
    const boundUs = (shape.maxDelayMs + 2 * shape.intervalMs + 10 * shape.maxLatencyMs + 100) * 1000;
    const late = board.entryWrites.flatMap((w) => {
      const first = w.moved ? board.commits.find((c) => c.readUs >= w.atUs) : undefined;
      return first !== undefined && first.atUs - w.atUs > boundUs ? [`${w.counterId} at ${((w.atUs - START_US) / 1000).toFixed(3)} ms, in a summary ${((first.atUs - w.atUs) / 1000).toFixed(3)} ms later`] : [];
    });
    if (late.length > 0) failures.push(`entry writes in no summary within ${boundUs / 1000} ms: ${late.slice(0, 5).join(", ")}`);
  }
  const busiest = mostWithin(board.commits.map((c) => c.readUs), shape.intervalMs * 1000);
  if (busiest.count > 2) failures.push(`${busiest.count} summary writes read within one interval (${shape.intervalMs} ms), from ${((busiest.fromUs - START_US) / 1000).toFixed(3)} ms`);
  failures.push(...world.violations, ...board.violations);
  return { shape, failures, trace, deliveries, crashes, summaryCommits: board.commits.length, buckets: summary.counts.length, growths };
}
