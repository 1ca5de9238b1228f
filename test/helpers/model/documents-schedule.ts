// One seeded schedule of the document counters' model check (documents-model.test.ts): an app writes
// comments and likes (created, edited in and out of their conditions, with summed fields good and bad,
// deleted and created again), some before the triggers exist; the platform delivers each write's event
// at least once, late, out of order, concurrently, and again after an invocation crashed (before or
// after one of its Firestore calls took effect) or met a counter still being deleted; backfills run
// racing all that, crash and resume from the position they last reported; counters are resharded and
// deleted. The real code decides and writes (functions/src/documents/event.ts, apply.ts, backfill.ts) over an
// in-memory Firestore (documents-world.ts). Each counter's total is rolled up by the real rollup
// (functions/src/rollup/) over the rollup's model World: each invocation of the trigger rolls up the shard
// write it committed itself, at once (as functions/src/entry/documentCounters.ts does; a failure there is only
// traced), and every shard write's event also goes to rollupTotal, late, duplicated, crashing and retried;
// simulated instances keep their own memos. At the end every counter equals what its documents count, its
// records agree, its total equals its shards and covers every shard write (the sweep runs first when an
// invocation left a promise to it: see below), a second backfill changes nothing, and a deleted counter no later change
// named is still gone. Exactness is checked before the final backfill too, for every counter the schedule lets
// the triggers (and racing backfills) keep alone, so that a backfill cannot hide what they got wrong; and the
// schedule ends by deleting every document: every counter 0.
import { backfillDocuments, type BackfillReport } from "../../../functions/src/documents/backfill";
import type { DocumentWrite } from "../../../functions/src/documents/event";
import type { DocumentSource, DocumentStore } from "../../../functions/src/documents/store";
import { contributionOf, counterOf, matchDocument } from "../../../functions/src/documents/match";
import { moveCounters } from "../../../functions/src/documents/move";
import { recountQueryFor } from "../../../functions/src/documents/recount";
import { countDocumentChange, isNotYet, type DocumentChange, type TriggerDeps } from "../../../functions/src/documents/trigger";
import { parseDocumentCounterRules, ruleNaming, type DocumentRule } from "../../../functions/src/model/document-rules";
import { documentTriggers } from "../../../functions/src/model/document-triggers";
import { BoundedMemo } from "../../../functions/src/rollup/commit";
import { rollupShardWrite } from "../../../functions/src/rollup/index";
import { staleAfterMsFor } from "../../../functions/src/rollup/plan";
import { sweepRollups } from "../../../functions/src/rollup/sweep";
import type { NowMemo, ParentMemo, RollupDeps, ShardWrite } from "../../../functions/src/rollup/types";
import { between, chance, pick, rngOf, Sim, type Rng } from "./sim";
import { DocumentsWorld } from "./documents-world";
import { remoteStore, SimulatedCrash as RollupCrash, type Fault, type Network } from "./remote";
import { faultOf } from "./schedule";
import { World } from "./world";

export const RULES = parseDocumentCounterRules(
  "DOCUMENT_COUNTERS",
  "posts/{post}/comments/{c}=post-{post}-comments,posts/{post}/comments/{c}[status==published]=post-{post}-published," +
    "posts/{post}/comments/{c}:stars=post-{post}-stars,posts/{post}/likes/{uid}=post-{post}-likes," +
    // Conditions of every type a query's equality filter must match as the records do: a number (by value), a
    // dotted path into a map (absent when the map or the key is), null (only where the field holds null).
    "posts/{post}/comments/{c}[meta.rank==1][flag==null]=post-{post}-typed," +
    // Counter ids from a field: kept by recount (one collection, the field an equality filter) and by records (a
    // post's comments: several collections); a document moves from one counter to the other when the field changes.
    "articles/{a}[status==published]=author-{=author}-articles,posts/{post}/comments/{c}=commenter-{=author}-comments",
);
const TRIGGERS = documentTriggers(RULES);
const POSTS = ["p1", "p2", "bad post"];
const START_US = 1_800_000_000_000_000; // 2027-01-15, a whole second
/** When the sweep (rollupSweep, every 5 minutes) runs after the rest is done, if a shard write is not covered yet. */
const SWEEP_AFTER_MS = 300_000;
/** The values of the field that names a counter (`{=author}`): two valid ids, and what names none. */
const AUTHORS = ["ann", "bob", "bob", "x y", 7, undefined];
const COUNTER_IDS = RULES.flatMap((rule) =>
  (rule.idField === null ? POSTS : AUTHORS).flatMap((id) => (typeof id === "string" && /^[a-z0-9]+$/.test(id) ? [rule.counter.prefix + id + rule.counter.suffix] : [])),
).filter((id, i, all) => all.indexOf(id) === i);

