// Workload 11's phases (documents.ts): comments created, published, unpublished, edited and deleted under
// posts on WRAPPED_PROJECT, one write of a comment at a time (so each event's before and after snapshots are
// exactly its write's), every write's event delivered by the production-like model (delivery/deliverer.ts:
// delayed, reordered, some twice) to the trigger of one rollup:
// - ours: the product's document trigger (`documentCounters-<name>` of the built main entry, loaded with
//   DOCUMENT_COUNTERS set), its reads and writes counted on its calls (delivery/op-count.ts) and logged as
//   "rollup ops" lines, so the cost tables add them to the rollup's; then the shard writes it makes, seen by a
//   listener on each counter's shards, delivered by the same model to rollupTotal (each event from the
//   shard's state before to its state after; `writes` on the shard says if a listener ever merged two);
// - the usual ±1 trigger (naive/src/documents.ts) on the naive counter of the post.
// Measured as documents-measure.ts says, against the documents themselves.
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
import { readComments, writeComment } from "./documents-comments";
import { watchRecords, watchShards } from "./documents-watch";
import {
  driftOf,
  exactSinceUs,
  expectedNaiveDrift,
  naiveLags,
  oursHops,
  oursLags,
  truthOf,
  type CommentWrite,
  type Drift,
  type ParentSeen,
  type RecordSeen,
} from "./documents-measure";

export const DOCUMENTS_WORKLOAD = "11 documents";
/** Our posts (the naive trigger's are NAIVE_POSTS): collections no other rule or trigger watches. */
const OUR_POSTS = "benchDocPosts";
const MAX_IN_FLIGHT = 16;

export interface DocumentLoad {
  posts: number;
  commentsPerPost: number;
  rate: number;
  seconds: number;
  instances: number;
  model: DeliveryModel;
  seed: number;
}

export interface DocumentPhase {
  phase: PhaseResult;
  /** Writes of comments (events), and those that changed a count. */
  writes: number;
  counted: number;
  drift: Drift;
  /** Counted changes delivered more than once, and the drift the usual trigger must show for them. */
  duplicatedCounted: number;
  expectedNaiveDrift: number;
  /** Every counter's total − exact count equals Σ (deliveries − 1) × delta over its writes (what the usual trigger must show). */
  driftAsDuplicated: boolean;
  /** Ours: the rule, rollupTotal's deliveries, and the shard writes its listener saw merged into one state (0: none). */
  rule: string | null;
  rollupDeliveries: DeliveryStats | null;
  shardWritesMerged: number;
  /** Ours: the lag's two hops (documents-measure.ts, oursHops). */
  hops: ReturnType<typeof oursHops> | null;
}

interface CommentEvent {
  write: CommentWrite;
  input: TriggerInput;
}

