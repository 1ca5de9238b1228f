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
// records agree, its total equals its shards with no claim left pending (the sweep runs first when an
// invocation left one: see below), a second backfill changes nothing, and a deleted counter no later change
// named is still gone.
import { backfillDocuments, type BackfillReport } from "../../../functions/src/documents/backfill";
import { countWrite, ownShardWrite, type DocumentWrite } from "../../../functions/src/documents/event";
import type { DocumentSource, DocumentStore } from "../../../functions/src/documents/store";
import { contributionOf, counterOf, matchDocument } from "../../../functions/src/model/document-match";
import { parseDocumentCounterRules, type DocumentRule } from "../../../functions/src/model/document-rules";
import { documentTriggers } from "../../../functions/src/model/document-triggers";
import { BoundedMemo } from "../../../functions/src/rollup/commit";
import { rollupShardWrite } from "../../../functions/src/rollup/index";
import { staleAfterMsFor } from "../../../functions/src/rollup/plan";
import { sweepStaleClaims } from "../../../functions/src/rollup/sweep";
import type { ClaimMemo, LeadMemo, ParentMemo, RollupDeps, ShardWrite } from "../../../functions/src/rollup/types";
import { between, chance, pick, rngOf, Sim, type Rng } from "./sim";
import { DocumentsWorld } from "./documents-world";
import { remoteStore, SimulatedCrash as RollupCrash, type Fault, type Network } from "./remote";
import { faultOf } from "./schedule";
import { World } from "./world";

export const RULES = parseDocumentCounterRules(
  "DOCUMENT_COUNTERS",
  "posts/{post}/comments/{c}=post-{post}-comments,posts/{post}/comments/{c}[status==published]=post-{post}-published," +
    "posts/{post}/comments/{c}:stars=post-{post}-stars,posts/{post}/likes/{uid}=post-{post}-likes",
);
const TRIGGERS = documentTriggers(RULES);
const POSTS = ["p1", "p2", "bad post"];
const START_US = 1_800_000_000_000_000; // 2027-01-15, a whole second
/** When the sweep (rollupSweep, every 5 minutes) runs after the rest is done, if a claim is left pending. */
const SWEEP_AFTER_MS = 300_000;
const COUNTER_IDS = RULES.flatMap((rule) => POSTS.flatMap((post) => (/^[a-z0-9]+$/.test(post) ? [rule.counter.prefix + post + rule.counter.suffix] : [])));

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
}

export interface ScheduleResult {
  shape: ScheduleShape;
  failures: string[];
  trace: string[];
  deliveries: number;
  crashes: number;
  backfillRuns: number;
  backfillResumes: number;
  /** The trigger's own rollups, those that committed, and those that failed (left to rollupTotal). */
  inlineRollups: number;
  inlineCommits: number;
  inlineFailures: number;
  /** rollupTotal's deliveries of the shard writes. */
  shardDeliveries: number;
  /** Times the sweep had a claim to finish at the end: an invocation that claimed failed and no retry of it came. */
  sweptClaims: number;
}

interface Instance {
  name: string;
  skewMs: number;
  claims: ClaimMemo;
  leads: LeadMemo;
  parents: ParentMemo;
}

