// Workload 11's phases (documents.ts): comments created, published, unpublished, edited and deleted under
// posts on WRAPPED_PROJECT, one write of a comment at a time (so each event's before and after snapshots are
// exactly its write's), every write's event delivered by the production-like model (delivery/deliverer.ts:
// delayed, reordered, some twice) to the trigger of one rollup:
// - ours: the product's document trigger (`documentCounters-<name>` of the built main entry, loaded with
//   DOCUMENT_COUNTERS set to the phase's rule), its reads and writes counted on its calls (delivery/op-count.ts)
//   and logged as "rollup ops" lines, so the cost tables add them to the rollup's. A rule over one collection
//   keeps its counters by recount: the trigger counts and commits the parent itself, nothing else runs. A rule
//   over several collections (the "records" variant), or a counter that moved past RECOUNT_LIMIT, keeps them by
//   records: the shard writes the trigger makes, seen by a listener on each counter's shards, are delivered by
//   the same model to rollupTotal (each event from the shard's state before to its state after; `writes` on the
//   shard says if a listener ever merged two);
// - the usual ±1 trigger (naive/src/documents.ts) on the naive counter of the post.
// A phase may start with comments that exist already (`seeded`, three in four published), which no trigger saw:
// ours counts them with its first count, the usual trigger's counter starts at their count, as an app would set
// it. Its writes go to random posts, or to each post in turn (`roundRobin`: each post written every
// posts/rate seconds, the calm counter). Measured as documents-measure.ts says, against the documents themselves.
import { randomUUID } from "node:crypto";
import type { Timestamp } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { parseDocumentCounterRules } from "../../../functions/src/model/document-rules";
import { documentTriggers } from "../../../functions/src/model/document-triggers";
import { microsCeil } from "../../../functions/src/model/time";
import { counterOf, createBenchCounter, parentStateOf, type Counter, type Rollup } from "../counters";
import { createDeliverer, type DeliveryModel, type DeliveryStats } from "../delivery/deliverer";
import { rfc3339 } from "../delivery/events";
import { counting } from "../delivery/op-count";
import { naiveSource, productSource, type TriggerInput, type WrappedFunctions } from "../delivery/wrapped";
import { NAIVE_POSTS } from "../naive/src/paths";
import { paced, seededRandom } from "../pace";
import { caughtUp, watchParents, type PhaseResult } from "../recorder";
import { withConcurrency } from "../../lib/concurrency";
import { counterIdFor, phasePrefixOf, type BenchContext } from "./context";
import { readComments, seedComments, writeComment } from "./documents-comments";
import { watchRecords, watchShards } from "./documents-watch";
import {
  driftOf,
  exactSinceUs,
  expectedNaiveDrift,
  naiveLags,
  oursHops,
  oursLags,
  recountLags,
  recountStatesOff,
  truthOf,
  type CommentWrite,
  type Drift,
  type ParentSeen,
  type RecordSeen,
} from "./documents-measure";

export const DOCUMENTS_WORKLOAD = "11 documents";
const MAX_IN_FLIGHT = 16;

/** How ours keeps the phase's counters: by recount (a rule over one collection) or by records (over several). */
export type Kept = "recount" | "records";

export interface DocumentLoad {
  posts: number;
  commentsPerPost: number;
  /** Comments of each post that exist before the load (the first ids; three in four published); 0: none. */
  seeded: number;
  /** Each write to the next post in turn (each post written every posts/rate s), or to a random one. */
  roundRobin: boolean;
  rate: number;
  seconds: number;
  instances: number;
  model: DeliveryModel;
  seed: number;
}

/** What sets one phase apart: its counters' key (context.ts, counterIdFor), its row's label, its posts, how ours keeps them. */
export interface DocumentPhaseSpec {
  key: string;
  workload: string;
  /** Our posts' collection: each phase its own (a rule counts every matching document under it). */
  collection: string;
  kept: Kept;
  /** Params the functions read while the phase runs (the move's RECOUNT_LIMIT), besides DOCUMENT_COUNTERS. */
  env?: Record<string, string>;
  /**
   * Runs beside the load, once the counters are watched (the move: documents-move.ts), told when the load ended
   * (Date.now(); null while it runs); the phase waits for it too.
   */
  beside?: (counters: readonly Counter[], loadEndedMs: () => number | null) => Promise<void>;
  /**
   * Ours by recount until then (µs; the move's end): the lag and the check of every version only over the writes
   * and parent states before it. Absent or null: the whole phase.
   */
  recountUntilUs?: () => number | null;
}