/** One phase of workload 11 for `rollup`. */
export async function documentPhase(ctx: BenchContext, wrapped: WrappedFunctions, rollup: Rollup, load: DocumentLoad): Promise<DocumentPhase> {
  const db = wrapped.db;
  const ids = Array.from({ length: load.posts }, (_, i) => counterIdFor(ctx, "documents-prod", rollup, i));
  const counters =
    rollup === "naive"
      ? await withConcurrency(8, ids.map((id) => () => createBenchCounter(wrapped.app, "naive", id, 1)))
      : // Ours are created by their first counted comment, as in an app.
        ids.map((id) => counterOf(db, "ours", id, 1));
  const postOf = (i: number) => (rollup === "ours" ? `${OUR_POSTS}/${i}` : `${NAIVE_POSTS}/${ids[i]}`);
  const rule = rollup === "ours" ? `${OUR_POSTS}/{post}/comments/{comment}[status==published]=${phasePrefixOf(ids[0]!)}{post}` : null;
  const previous = process.env.DOCUMENT_COUNTERS;
  if (rule !== null) process.env.DOCUMENT_COUNTERS = rule; // read by the main entry as it loads, and by its trigger as it runs
  try {
    const triggers = handlersFor(wrapped, rule, load.instances);
    const comments = await readComments(db, load, postOf, ids);
    const deliverer = createDeliverer(triggers, load.model, seededRandom(load.seed));
    const rollupDeliverer = rule === null ? null : createDeliverer(wrapped.instances("ours", load.instances), load.model, seededRandom(load.seed + 1));
    const watch = await watchParents(counters);
    const shards = rollupDeliverer === null ? null : await watchShards(counters, (event) => rollupDeliverer.arrive(event));
    const records = rule === null ? null : watchRecords(db, ids);
    try {
      const writes: CommentWrite[] = [];
      const random = seededRandom(load.seed + 2);
      const startedAtMs = Date.now();
      await paced(Math.round(load.rate * load.seconds), load.rate, MAX_IN_FLIGHT, (i) => {
        const comment = comments[Math.floor(random() * comments.length)]!;
        return comment.next(async (before) => {
          const { write, after } = await writeComment(comment, before, random, `edit ${i}`);
          writes.push(write);
          deliverer.arrive({ write, input: { before, after, params: rule === null ? { post: comment.post, comment: comment.id } : { d1: comment.post, d2: comment.id }, eventId: randomUUID(), time: rfc3339(write.time) } });
          return after;
        });
      });
      const loadSeconds = (Date.now() - startedAtMs) / 1000;
      const deliveries = await deliverer.settled();
      let rollupDeliveries: DeliveryStats | null = null;
      if (shards !== null && rollupDeliverer !== null) {
        await shards.caughtUp();
        rollupDeliveries = await rollupDeliverer.settled();
      }
      const live = (await Promise.all(counters.map(async (c) => ((await c.parent.get()).exists ? [c] : [])))).flat();
      await caughtUp(live, watch);
      if (records !== null) await records.caughtUp();
      const finals = new Map(comments.map((c) => [c.ref.path, { counterId: c.counterId, data: c.data() }]));
      return measure({ rollup, counters, writes, finals, watch, records: records?.seen ?? null, deliveries, rollupDeliveries, loadSeconds, rule, merged: shards?.merged() ?? 0 });
    } finally {
      watch.stop();
      shards?.stop();
      records?.stop();
    }
  } finally {
    if (previous === undefined) delete process.env.DOCUMENT_COUNTERS;
    else process.env.DOCUMENT_COUNTERS = previous;
  }
}

/** The trigger instances of a phase: ours (rule set) or the usual one, each counting what it did. */
function handlersFor(wrapped: WrappedFunctions, rule: string | null, instances: number): ((event: CommentEvent) => Promise<void>)[] {
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
    // The rollup of its own shard write has its own line ("inline"): only the trigger's own reads and writes here.
    const reads = run.ops.reads - run.ops.inline.reads;
    const writes = run.ops.writes - run.ops.inline.writes;
    const outcome = "error" in run ? "document trigger: threw" : writes > 0 ? "document trigger: counted" : reads > 0 ? "document trigger: covered" : "document trigger: unchanged";
    // The rollup's own line (functions/src/rollup/ops.ts), so the cost tables count this trigger's invocations with it.
    logger.debug("rollup ops", { counterId: event.write.counterId, outcome, reads, writes, aggregations: 0, waitMs: 0, durationMs: Math.round(performance.now() - started) });
    if ("error" in run) throw run.error;
    event.write.deliveries++;
  });
}

interface Measured {
  rollup: Rollup;
  counters: readonly Counter[];
  writes: readonly CommentWrite[];
  finals: ReadonlyMap<string, { counterId: string; data: Record<string, unknown> | undefined }>;
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
    // The usual trigger's counters were created at 0 before the phase: their first state is no write.
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
  const phase: PhaseResult = {
    workload: DOCUMENTS_WORKLOAD,
    rollup: m.rollup,
    delivery: "production-like",
    opsPrefix: phasePrefixOf(m.counters[0]!.id),
    // Instance time: the document trigger's instances and, ours, rollupTotal's (two functions, billed apart).
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
    lagMs: m.records === null ? naiveLags(m.writes) : oursLags(m.writes, m.records, parents),
    loadSeconds: m.loadSeconds,
    incrementsPerSecond: counted / m.loadSeconds,
    settleMs: allExact ? Math.max(0, (exactAtUs - lastWriteUs) / 1000) : null,
    statesSeen,
  };
  return {
    phase,
    writes: m.writes.length,
    counted,
    drift,
    duplicatedCounted: expected.duplicatedCounted,
    expectedNaiveDrift: expected.absolute,
    driftAsDuplicated: m.counters.every((c) => (totals.get(c.id) ?? 0) - (truth.get(c.id) ?? 0) === (expected.perCounter.get(c.id) ?? 0)),
    rule: m.rule,
    rollupDeliveries: m.rollupDeliveries,
    shardWritesMerged: m.merged,
    hops: m.records === null ? null : oursHops(m.writes, m.records, parents),
  };
}