export interface ScheduleShape {
  seed: number;
  writes: number;
  /** Writes made before the triggers were deployed (no event): only a backfill counts them. */
  predeploy: number;
  racingBackfills: number;
  deletes: number;
  reshards: number;
  duplicateP: number;
  crashP: number;
  /** The rollup's: simulated instances (each with its own memos) and their ROLLUP_INTERVAL_MS. */
  instances: number;
  intervalMs: number;
  /** RECOUNT_LIMIT: a recounted counter with more documents moves to records. */
  recountLimit: number;
}

export interface ScheduleResult {
  shape: ScheduleShape;
  failures: string[];
  trace: string[];
  deliveries: number;
  crashes: number;
  backfillRuns: number;
  backfillResumes: number;
  /** Commits of a count (counters kept by recount), and moves of a recounted counter to records that ended. */
  countedCommits: number;
  moves: number;
  /** rollupTotal's deliveries of the shard writes. */
  shardDeliveries: number;
  /** Times the sweep ran at the end: a shard write was not covered (an owner failed and its retry came early). */
  sweptClaims: number;
  /** Counters with documents from before the triggers or a deletion, checked exact before the final backfill. */
  checkedBeforeBackfill: number;
}

interface Instance {
  name: string;
  skewMs: number;
  leads: NowMemo;
  parents: ParentMemo;
}

class SimulatedCrash extends Error {}

/** The world behind a network: each call waits a random latency each way, and may crash before or after it takes effect. */
function remote(world: DocumentsWorld, sim: Sim, rng: Rng, crashP: () => number): DocumentStore & DocumentSource {
  const call = async <T>(name: string, op: () => Promise<T>): Promise<T> => {
    await sim.sleep(between(rng, 0, 20));
    if (chance(rng, crashP())) throw new SimulatedCrash(`crash before ${name}`);
    const result = await op();
    if (chance(rng, crashP())) throw new SimulatedCrash(`crash after ${name}`);
    await sim.sleep(between(rng, 0, 20));
    return result;
  };
  return {
    read: (id, docs) => call("read", () => world.read(id, docs)),
    commit: (id, read, plan, options) => call("commit", () => world.commit(id, read, plan, options)),
    createRecounted: (id, shape, since) => call("createRecounted", () => world.createRecounted(id, shape, since)),
    listMoving: (limit) => call("listMoving", () => world.listMoving(limit)),
    listDocuments: (listing, after, limit) => call("listDocuments", () => world.listDocuments(listing, after, limit)),
    readDocuments: (paths) => call("readDocuments", () => world.readDocuments(paths)),
    listCounters: (range, after, limit) => call("listCounters", () => world.listCounters(range, after, limit)),
    listRecords: (id, after, limit) => call("listRecords", () => world.listRecords(id, after, limit)),
  };
}

