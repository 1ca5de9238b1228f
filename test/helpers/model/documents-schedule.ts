// One seeded schedule of the document counters' model check (documents-model.test.ts): an app writes
// comments and likes (created, edited in and out of their conditions, with summed fields good and bad,
// deleted and created again), some before the triggers exist; the platform delivers each write's event
// at least once, late, out of order, concurrently, and again after an invocation crashed (before or
// after one of its Firestore calls took effect) or met a counter still being deleted; backfills run
// racing all that, crash and resume from the position they last reported; counters are resharded and
// deleted. The real code decides and writes (functions/src/documents/event.ts, apply.ts, backfill.ts) over an
// in-memory Firestore (documents-world.ts). At the end every counter equals what its documents count,
// its records agree, a second backfill changes nothing, and a deleted counter no later change named is
// still gone.
import { backfillDocuments, type BackfillReport } from "../../../functions/src/documents/backfill";
import { countWrite, type DocumentWrite } from "../../../functions/src/documents/event";
import type { DocumentSource, DocumentStore } from "../../../functions/src/documents/store";
import { contributionOf, counterOf, matchDocument } from "../../../functions/src/model/document-match";
import { parseDocumentCounterRules, type DocumentRule } from "../../../functions/src/model/document-rules";
import { documentTriggers } from "../../../functions/src/model/document-triggers";
import { between, chance, pick, rngOf, Sim, type Rng } from "./sim";
import { DocumentsWorld } from "./documents-world";

export const RULES = parseDocumentCounterRules(
  "DOCUMENT_COUNTERS",
  "posts/{post}/comments/{c}=post-{post}-comments,posts/{post}/comments/{c}[status==published]=post-{post}-published," +
    "posts/{post}/comments/{c}:stars=post-{post}-stars,posts/{post}/likes/{uid}=post-{post}-likes",
);
const TRIGGERS = documentTriggers(RULES);
const POSTS = ["p1", "p2", "bad post"];
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
}

export interface ScheduleResult {
  shape: ScheduleShape;
  failures: string[];
  trace: string[];
  deliveries: number;
  crashes: number;
  backfillRuns: number;
  backfillResumes: number;
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
  const sim = new Sim(0);
  const world = new DocumentsWorld(1_800_000_000_000_000);
  const shape: ScheduleShape = {
    seed,
    writes: between(rng, 5, 40),
    predeploy: chance(rng, 0.5) ? between(rng, 1, 15) : 0,
    racingBackfills: between(rng, 0, 2),
    deletes: chance(rng, 0.3) ? between(rng, 1, 2) : 0,
    reshards: chance(rng, 0.3) ? 1 : 0,
    duplicateP: pick(rng, [0, 0.3, 0.8]),
    crashP: pick(rng, [0, 0.05, 0.15]),
  };
  const result: ScheduleResult = { shape, failures: [], trace: [], deliveries: 0, crashes: 0, backfillRuns: 0, backfillResumes: 0 };
  const trace = (line: string) => result.trace.push(`${(sim.now() / 1000).toFixed(3)}ms ${line}`);
  const numShards = between(rng, 1, 3);
  const options = { newCounter: () => ({ numShards, windowed: false }), random: rng, now: () => 1_800_000_000_000 + sim.now() / 1000, sleep: (ms: number) => sim.sleep(ms) };
  let crashless = false;
  const store = remote(world, sim, rng, () => (crashless ? 0 : shape.crashP));
  const lastChange = new Map<string, number>(); // counter id -> virtual time of the last write of one of its documents
  const deletedAt = new Map<string, number>();
  /** The last virtual time a backfill was running: one running after a deletion may create the counter again. */
  let lastBackfillActive = -1;

