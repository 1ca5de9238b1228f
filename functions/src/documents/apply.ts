// Observations of documents reaching their counter (records.ts says why this is exact):
// read the counter and the documents' records, plan, commit the plan in one atomic write conditioned on
// what was read; when a condition failed (another invocation, the backfill or a deletion got there first),
// read again: usually everything is covered then. The trigger applies one observation per event, the
// backfill a page of them per counter; the model check runs this same code over its in-memory store.
import { backoffMs, pause } from "../model/backoff";
import { planObservations, type Observation, type Plan, type Source } from "./records";
import type { NewCounterRule } from "../model/new-counter";
import { pickShard, type Random } from "../model/shards";
import { dayOf } from "../model/windows";
import { StaleRead, type DocumentStore, type ShardWritten } from "./store";

export interface ApplyOptions {
  source: Source;
  /** The shape of a counter the first counted document creates (model/new-counter.ts); throws for an id no counter may have. */
  newCounter: NewCounterRule;
  /** Read and plan, write nothing. */
  dryRun?: boolean;
  random?: Random;
  now?: () => number;
  /** How to wait between attempts (the model check's simulated clock); default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Reads before giving up (each after a stale commit); the caller tries again later. */
  attempts?: number;
}

/** What applying some observations to one counter did (or, dry, would do). */
export interface ApplyReport {
  counterId: string;
  /** The plan committed (or planned, dry); its writes are the records changed. */
  plan: Plan;
  created: boolean;
  /** Why nothing was written; the observations still stand. */
  problem?: string;
  /** The problem goes away by itself (a deletion still cleaning up, contention): apply again later. */
  retryLater: boolean;
  /** The shard write the commit made (its shard and time); null when it made none (or nothing was committed). */
  shardWrite: ShardWritten | null;
}

const ATTEMPTS = 12;
const BACKOFF_STEP_MS = 10;
const NOTHING: Plan = { writes: [], delta: 0, counter: "none", covered: 0 };

/** Applies `observations` (one per document, all of one counter) to it, exactly. */
export async function applyObservations(store: DocumentStore, counterId: string, observations: readonly Observation[], options: ApplyOptions): Promise<ApplyReport> {
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const attempts = options.attempts ?? ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    const read = await store.read(
      counterId,
      observations.map((o) => o.document),
    );
    const plan = planObservations(read, observations, options.source);
    const report = { counterId, plan, created: false, retryLater: false, shardWrite: null };
    if (plan.counter === "retry-later") return { ...report, retryLater: true, problem: `counter "${counterId}" is still being deleted; its documents count once that is done` };
    if (plan.counter === "unique") return { ...report, problem: `counter "${counterId}" is a unique counter (it counts members): documents cannot count in it` };
    if (plan.writes.length === 0) return report;
    let create = null;
    if (plan.counter === "create") {
      try {
        create = options.newCounter(counterId);
      } catch (error) {
        return { ...report, plan: NOTHING, problem: error instanceof Error ? error.message : String(error) };
      }
    }
    if (options.dryRun === true) return { ...report, created: create !== null };
    const shape = read.shape ?? create ?? { numShards: 1, windowed: false };
    const nowMs = now();
    try {
      const shardWrite = await store.commit(counterId, read, plan, { create, shard: pickShard(shape.numShards, random), day: shape.windowed ? dayOf(nowMs) : null, nowMs });
      return { ...report, created: create !== null, shardWrite };
    } catch (error) {
      if (!(error instanceof StaleRead)) throw error;
      if (attempt >= attempts) return { ...report, plan: NOTHING, retryLater: true, problem: `counter "${counterId}" or its records kept changing under ${attempts} attempts` };
      await (options.sleep ?? pause)(backoffMs(attempt, random, BACKOFF_STEP_MS));
    }
  }
}
