// Workload 5: mirrors on (MIRRORS, docs/mirrors.md). Our rollup only (the naive trigger has no mirrors),
// under the given delivery: counters whose ids a bench rule mirrors onto a post document each, a steady
// load spread over them. Measured like workload 1, plus the target documents: the states of the mirrored
// field the listeners saw, how long after its commit each increment showed in the field, and the drift
// between the field and the parent's total once settled (must be 0).
//
// The field's lag needs no coverage time: every delta here is positive, so a field value at or above
// the shard sum right after a write (all writes of that counter up to and including it) means the sum it
// holds was read at or after that write.
import type { DocumentReference } from "firebase-admin/firestore";
import { microsCeil } from "../../../functions/src/model/time";
import { readParent, type Counter, type ShardWriteRecord } from "../counters";
import { paced, sleep } from "../pace";
import { groupWrites, type PhaseResult } from "../recorder";
import { summarize, type Summary } from "../stats";
import { phasePrefixOf, type BenchContext } from "./context";
import type { Delivery } from "./phase";

/** Shards of each mirrored counter (the product's default). */
const SHARDS = 10;
const MAX_IN_FLIGHT = 16;
/** The posts collection the rule targets. */
const POSTS = "benchposts";

export interface MirrorResult {
  phase: PhaseResult;
  /** States of the mirrored fields the listeners saw (≤ target writes, as states seen ≤ parent writes). */
  targetStatesSeen: number;
  /** Target writes, counted by the rollup itself ("rollup ops" lines count them with the parent's). */
  targetLagMs: Summary & { uncovered: number };
  /** Σ over the counters of |field − total| once settled. */
  mirrorDrift: number;
  countersWithMirrorDrift: number;
  rule: string;
}

interface FieldState {
  atUs: number;
  value: number;
}

export async function mirrored(ctx: BenchContext, delivery: Delivery): Promise<MirrorResult> {
  const { mirrorCounters: count, mirrorRate: rate, mirrorSeconds: seconds } = ctx.options;
  const counters = await delivery.createCounters("mirror", "ours", count, SHARDS);
  const db = counters[0]!.parent.firestore;
  const prefix = phasePrefixOf(counters[0]!.id);
  const rule = `${prefix}{n}=${POSTS}/${ctx.runId}-{n}:stats.likeCount`;
  const targets = new Map(counters.map((c) => [c.id, db.doc(`${POSTS}/${ctx.runId}-${c.id.slice(prefix.length)}`)]));
  await Promise.all([...targets.values()].map((ref) => ref.set({ title: "a post", stats: { shares: 0 } })));

  const previous = process.env.MIRRORS;
  process.env.MIRRORS = rule; // the handlers this process delivers to read their params at call time
  const states = new Map<string, FieldState[]>(counters.map((c) => [c.id, []]));
  const stops = counters.map((c) => watchField(targets.get(c.id)!, states.get(c.id)!));
  try {
    const run = await delivery.run("5 mirrors", counters, async (increment) => ({
      writes: await paced(rate * seconds, rate, MAX_IN_FLIGHT, (i) => increment(counters[i % count]!)),
    }));
    const finals = await Promise.all(counters.map(async (c) => (await readParent(c)).total));
    await caughtUpFields(counters, states, finals);
    let mirrorDrift = 0;
    let countersWithMirrorDrift = 0;
    for (const [i, c] of counters.entries()) {
      const field = (await targets.get(c.id)!.get()).get("stats.likeCount") as unknown;
      const drift = typeof field === "number" ? Math.abs(field - finals[i]!) : Number.POSITIVE_INFINITY;
      mirrorDrift += drift;
      if (drift !== 0) countersWithMirrorDrift++;
    }
    return {
      phase: run.result,
      targetStatesSeen: [...states.values()].reduce((n, s) => n + s.length, 0),
      targetLagMs: fieldLags(run.writes, states),
      mirrorDrift,
      countersWithMirrorDrift,
      rule,
    };
  } finally {
    for (const stop of stops) stop();
    if (previous === undefined) delete process.env.MIRRORS;
    else process.env.MIRRORS = previous;
  }
}

function watchField(ref: DocumentReference, into: FieldState[]): () => void {
  return ref.onSnapshot((snap) => {
    const value = snap.get("stats.likeCount") as unknown;
    if (typeof value === "number" && snap.updateTime !== undefined) into.push({ atUs: microsCeil(snap.updateTime), value });
  });
}

/** Waits (bounded) until every field's listener has seen the counter's final total. */
async function caughtUpFields(counters: readonly Counter[], states: Map<string, FieldState[]>, finals: readonly number[]): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < 10_000) {
    if (counters.every((c, i) => states.get(c.id)!.at(-1)?.value === finals[i])) return;
    await sleep(50);
  }
}

/** Per write: from its commit until the field first held a sum that contains it (see the header). */
function fieldLags(writes: readonly ShardWriteRecord[], states: Map<string, FieldState[]>): Summary & { uncovered: number } {
  const lags: number[] = [];
  let uncovered = 0;
  for (const [counterId, list] of groupWrites(writes, undefined)) {
    const seen = states.get(counterId) ?? [];
    let sum = 0;
    for (const w of list) {
      sum += w.delta;
      const shown = seen.find((s) => s.atUs >= w.writtenAtUs && s.value >= sum);
      if (shown === undefined) uncovered++;
      else lags.push((shown.atUs - w.writtenAtUs) / 1000);
    }
  }
  return { ...summarize(lags), uncovered };
}
