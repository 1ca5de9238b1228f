// Workload 5: mirrors on (MIRRORS, docs/mirrors.md). Our rollup only (the naive trigger has no mirrors),
// under the given delivery: counters whose ids a bench rule mirrors onto a post document each, a steady
// load spread over them. Measured like workload 1, plus the target documents: the states of the mirrored
// field the listeners saw, how long after its commit each increment showed in the field, and the drift
// between the field and the parent's total once settled (must be 0: the run fails otherwise).
//
// The field's lag needs no coverage time: every delta here is positive, so a field value at or above
// the shard sum right after a write (all writes of that counter up to and including it) means the sum it
// holds was read at or after that write.
import type { DocumentReference } from "firebase-admin/firestore";
import { microsCeil } from "../../../functions/src/model/time";
import { readParent, type Counter, type ShardWriteRecord } from "../counters";
import { int, markdownTable, ms } from "../format";
import { paced, sleep } from "../pace";
import { groupWrites, type PhaseResult } from "../recorder";
import { summarize, type Summary } from "../stats";
import { lagBoundMs } from "../targets";
import { phasePrefixOf, step, type BenchContext } from "./context";
import type { Delivery } from "./phase";
import { sizes } from "../options";
import { deliveryOf, type Workload } from "./workload";

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

const FLAGS = [
  { key: "mirrorCounters", flag: "--mirror-counters", full: 10, quick: 3, min: 1, help: "workload 5: mirrored counters (10 shards each)" },
  { key: "mirrorRate", flag: "--mirror-rate", full: 100, quick: 20, min: 1, help: "workload 5: increments per second over them" },
  { key: "mirrorSeconds", flag: "--mirror-seconds", full: 20, quick: 3, min: 1, help: "workload 5: duration" },
] as const;

export const mirrors: Workload<MirrorResult> = {
  id: "mirrors",
  flags: FLAGS,
  stages: ["production-like"],
  run(ctx, on) {
    const { mirrorCounters: count, mirrorRate: rate, mirrorSeconds: seconds } = sizes(ctx.options, FLAGS);
    return step(`workload 5, mirrors on, production-like delivery: ${rate}/s for ${seconds} s over ${count} mirrored counters, ours only`, () =>
      mirrored(ctx, deliveryOf(on), count, rate, seconds),
    );
  },
  phases: (m) => [m.phase],
  section: (m) => [`Workload 5, mirrors on (MIRRORS=${m.rule}), the mirrored field on each post:`, "", mirrorTable(m)],
  targets(m, { intervalMs }) {
    const lag = m.targetLagMs;
    return [
      {
        target: "workload 5: mirrored field = total once settled, field lag p99 ≤ interval + 1 s",
        measured: `drift field − total ${int(m.mirrorDrift)} over ${m.phase.counters} counters; field lag p50 ${ms(lag.p50)} ms, p99 ${ms(lag.p99)} ms${lag.uncovered > 0 ? ` (${lag.uncovered} never shown)` : ""}`,
        met: m.mirrorDrift === 0 && lag.uncovered === 0 && lag.p99 !== null && lag.p99 <= lagBoundMs(intervalMs),
      },
    ];
  },
  failures: (m) => (m.mirrorDrift === 0 ? [] : [`the mirrored field differs from the total on ${m.countersWithMirrorDrift} counter(s) of workload 5`]),
};

/** The parent and the mirrored field side by side. */
function mirrorTable(m: MirrorResult): string {
  const p = m.phase;
  return markdownTable(
    ["delivery", "counters", "increments", "parent writes", "field states seen", "field lag p50", "field lag p99", "drift total − Σ shards", "drift field − total"],
    [[p.delivery, int(p.counters), int(p.increments), int(p.parentWrites), int(m.targetStatesSeen), ms(m.targetLagMs.p50), ms(m.targetLagMs.p99), int(p.drift), int(m.mirrorDrift)]],
    2,
  );
}

async function mirrored(ctx: BenchContext, delivery: Delivery, count: number, rate: number, seconds: number): Promise<MirrorResult> {
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