class SimulatedCrash extends Error {}
/** What the entry throws when a counter is still being deleted or kept changing: the platform delivers the event again. */
class RetryLater extends Error {}

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
  };
  const result: ScheduleResult = {
    shape,
    failures: [],
    trace: [],
    deliveries: 0,
    crashes: 0,
    backfillRuns: 0,
    backfillResumes: 0,
    inlineRollups: 0,
    inlineCommits: 0,
    inlineFailures: 0,
    shardDeliveries: 0,
    sweptClaims: 0,
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
  const instances: Instance[] = Array.from({ length: shape.instances }, (_, i) => ({ name: `i${i}`, skewMs: between(rng, -30, 30), claims: new Map(), leads: new BoundedMemo(), parents: new BoundedMemo() }));
  const rollupDeps = (instance: Instance, fault: Fault): RollupDeps => ({
    store: remoteStore(counters, net, fault),
    intervalMs: shape.intervalMs,
    staleAfterMs: staleAfterMsFor(shape.intervalMs),
    nowMs: () => Math.floor(sim.now() / 1000) + instance.skewMs,
    sleep: (ms) => sim.sleep(ms),
    claims: instance.claims,
    leads: instance.leads,
    parents: instance.parents,
  });
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

  /** The trigger's own rollup of the shard write it committed: a failure is no loss (rollupTotal has the write), so it is only traced. */
  async function rollUpOwnWrite(own: ShardWrite, instance: Instance): Promise<void> {
    result.inlineRollups++;
    try {
      const outcome = await rollupShardWrite(own, rollupDeps(instance, crashOrNot()));
      if (outcome.kind === "committed") result.inlineCommits++;
      trace(`inline rollup ${own.counterId}@${own.writtenAtUs} on ${instance.name}: ${outcome.kind}`);
    } catch (error) {
      if (!isCrash(error)) result.failures.push(`the inline rollup threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      result.inlineFailures++;
      trace(`inline rollup ${own.counterId}@${own.writtenAtUs} on ${instance.name} failed (${String(error)}); left to rollupTotal`);
    }
  }

  /** The sweep (rollupSweep), once everything else is done, when a claim is still pending. */
  async function sweepIfPending(): Promise<void> {
    if (!COUNTER_IDS.some((id) => pendingClaim(counters, id))) return;
    result.sweptClaims++;
    sim.at(sim.now() + SWEEP_AFTER_MS * 1000, () => {
      trace("sweep");
      sweepStaleClaims({ ...rollupDeps(instances[0]!, { at: "none" }), claims: undefined, leads: undefined, parents: undefined }).then(
        (report) => trace(`swept: ${JSON.stringify({ ...report, ops: undefined })}`),
        (error: unknown) => result.failures.push(`the sweep threw: ${String(error)}`),
      );
    });
    await sim.run();
  }
  const lastChange = new Map<string, number>(); // counter id -> virtual time of the last write of one of its documents
  const deletedAt = new Map<string, number>();
  /** The last virtual time a backfill was running: one running after a deletion may create the counter again. */
  let lastBackfillActive = -1;

  /** One invocation of a trigger for a write: every rule of its pattern, as functions/src/entry/documentCounters.ts runs them. */
  async function invoke(write: DocumentWrite, rules: readonly DocumentRule[], eventId: string): Promise<void> {
    let failure: Error | undefined;
    const instance = pick(rng, instances);
    const rollups: Promise<void>[] = [];
    for (const rule of rules) {
      try {
        const outcome = await countWrite(store, rule, write, options);
        if (outcome?.kind === "applied" && outcome.report.retryLater) throw new RetryLater(outcome.report.problem ?? "retry later");
        if (outcome?.kind === "applied" && outcome.report.problem !== undefined) result.failures.push(`${write.path}: ${outcome.report.problem}`);
        const own = outcome === null ? null : ownShardWrite(outcome, `${eventId}/${rule.position}`);
        if (own !== null) rollups.push(rollUpOwnWrite(own, instance));
      } catch (error) {
        if (!(error instanceof SimulatedCrash) && !(error instanceof RetryLater)) {
          result.failures.push(`${write.path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
          return;
        }
        failure ??= error;
      }
    }
    await Promise.all(rollups);
    if (failure !== undefined) throw failure;
  }

  /** The platform: delivers the event at least once, retrying a failed invocation with a backoff, until one succeeds. */
  function deliver(write: DocumentWrite, atMs: number, eventId: string): void {
    const rules = TRIGGERS.find((t) => matchDocument(t.rules[0]!.document, write.path) !== null)?.rules ?? [];
    const attempt = (n: number) => {
      result.deliveries++;
      invoke(write, rules, eventId).then(
        () => trace(`delivered ${write.path}@${write.version}`),
        (error: unknown) => {
          result.crashes++;
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
          pageSize: between(rng, 1, 4),
          concurrency: between(rng, 1, 3),
          ...(position === undefined ? {} : { startAfter: position }),
          onProgress: (progress) => (position = progress.position),
        });
        lastBackfillActive = sim.now();
        trace(`${label} done: seen ${report.seen}, counted ${report.counted}, taken out ${report.takenOut}`);
        return report;
      } catch (error) {
        if (!(error instanceof SimulatedCrash)) throw error;
        result.backfillResumes++;
        trace(`${label} crashed (${error.message}); resumes after ${position ?? "the start"}`);
        await sim.sleep(between(rng, 1, 50));
      }
    }
  }

  // The app's writes: the first `predeploy` before the triggers exist, the rest with events.
  const paths = POSTS.flatMap((post) => [...["c1", "c2", "c3"].map((c) => `posts/${post}/comments/${c}`), ...["u1", "u2"].map((u) => `posts/${post}/likes/${u}`)]);
  const deployMs = 100;
  let t = 0;
  for (let i = 0; i < shape.predeploy + shape.writes; i++) {
    t = i < shape.predeploy ? (deployMs * i) / Math.max(1, shape.predeploy) : Math.max(t, deployMs) + between(rng, 0, 60);
    const writeMs = t;
    const path = pick(rng, paths);
    const data = { status: pick(rng, ["published", "draft"]), stars: pick(rng, [1, 3, 5, -2, 2.5, "x", undefined]), text: String(between(rng, 0, 9)) };
    at(writeMs, () => {
      const exists = world.docs.has(path);
      const write = world.write(path, exists && chance(rng, 0.35) ? undefined : data);
      if (write === null) return;
      for (const rule of RULES) {
        const target = counterOf(rule, path);
        if (target !== null && !("problem" in target)) lastChange.set(target.counterId, sim.now());
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
      void backfillToEnd(`racing backfill ${i + 1}`);
    });
  }
  for (let i = 0; i < shape.deletes; i++) {
    const counterId = pick(rng, COUNTER_IDS);
    at(between(rng, deployMs, span + 100), () => {
      if (!world.deleteCounter(counterId)) return;
      deletedAt.set(counterId, sim.now());
      trace(`deleteCounter ${counterId}`);
      sim.at(sim.now() + between(rng, 0, 300) * 1000, () => world.finishCleanup(counterId));
    });
  }
  for (let i = 0; i < shape.reshards; i++) {
    const counterId = pick(rng, COUNTER_IDS);
    at(between(rng, deployMs, span), () => world.reshard(counterId, between(rng, 1, 4)));
  }
  await sim.run();
  await sweepIfPending();

  // A deleted counter comes back only with a change of one of its documents after the deletion (or a backfill).
  for (const [counterId, at] of deletedAt) {
    const changed = (lastChange.get(counterId) ?? -1) > at || lastBackfillActive >= at;
    if (!changed && world.hasCounter(counterId)) result.failures.push(`${counterId} came back after its deleteCounter with no later change of its documents`);
  }
  crashless = true;
  if (shape.predeploy > 0 || deletedAt.size > 0) {
    const final = backfillToEnd("final backfill");
    await sim.run();
    await final;
    await sweepIfPending();
  }
  checkExact(world, result, "at the end");
  const again = backfillToEnd("second backfill");
  await sim.run();
  const second = await again;
  if (second.counted !== 0 || second.takenOut !== 0) result.failures.push(`a second backfill changed something: counted ${second.counted}, took out ${second.takenOut}`);
  checkExact(world, result, "after a second backfill");
  result.failures.push(...counters.violations);
  return result;
}