export async function runDocumentSchedule(seed: number): Promise<ScheduleResult> {
  const rng = rngOf(seed);
  const sim = new Sim(START_US);
  const counters = new World(sim, { rng });
  const world = new DocumentsWorld(counters);
  const shape: ScheduleShape = {
    seed,
    writes: between(rng, 5, 40),
    predeploy: chance(rng, 0.5) ? between(rng, 1, 15) : 0,
    racingBackfills: between(rng, 0, 2),
    deletes: chance(rng, 0.3) ? between(rng, 1, 2) : 0,
    reshards: chance(rng, 0.3) ? 1 : 0,
    duplicateP: pick(rng, [0, 0.3, 0.8]),
    crashP: pick(rng, [0, 0.05, 0.15]),
    instances: between(rng, 1, 3),
    intervalMs: pick(rng, [200, 500, 1000]),
    // Small limits, so that recounted counters grow past them and move to records (functions/src/documents/move.ts).
    recountLimit: pick(rng, [1, 2, 3, 1000]),
  };
  const result: ScheduleResult = {
    shape,
    failures: [],
    trace: [],
    deliveries: 0,
    crashes: 0,
    backfillRuns: 0,
    backfillResumes: 0,
    countedCommits: 0,
    moves: 0,
    shardDeliveries: 0,
    sweptClaims: 0,
    checkedBeforeBackfill: 0,
  };
  const trace = (line: string) => result.trace.push(`${((sim.now() - START_US) / 1000).toFixed(3)}ms ${line}`);
  /** At `ms` after the start. */
  const at = (ms: number, fire: () => void) => sim.at(START_US + ms * 1000, fire);
  const numShards = between(rng, 1, 3);
  const options = { newCounter: () => ({ numShards, windowed: false }), random: rng, now: () => sim.now() / 1000, sleep: (ms: number) => sim.sleep(ms) };
  let crashless = false;
  const crashP = () => (crashless ? 0 : shape.crashP);
  const store = remote(world, sim, rng, crashP);

  // The rollup: its instances, and its dependencies on one of them for an invocation that crashes as `fault` says.
  const net: Network = { sim, rng, maxLatencyMs: 20 };
  const instances: Instance[] = Array.from({ length: shape.instances }, (_, i) => ({ name: `i${i}`, skewMs: between(rng, -30, 30), leads: new BoundedMemo(), parents: new BoundedMemo() }));
  const rollupDeps = (instance: Instance, fault: Fault): RollupDeps => ({
    store: remoteStore(counters, net, fault),
    intervalMs: shape.intervalMs,
    staleAfterMs: staleAfterMsFor(shape.intervalMs),
    nowMs: () => Math.floor(sim.now() / 1000) + instance.skewMs,
    sleep: (ms) => sim.sleep(ms),
    leads: instance.leads,
    parents: instance.parents,
    recount: { query: (id) => recountQueryFor(RULES, id), limit: shape.recountLimit },
  });
  // A recount's count is the documents model's query (as Firestore answers it); its commit is held to the documents
  // as the records would count them: the two ways give the same total for the same documents, at every commit.
  counters.countDocuments = (query, readUs) => world.count(query, readUs);
  counters.recountTruth = (counterId, readUs) => {
    const rule = ruleNaming(RULES, counterId)!;
    let truth = 0;
    for (const [path, data] of world.documentsAt(readUs)) {
      const target = counterOf(rule, path, data);
      if (target !== null && "counterId" in target && target.counterId === counterId) truth += contributionOf(rule, data).value;
    }
    return truth;
  };
  const crashOrNot = (): Fault => (chance(rng, crashP()) ? faultOf(rng) : { at: "none" });
  const isCrash = (error: unknown) => error instanceof RollupCrash || (error instanceof Error && error.message.includes("retrying the event"));

  /** rollupTotal: delivers a shard write's event at least once, late, retrying a failed invocation with a backoff. */
  function deliverShardWrite(event: ShardWrite, attempt: number): void {
    const instance = pick(rng, instances);
    result.shardDeliveries++;
    rollupShardWrite(event, rollupDeps(instance, crashOrNot())).then(
      (outcome) => trace(`rollupTotal ${event.counterId}/${event.shardId}@${event.writtenAtUs} #${attempt} on ${instance.name}: ${outcome.kind}`),
      (error: unknown) => {
        if (!isCrash(error)) result.failures.push(`rollupTotal threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        trace(`rollupTotal ${event.counterId}/${event.shardId}@${event.writtenAtUs} #${attempt} failed (${String(error)}); retried`);
        sim.at(sim.now() + between(rng, 1, 300) * 1000 * Math.min(2 ** attempt, 64), () => deliverShardWrite(event, attempt + 1));
      },
    );
  }
  world.onShardWrite = (events) => {
    for (const event of events) {
      sim.at(sim.now() + between(rng, 0, 1000) * 1000, () => deliverShardWrite(event, 1));
      if (chance(rng, shape.duplicateP)) sim.at(sim.now() + between(rng, 0, 3000) * 1000, () => deliverShardWrite(event, 1));
    }
  };

  /**
   * The sweep (rollupSweep), once everything else is done, when a shard write is not covered yet or a promise is
   * open (an owner failed and its retry came early: a recounted counter has no shard write to show it).
   */
  async function sweepIfPending(): Promise<void> {
    const open = (id: string) => {
      const { view } = counters.parentRead(id);
      return view.trailing != null && (view.coveredUntilUs ?? 0) < view.trailing.dueMs * 1000;
    };
    if (!COUNTER_IDS.some((id) => uncovered(counters, id) || open(id))) return;
    result.sweptClaims++;
    sim.at(sim.now() + SWEEP_AFTER_MS * 1000, () => {
      trace("sweep");
      sweepRollups({ ...rollupDeps(instances[0]!, { at: "none" }), leads: undefined, parents: undefined }).then(
        (report) => trace(`swept: ${JSON.stringify({ ...report, ops: undefined })}`),
        (error: unknown) => result.failures.push(`the sweep threw: ${String(error)}`),
      );
    });
    await sim.run();
  }
  // The sweep's moves of recounted counters past the limit to records (functions/src/documents/move.ts): each
  // schedule's own positions (a move named by its counter and start), a step retried after a crash.
  const positions = new Map<string, string | undefined>();
  async function moveStep(label: string): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        const outcomes = await moveCounters({ rollup: () => rollupDeps(pick(rng, instances), crashOrNot()), store, rules: RULES, newCounter: options.newCounter }, { limit: 20, budgetMs: between(rng, 0, 3) * 1000, positions });
        if (Object.keys(outcomes).length > 0) trace(`${label}: ${JSON.stringify(outcomes)}`);
        if (outcomes.done !== undefined) result.moves += outcomes.done;
        return;
      } catch (error) {
        if (!isCrash(error) && !(error instanceof SimulatedCrash)) throw error;
        trace(`${label} crashed (${error instanceof Error ? error.message : String(error)})`);
        await sim.sleep(between(rng, 1, 50));
      }
    }
  }
  /** Every move under way, to its end (the sweep's runs, each after the moves' memory window). */
  async function settleMoves(): Promise<void> {
    for (let round = 0; round < 50 && (await world.listMoving(1)).length > 0; round++) {
      sim.at(sim.now() + 25_000_000, () => void moveStep("move"));
      await sim.run();
    }
    if ((await world.listMoving(1)).length > 0) result.failures.push("a move to records never ended");
  }  /**
   * Moves and the sweep until neither leaves anything: the sweep's commit of a promise may find a recounted counter
   * past its limit and start a move, which the next runs of the sweep end (rollupSweep runs both every time).
   */
  async function settle(): Promise<void> {
    for (let round = 0; round < 10; round++) {
      await settleMoves();
      await sweepIfPending();
      if ((await world.listMoving(1)).length === 0) return;
    }
    result.failures.push("a move to records never ended");
  }

  const lastChange = new Map<string, number>(); // counter id -> virtual time of the last write of one of its documents
  const deletedAt = new Map<string, number>();
  /** When each deleted counter's cleanup last finished: a backfill that starts later counts what the deletion took. */
  const cleanedAt = new Map<string, number>();
  /** When each racing backfill started. */
  const backfillStarts: number[] = [];
  /** The last virtual time a backfill was running: one running after a deletion may create the counter again. */
  let lastBackfillActive = -1;

  /** One invocation of a trigger for a write: the real trigger's work (functions/src/documents/trigger.ts) over the model's stores. */
  async function invoke(write: DocumentChange, rules: readonly DocumentRule[]): Promise<void> {
    const instance = pick(rng, instances);
    const deps: TriggerDeps = {
      store,
      rollup: () => rollupDeps(instance, crashOrNot()),
      newCounter: options.newCounter,
      warnOnce: (key: string, message: string) => trace(`warn ${message} (${key})`),
      nowMs: () => Math.floor(sim.now() / 1000) + instance.skewMs,
      random: rng,
      sleep: (ms: number) => sim.sleep(ms),
    };
    await countDocumentChange(write, rules, deps);
  }

  /** The platform: delivers the event at least once, retrying a failed invocation with a backoff, until one succeeds. */
  function deliver(write: DocumentWrite & { writtenAtUs: number }, atMs: number, eventId: string): void {
    const rules = TRIGGERS.find((t) => matchDocument(t.rules[0]!.document, write.path) !== null)?.rules ?? [];
    const attempt = (n: number) => {
      result.deliveries++;
      invoke({ ...write, eventId }, rules).then(
        () => trace(`delivered ${write.path}@${write.version}`),
        (error: unknown) => {
          result.crashes++;
          if (!isCrash(error) && !(error instanceof SimulatedCrash) && !isNotYet(error)) {
            result.failures.push(`${write.path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
            return;
          }
          trace(`invocation of ${write.path}@${write.version} failed (${error instanceof Error ? error.message : String(error)}); retried`);
          sim.at(sim.now() + between(rng, 1, 300) * 1000, () => attempt(n + 1));
        },
      );
    };
    at(atMs, () => attempt(1));
  }

  /** A backfill that resumes from its last reported position after each crash, until it completes. */
  async function backfillToEnd(label: string): Promise<BackfillReport> {
    result.backfillRuns++;
    let position: string | undefined;
    for (;; lastBackfillActive = sim.now()) {
      try {
        const report = await backfillDocuments(store, RULES, {
          ...options,
          rollup: () => rollupDeps(pick(rng, instances), crashOrNot()),
          // The guard against a typo in a rule (it refuses a rule with no document yet) is an operator's net, not exactness.
          force: true,
          pageSize: between(rng, 1, 4),
          concurrency: between(rng, 1, 3),
          ...(position === undefined ? {} : { startAfter: position }),
          onProgress: (progress) => (position = progress.position),
        });
        lastBackfillActive = sim.now();
        trace(`${label} done: seen ${report.seen}, counted ${report.counted}, taken out ${report.takenOut}`);
        return report;
      } catch (error) {
        if (!(error instanceof SimulatedCrash) && !isCrash(error)) throw error;
        result.backfillResumes++;
        trace(`${label} crashed (${error instanceof Error ? error.message : String(error)}); resumes after ${position ?? "the start"}`);
        await sim.sleep(between(rng, 1, 50));
      }
    }
  }

  // The app's writes: the first `predeploy` before the triggers exist, the rest with events.
  const paths = [...POSTS.flatMap((post) => [...["c1", "c2", "c3"].map((c) => `posts/${post}/comments/${c}`), ...["u1", "u2"].map((u) => `posts/${post}/likes/${u}`)]), "articles/a1", "articles/a2", "articles/a3"];
  const deployMs = 100;
  let t = 0;
  for (let i = 0; i < shape.predeploy + shape.writes; i++) {
    t = i < shape.predeploy ? (deployMs * i) / Math.max(1, shape.predeploy) : Math.max(t, deployMs) + between(rng, 0, 60);
    const writeMs = t;
    const path = pick(rng, paths);
    const data = {
      status: pick(rng, ["published", "draft"]),
      stars: pick(rng, [1, 3, 5, -2, 2.5, "x", undefined]),
      text: String(between(rng, 0, 9)),
      meta: pick(rng, [{ rank: 1 }, { rank: 1 }, { rank: "1" }, { rank: 2 }, { rank: true }, { rank: null }, {}, "rank", null, undefined]),
      flag: pick(rng, [null, null, undefined, "null", 0, false]),
      author: pick(rng, AUTHORS),
    };
    at(writeMs, () => {
      const exists = world.docs.has(path);
      const write = world.write(path, exists && chance(rng, 0.35) ? undefined : data);
      if (write === null) return;
      for (const rule of RULES) {
        // The counter it left and the one it entered (a counter id from a field).
        for (const side of [write.before, write.after]) {
          const target = counterOf(rule, path, side);
          if (target !== null && !("problem" in target)) lastChange.set(target.counterId, sim.now());
        }
      }
      trace(`app ${write.after === undefined ? "deletes" : "writes"} ${path}@${write.version} ${JSON.stringify(write.after ?? null)}`);
      if (writeMs < deployMs) return; // before the triggers: no event
      const eventId = `doc-${i}`;
      deliver(write, writeMs + between(rng, 0, 200), eventId);
      const copies = chance(rng, shape.duplicateP) ? between(rng, 1, 2) : 0;
      for (let d = 0; d < copies; d++) deliver(write, writeMs + between(rng, 0, 800), eventId);
    });
  }
  const span = Math.max(t, deployMs);
  for (let i = 0; i < shape.racingBackfills; i++) {
    at(between(rng, deployMs, span + 200), () => {
      lastBackfillActive = sim.now();
      backfillStarts.push(sim.now());
      backfillToEnd(`racing backfill ${i + 1}`).catch((error: unknown) => result.failures.push(`racing backfill ${i + 1} threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
    });
  }
  for (let i = 0; i < shape.deletes; i++) {
    const counterId = pick(rng, COUNTER_IDS);
    at(between(rng, deployMs, span + 100), () => {
      if (!world.deleteCounter(counterId)) return;
      deletedAt.set(counterId, sim.now());
      trace(`deleteCounter ${counterId}`);
      sim.at(sim.now() + between(rng, 0, 300) * 1000, () => {
        world.finishCleanup(counterId);
        cleanedAt.set(counterId, sim.now());
      });
    });
  }
  for (let i = 0; i < shape.reshards; i++) {
    const counterId = pick(rng, COUNTER_IDS);
    at(between(rng, deployMs, span), () => world.reshard(counterId, between(rng, 1, 4)));
  }
  // Moves race the writes and the backfills too: steps at random times (within or after a move's memory window).
  for (let i = between(rng, 0, 3); i > 0; i--) at(between(rng, deployMs, span + 30_000), () => void moveStep("racing move step"));
  await sim.run();
  await settle();

  // A deleted counter comes back only with a change of one of its documents after the deletion (or a backfill).
  for (const [counterId, at] of deletedAt) {
    const changed = (lastChange.get(counterId) ?? -1) > at || lastBackfillActive >= at;
    if (!changed && world.hasCounter(counterId)) result.failures.push(`${counterId} came back after its deleteCounter with no later change of its documents`);
  }
  // Exact before any final backfill, where the schedule allows it: every counter without documents from
  // before the triggers or a deletion, and every other one that a racing backfill started after (after the
  // deletion's cleanup) went over. A backfill repairs what the triggers got wrong, so it must not hide it.
  const backfilledAfter = (counterId: string) => backfillStarts.some((start) => start > (cleanedAt.get(counterId) ?? -1));
  const exactBefore = COUNTER_IDS.filter((id) => (shape.predeploy === 0 && !deletedAt.has(id)) || backfilledAfter(id));
  checkExact(world, result, "before the final backfill", exactBefore);
  result.checkedBeforeBackfill = exactBefore.filter((id) => shape.predeploy > 0 || deletedAt.has(id)).length;
  crashless = true;
  if (shape.predeploy > 0 || deletedAt.size > 0) {
    const final = backfillToEnd("final backfill");
    await sim.run();
    await final;
    await settle();
  }
  checkExact(world, result, "at the end");
  const again = backfillToEnd("second backfill");
  await sim.run();
  const second = await again;
  if (second.counted !== 0 || second.takenOut !== 0) result.failures.push(`a second backfill changed something: counted ${second.counted}, took out ${second.takenOut}`);
  checkExact(world, result, "after a second backfill");

  // The ending: the app deletes every document, and the platform delivers the deletes' events (late,
  // duplicated, crashing and retried): every counter ends at 0, whatever backfills counted before.
  crashless = false;
  const endMs = (sim.now() - START_US) / 1000;
  [...world.docs.keys()].forEach((path, i) => {
    at(endMs + between(rng, 0, 300), () => {
      const write = world.write(path, undefined);
      if (write === null) return;
      trace(`app deletes ${path}@${write.version} (the ending)`);
      const nowMs = (sim.now() - START_US) / 1000;
      deliver(write, nowMs + between(rng, 0, 200), `end-${i}`);
      if (chance(rng, shape.duplicateP)) deliver(write, nowMs + between(rng, 0, 800), `end-${i}`);
    });
  });
  await sim.run();
  await settle();
  checkExact(world, result, "after every document was deleted");
  result.failures.push(...counters.violations);
  result.countedCommits = counters.countedCommits;
  return result;
}

/** A shard write of the counter is not covered by its total yet (it deferred to a promise the sweep has to fulfil). */
function uncovered(counters: World, counterId: string): boolean {
  const { writes, coveredUntilUs } = counters.state(counterId);
  return writes.some((w) => coveredUntilUs === null || w.atUs > coveredUntilUs);
}

/**
 * Every counter (of `counterIds`) equals what its documents count. Kept by records: so do its records and its
 * shards, and its total covers every shard write. Kept by recount: nothing else (its shards stay at 0). None
 * is still moving.
 */
function checkExact(world: DocumentsWorld, result: ScheduleResult, when: string, counterIds: readonly string[] = COUNTER_IDS): void {
  for (const counterId of counterIds) {
    const rule = RULES.find((r) => counterId.startsWith(r.counter.prefix) && counterId.endsWith(r.counter.suffix))!;
    let truth = 0;
    for (const [path, doc] of world.docs) {
      const target = counterOf(rule, path, doc.data);
      if (target !== null && "counterId" in target && target.counterId === counterId) truth += contributionOf(rule, doc.data).value;
    }
    const parent = world.counters.parentRead(counterId).view;
    const total = parent.parentExists ? parent.total : null;
    if ((total ?? 0) !== truth) result.failures.push(`${counterId} ${when}: total ${String(total)} (kept ${String(parent.kept)}, read ${String(parent.coveredUntilUs)}, promise ${JSON.stringify(parent.trailing)}), its documents count ${truth}`);
    if (!parent.parentExists) continue;
    if (parent.kept === "moving") result.failures.push(`${counterId} ${when}: still moving to records`);
    if (parent.kept === "recount") {
      if (world.total(counterId) !== 0) result.failures.push(`${counterId} ${when}: kept by recount, its shards sum to ${String(world.total(counterId))}`);
      continue;
    }
    const shards = world.total(counterId);
    if (world.recorded(counterId) !== shards) result.failures.push(`${counterId} ${when}: records count ${world.recorded(counterId)}, shards ${String(shards)}`);
    if (total !== shards) result.failures.push(`${counterId} ${when}: the rollup's total ${String(total)}, its shards sum to ${String(shards)}`);
    if (uncovered(world.counters, counterId)) {
      const { writes, coveredUntilUs } = world.counters.state(counterId);
      const late = writes.filter((w) => coveredUntilUs === null || w.atUs > coveredUntilUs).map((w) => `${w.eventId}@${w.atUs}`);
      result.failures.push(`${counterId} ${when}: shard writes not covered by rollup.readTime ${String(coveredUntilUs)}: ${late.join(", ")}`);
    }
  }
}
