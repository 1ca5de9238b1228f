// What one rollup invocation works with: the shard write it was woken for, its dependencies (the store,
// the clock, the instance's memo), what it may end in, and the operations it has made so far.
import type { LeadMemo } from "./lead";
import type { RollupOps } from "./ops";
import type { RollupStore } from "./storage";

/** One delivery of a shard write event, reduced to what the rollup needs. */
export interface ShardWrite {
  eventId: string;
  counterId: string;
  shardId: string;
  /** Commit time of the write in microseconds, rounded up. */
  writtenAtUs: number;
  /** Shard data before and after the write; undefined where the document did not exist. */
  before: Record<string, unknown> | undefined;
  after: Record<string, unknown> | undefined;
}

export type RollupStage = "claimed" | "summed";

/**
 * Claims this instance's running invocations hold, per counter: the latest due time among them. The
 * invocation holding a claim sums the shards at or after its due time, so a later event of this counter
 * whose write is at or before that due time is covered by that sum and returns without reading anything.
 * An entry lives exactly as long as the invocation that holds the claim: it is removed when that
 * invocation returns or throws. Safe because a thrown claimer is retried by the platform and its retry
 * always finishes the claim (plan.ts: a claimer's retry honours its claim), and a claim it loses to a
 * later one passes its duty on (the later one is due later); the sweep finishes it if retries run out.
 */
export type ClaimMemo = Map<string, number>;

export interface RollupDeps {
  store: RollupStore;
  intervalMs: number;
  staleAfterMs: number;
  nowMs: () => number;
  sleep: (ms: number) => Promise<void>;
  /** This instance's held claims (see ClaimMemo); without it every event reads. */
  claims?: ClaimMemo;
  /** This instance's leading edges (lead.ts, LeadMemo); without it every leading event sums. */
  leads?: LeadMemo;
  /** Called as the rollup passes a stage; tests throw from it to simulate a crash at that point. */
  onStage?: (stage: RollupStage, write: ShardWrite) => void | Promise<void>;
}

export type RollupResult =
  | { kind: "skip"; reason: "unchanged" | "no-parent" | "covered" }
  | { kind: "defer"; toDueMs: number; memo?: true }
  | { kind: "committed"; dueMs: number | null; total: number; lagMs: number }
  /** Covered by a leading edge this instance ran for the same parent version (lead.ts). */
  | { kind: "joined"; dueMs: null }
  | { kind: "covered-by-other"; dueMs: number | null }
  | { kind: "gone"; dueMs: number | null }
  | { kind: "overflow"; dueMs: number | null };

/** The result and what it took. `dueMs` is null for a leading-edge rollup (no claim), else the claim's. */
export type RollupOutcome = RollupResult & { ops: RollupOps };

/** One invocation in progress: its write, its dependencies and the operations made so far. */
export interface Invocation {
  write: ShardWrite;
  deps: RollupDeps;
  ops: RollupOps;
  /** A covered write whose event still had to read the lease (plan.ts: a claimer's retry honours its claim). */
  coveredAfterLeaseRead?: true;
}

export async function wait(inv: Invocation, ms: number): Promise<void> {
  const started = inv.deps.nowMs();
  await inv.deps.sleep(ms);
  inv.ops.waitMs += Math.max(0, inv.deps.nowMs() - started);
}