/** A claim is pending on the counter: its lease is due after the sum on the parent. */
function pendingClaim(counters: World, counterId: string): boolean {
  const { lease, coveredUntilUs } = counters.state(counterId);
  return lease !== null && lease.data.dueMs * 1000 > (coveredUntilUs ?? 0);
}

/** Every counter equals what its documents count, and what its records count; its total is its shards' sum, no claim pending. */
function checkExact(world: DocumentsWorld, result: ScheduleResult, when: string): void {
  for (const counterId of COUNTER_IDS) {
    const rule = RULES.find((r) => counterId.startsWith(r.counter.prefix) && counterId.endsWith(r.counter.suffix))!;
    let truth = 0;
    for (const [path, doc] of world.docs) {
      const target = counterOf(rule, path);
      if (target !== null && "counterId" in target && target.counterId === counterId) truth += contributionOf(rule, doc.data).value;
    }
    const total = world.total(counterId);
    if ((total ?? 0) !== truth) result.failures.push(`${counterId} ${when}: total ${String(total)}, its documents count ${truth}`);
    if (total !== null && world.recorded(counterId) !== total) result.failures.push(`${counterId} ${when}: records count ${world.recorded(counterId)}, total ${total}`);
    if (total === null) continue;
    const rolled = world.counters.state(counterId);
    if (rolled.total !== total) result.failures.push(`${counterId} ${when}: the rollup's total ${rolled.total}, its shards sum to ${total}`);
    if (pendingClaim(world.counters, counterId)) result.failures.push(`${counterId} ${when}: a claim is still pending`);
  }
}