export interface DocumentPhase {
  phase: PhaseResult;
  kept: Kept | null;
  /** Writes of comments (events), and those that changed a count. */
  writes: number;
  counted: number;
  /** Comments that existed before the load, per post. */
  seeded: number;
  drift: Drift;
  /** Counted changes delivered more than once, and the drift the usual trigger must show for them. */
  duplicatedCounted: number;
  expectedNaiveDrift: number;
  /** Every counter's total − exact count equals Σ (deliveries − 1) × delta over its writes (what the usual trigger must show). */
  driftAsDuplicated: boolean;
  /** Ours by recount: parent versions with a read time, and those whose total was not the count at it (documents-measure.ts). */
  versions: { states: number; off: number } | null;
  /** Ours: the rule, rollupTotal's deliveries, and the shard writes its listener saw merged into one state (0: none). */
  rule: string | null;
  rollupDeliveries: DeliveryStats | null;
  shardWritesMerged: number;
  /** Ours by records: the lag's two hops (documents-measure.ts, oursHops). */
  hops: ReturnType<typeof oursHops> | null;
}

interface CommentEvent {
  write: CommentWrite;
  input: TriggerInput;
}

/** The posts' path of a phase, and its rule: over one collection (recount) or under a group (records). */
function ruleOf(spec: DocumentPhaseSpec, prefix: string): { postOf: (i: number) => string; rule: string } {
  if (spec.kept === "recount") return { postOf: (i) => `${spec.collection}/${i}`, rule: `${spec.collection}/{post}/comments/{comment}[status==published]=${prefix}{post}` };
  return { postOf: (i) => `${spec.collection}/g/posts/${i}`, rule: `${spec.collection}/{group}/posts/{post}/comments/{comment}[status==published]=${prefix}{post}` };
}