  /** One invocation of a trigger for a write: every rule of its pattern, as functions/src/entry/documentCounters.ts runs them. */
  async function invoke(write: DocumentWrite, rules: readonly DocumentRule[]): Promise<void> {
    let failure: Error | undefined;
    for (const rule of rules) {
      try {
        const outcome = await countWrite(store, rule, write, options);
        if (outcome?.kind === "applied" && outcome.report.retryLater) throw new RetryLater(outcome.report.problem ?? "retry later");
        if (outcome?.kind === "applied" && outcome.report.problem !== undefined) result.failures.push(`${write.path}: ${outcome.report.problem}`);
      } catch (error) {
        if (!(error instanceof SimulatedCrash) && !(error instanceof RetryLater)) {
          result.failures.push(`${write.path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
          return;
        }
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }

  /** The platform: delivers the event at least once, retrying a failed invocation with a backoff, until one succeeds. */
  function deliver(write: DocumentWrite, atMs: number): void {
    const rules = TRIGGERS.find((t) => matchDocument(t.rules[0]!.document, write.path) !== null)?.rules ?? [];
    const attempt = (n: number) => {
      result.deliveries++;
      invoke(write, rules).then(
        () => trace(`delivered ${write.path}@${write.version}`),
        (error: unknown) => {
          result.crashes++;
          trace(`invocation of ${write.path}@${write.version} failed (${error instanceof Error ? error.message : String(error)}); retried`);
          sim.at(sim.now() + between(rng, 1, 300) * 1000, () => attempt(n + 1));
        },
      );
    };
    sim.at(atMs * 1000, () => attempt(1));
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
    const at = t;
    const path = pick(rng, paths);
    const data = { status: pick(rng, ["published", "draft"]), stars: pick(rng, [1, 3, 5, -2, 2.5, "x", undefined]), text: String(between(rng, 0, 9)) };
    sim.at(at * 1000, () => {
      const exists = world.docs.has(path);
      const write = world.write(path, exists && chance(rng, 0.35) ? undefined : data);
      if (write === null) return;
      for (const rule of RULES) {
        const target = counterOf(rule, path);
        if (target !== null && !("problem" in target)) lastChange.set(target.counterId, sim.now());
      }
      trace(`app ${write.after === undefined ? "deletes" : "writes"} ${path}@${write.version} ${JSON.stringify(write.after ?? null)}`);
      if (at < deployMs) return; // before the triggers: no event
      deliver(write, at + between(rng, 0, 200));
      const copies = chance(rng, shape.duplicateP) ? between(rng, 1, 2) : 0;
      for (let d = 0; d < copies; d++) deliver(write, at + between(rng, 0, 800));
    });
  }
  const span = Math.max(t, deployMs);
  for (let i = 0; i < shape.racingBackfills; i++) {
    sim.at(between(rng, deployMs, span + 200) * 1000, () => {
      lastBackfillActive = sim.now();
      void backfillToEnd(`racing backfill ${i + 1}`);
    });
  }
  for (let i = 0; i < shape.deletes; i++) {
    const counterId = pick(rng, COUNTER_IDS);
    sim.at(between(rng, deployMs, span + 100) * 1000, () => {
      if (!world.deleteCounter(counterId)) return;
      deletedAt.set(counterId, sim.now());
      trace(`deleteCounter ${counterId}`);
      sim.at(sim.now() + between(rng, 0, 300) * 1000, () => world.finishCleanup(counterId));
    });
  }
  for (let i = 0; i < shape.reshards; i++) {
    const counterId = pick(rng, COUNTER_IDS);
    sim.at(between(rng, deployMs, span) * 1000, () => world.reshard(counterId, between(rng, 1, 4)));
  }
  await sim.run();

  // A deleted counter comes back only with a change of one of its documents after the deletion (or a backfill).
  for (const [counterId, at] of deletedAt) {
    const changed = (lastChange.get(counterId) ?? -1) > at || lastBackfillActive >= at;
    if (!changed && world.counters.has(counterId)) result.failures.push(`${counterId} came back after its deleteCounter with no later change of its documents`);
  }
  crashless = true;
  if (shape.predeploy > 0 || deletedAt.size > 0) {
    const final = backfillToEnd("final backfill");
    await sim.run();
    await final;
  }
  checkExact(world, result, "at the end");
  const again = backfillToEnd("second backfill");
  await sim.run();
  const second = await again;
  if (second.counted !== 0 || second.takenOut !== 0) result.failures.push(`a second backfill changed something: counted ${second.counted}, took out ${second.takenOut}`);
  checkExact(world, result, "after a second backfill");
  return result;
}

/** Every counter equals what its documents count, and what its records count. */
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
  }
}