/** One phase of workload 11 for `rollup`. */
export async function documentPhase(ctx: BenchContext, wrapped: WrappedFunctions, rollup: Rollup, spec: DocumentPhaseSpec, load: DocumentLoad): Promise<DocumentPhase> {
  const db = wrapped.db;
  const ids = Array.from({ length: load.posts }, (_, i) => counterIdFor(ctx, spec.key, rollup, i));
  const counters =
    rollup === "naive"
      ? await withConcurrency(8, ids.map((id) => () => createBenchCounter(wrapped.app, "naive", id, 1)))
      : // Ours are created by their first counted comment, as in an app.
        ids.map((id) => counterOf(db, "ours", id, 1));
  const ours = rollup === "ours" ? ruleOf(spec, phasePrefixOf(ids[0]!)) : null;
  const postOf = ours?.postOf ?? ((i: number) => `${NAIVE_POSTS}/${ids[i]}`);
  const rule = ours?.rule ?? null;
  const env = { ...(spec.env ?? {}), ...(rule === null ? {} : { DOCUMENT_COUNTERS: rule }) };
  const previous = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env); // read by the main entry as it loads, and by its trigger as it runs
  try {
    const base = await seedComments(db, load, postOf, ids);
    // The usual trigger's count starts at what exists, as an app would set it when it adds the trigger.
    if (rollup === "naive") await Promise.all(counters.filter((c) => (base.get(c.id) ?? 0) > 0).map((c) => c.parent.update({ total: base.get(c.id) })));
    const triggers = handlersFor(wrapped, rule, spec.kept, load.instances);
    const comments = await readComments(db, load, postOf, ids);
    const deliverer = createDeliverer(triggers, load.model, seededRandom(load.seed));
    const rollupDeliverer = rule === null ? null : createDeliverer(wrapped.instances("ours", load.instances), load.model, seededRandom(load.seed + 1));
    const watch = await watchParents(counters);
    const shards = rollupDeliverer === null ? null : await watchShards(counters, (event) => rollupDeliverer.arrive(event));
    const records = rule === null || spec.kept !== "records" ? null : watchRecords(db, ids);
    try {
      const writes: CommentWrite[] = [];
      const random = seededRandom(load.seed + 2);
      let loadEndedMs: number | null = null;
      const beside = spec.beside === undefined || rule === null ? Promise.resolve() : spec.beside(counters, () => loadEndedMs);
      const startedAtMs = Date.now();
      await paced(Math.round(load.rate * load.seconds), load.rate, MAX_IN_FLIGHT, (i) => {
        const post = load.roundRobin ? i % load.posts : Math.floor(random() * load.posts);
        const comment = comments[post * load.commentsPerPost + Math.floor(random() * load.commentsPerPost)]!;
        return comment.next(async (before) => {
          const { write, after } = await writeComment(comment, before, random, `edit ${i}`);
          writes.push(write);
          deliverer.arrive({ write, input: { before, after, params: rule === null ? { post: comment.post, comment: comment.id } : { d1: comment.post, d2: comment.id }, eventId: randomUUID(), time: rfc3339(write.time) } });
          return after;
        });
      });
      loadEndedMs = Date.now();
      const loadSeconds = (loadEndedMs - startedAtMs) / 1000;
      const deliveries = await deliverer.settled();
      await beside;
      let rollupDeliveries: DeliveryStats | null = null;
      if (shards !== null && rollupDeliverer !== null) {
        await shards.caughtUp();
        rollupDeliveries = await rollupDeliverer.settled();
      }
      const live = (await Promise.all(counters.map(async (c) => ((await c.parent.get()).exists ? [c] : [])))).flat();
      await caughtUp(live, watch);
      if (records !== null) await records.caughtUp();
      const finals = new Map(comments.map((c) => [c.ref.path, { counterId: c.counterId, data: c.data() }]));
      return measure({ spec, rollup, counters, writes, finals, base, seeded: load.seeded, watch, records: records?.seen ?? null, deliveries, rollupDeliveries, loadSeconds, rule, merged: shards?.merged() ?? 0 });
    } finally {
      watch.stop();
      shards?.stop();
      records?.stop();
    }
  } finally {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** The trigger instances of a phase: ours (rule set) or the usual one, each counting what it did. */
function handlersFor(wrapped: WrappedFunctions, rule: string | null, kept: Kept, instances: number): ((event: CommentEvent) => Promise<void>)[] {
  if (rule === null) {
    return wrapped.triggers(naiveSource("documents"), (m) => m.naiveDocumentCount, instances).map((trigger) => async (event: CommentEvent) => {
      const answer = (await trigger(event.input)) as { writeTime?: Timestamp } | null;
      event.write.deliveries++;
      if (answer?.writeTime !== undefined) event.write.naiveAppliedAtUs ??= microsCeil(answer.writeTime);
    });
  }
  const [trigger] = documentTriggers(parseDocumentCounterRules("DOCUMENT_COUNTERS", rule));
  return wrapped.triggers(productSource(), (m) => (m.documentCounters as Record<string, unknown> | undefined)?.[trigger!.name], instances).map((handler) => async (event: CommentEvent) => {
    const started = performance.now();
    const run = await counting(() => handler(event.input));
    // The rollup it ran itself has its own line ("inline"): only the trigger's own reads and writes here.
    const reads = Math.max(0, run.ops.reads - run.ops.inline.reads);
    const writes = Math.max(0, run.ops.writes - run.ops.inline.writes);
    // Kept by recount, the trigger's work is its rollup's (a count and the parent's commit, or a covered write): its line
    // says what; the trigger's own reads and writes are the counter's creation by its first counted document.
    const outcome =
      "error" in run
        ? "document trigger: threw"
        : writes > 0
          ? kept === "recount" ? "document trigger: created the counter (then its rollup's line)" : "document trigger: counted"
          : reads > 0
            ? kept === "recount" ? "document trigger: found no counter, then one (then its rollup's line)" : "document trigger: covered"
            : run.ops.inline.lines > 0
              ? "document trigger: recount (its rollup's line)"
              : "document trigger: unchanged";
    // The rollup's own line (functions/src/rollup/ops.ts), so the cost tables count this trigger's invocations with it.
    logger.debug("rollup ops", { counterId: event.write.counterId, outcome, reads, writes, aggregations: 0, waitMs: 0, durationMs: Math.round(performance.now() - started) });
    if ("error" in run) throw run.error;
    event.write.deliveries++;
  });
}

interface Measured {
  spec: DocumentPhaseSpec;
  rollup: Rollup;
  counters: readonly Counter[];
  writes: readonly CommentWrite[];
  finals: ReadonlyMap<string, { counterId: string; data: Record<string, unknown> | undefined }>;
  base: ReadonlyMap<string, number>;
  seeded: number;
  watch: Awaited<ReturnType<typeof watchParents>>;
  records: ReadonlyMap<string, readonly RecordSeen[]> | null;
  deliveries: DeliveryStats;
  rollupDeliveries: DeliveryStats | null;
  loadSeconds: number;
  rule: string | null;
  merged: number;
}

/** The phase's row, against the documents themselves (documents-measure.ts). */
async function measure(m: Measured): Promise<DocumentPhase> {
  const truth = truthOf(m.finals);
  const totals = new Map<string, number>();
  const parents = new Map<string, ParentSeen[]>();
  let parentWrites = 0;
  let statesSeen = 0;
  let exactAtUs = 0;
  let allExact = true;
  for (const counter of m.counters) {
    const final = parentStateOf(counter.rollup, await counter.parent.get());
    totals.set(counter.id, final?.total ?? 0);
    parentWrites += final?.writes ?? 0;
    const states = m.watch.states(counter.id);
    // The usual trigger's counters were created before the phase: their first states are no write of it.
    statesSeen += states.filter((state) => state.writes > 0).length;
    parents.set(counter.id, states);
    const exact = truth.get(counter.id) ?? 0;
    const since = states.length === 0 && exact === 0 ? 0 : exactSinceUs(states, exact);
    if (since === null) allExact = false;
    else exactAtUs = Math.max(exactAtUs, since);
  }
  const drift = driftOf(totals, truth);
  const expected = expectedNaiveDrift(m.writes);
  const counted = m.writes.filter((w) => w.delta !== 0).length;
  const lastWriteUs = Math.max(0, ...m.writes.map((w) => w.writtenAtUs));
  const kept = m.rule === null ? null : m.spec.kept;
  // The move's phase: by recount until the move ended (spec.recountUntilUs), its writes and states before it.
  const untilUs = m.spec.recountUntilUs?.() ?? Number.POSITIVE_INFINITY;
  const recounted = m.writes.filter((w) => w.writtenAtUs < untilUs);
  const recountParents = new Map([...parents].map(([id, states]) => [id, states.filter((p) => p.atUs < untilUs)]));
  const phase: PhaseResult = {
    workload: m.spec.workload,
    rollup: m.rollup,
    delivery: "production-like",
    opsPrefix: phasePrefixOf(m.counters[0]!.id),
    // Instance time: the document trigger's instances and, ours by records, rollupTotal's (two functions, billed apart).
    deliveries: { ...m.deliveries, busyMs: m.deliveries.busyMs + (m.rollupDeliveries?.busyMs ?? 0) },
    events: m.writes.length,
    counters: m.counters.length,
    increments: counted,
    parentWrites,
    // Σ |total − exact count|: a +1 too many on one post and a −1 on another are two wrong counts, not none.
    drift: drift.absolute,
    countersWithDrift: drift.counters,
    settledExactly: drift.absolute === 0,
    lagFrom: "commit",
    lagMs: kept === null ? naiveLags(m.writes) : kept === "recount" ? recountLags(recounted, recountParents) : oursLags(m.writes, m.records ?? new Map(), parents),
    loadSeconds: m.loadSeconds,
    incrementsPerSecond: counted / m.loadSeconds,
    settleMs: allExact ? Math.max(0, (exactAtUs - lastWriteUs) / 1000) : null,
    statesSeen,
  };
  return {
    phase,
    kept,
    writes: m.writes.length,
    counted,
    seeded: m.seeded,
    drift,
    duplicatedCounted: expected.duplicatedCounted,
    expectedNaiveDrift: expected.absolute,
    driftAsDuplicated: m.counters.every((c) => (totals.get(c.id) ?? 0) - (truth.get(c.id) ?? 0) === (expected.perCounter.get(c.id) ?? 0)),
    versions: kept === "recount" ? recountStatesOff(m.writes, recountParents, m.base) : null,
    rule: m.rule,
    rollupDeliveries: m.rollupDeliveries,
    shardWritesMerged: m.merged,
    hops: kept === "records" && m.records !== null ? oursHops(m.writes, m.records, parents) : null,
  };
}
