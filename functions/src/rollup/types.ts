// What the rollup's steps share: the shard write an invocation was woken for, its dependencies (the
// store, the clock, the instance's memos), what it may end in, and the run in progress (its operations
// so far). The steps (claim.ts, lead.ts, commit.ts) and the orchestrator (index.ts) import
// these; nothing here imports a step.
import type { ShardState } from "../model/shards";
import type { GrowthSettings } from "./growth";
import type { RollupOps } from "./ops";
import type { ParentRead, RollupStore } from "./store";

/** One delivery of a shard write event, reduced to what the rollup needs. */
export interface ShardWrite {
  eventId: string;
  counterId: string;
  shardId: string;
  /** Commit time of the write in microseconds, rounded up. */
  writtenAtUs: number;
  /**
   * True when `writtenAtUs` is the `after` document's update time exactly (no rounding): only then may that
   * document stand for the sum at that time (plan.ts, the single-shard snapshot sum).
   */
  writtenAtExact?: boolean;
  /** The shard before and after the write (model/shards.ts, shardStateOf); undefined where the document did not exist. */
  before: ShardState | undefined;
  after: ShardState | undefined;
  /**
   * Whether the write changed the shard's count, where the writer knows it without the shard's documents;
   * absent: from `before` and `after`. A document counter's trigger rolling up its own increment (below)
   * knows its delta, not the shard: it gives true, and no `before` or `after` (so no document stands for
   * the sum: the shards are summed).
   */
  countChanged?: boolean;
  /**
   * Rolled up by the invocation that committed the write (entry/documentCounters.ts), not delivered as its
   * event: one more, early delivery of the same write, whose event rollupTotal still gets. Its ops line
   * says `inline: true`: it is part of the writer's invocation, not an invocation of its own.
   */
  inline?: true;
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

/** What a leading edge came to, as its joiners need it (lead.ts). */
export type LeadOutcome =
  | { kind: "committed"; readUs: number; after: ParentRead }
  | { kind: "final"; result: "gone" | "overflow" }
  | { kind: "retry" };

export interface LeadEntry {
  /** The parent version the lead read, and commits onto. */
  version: string | null;
  outcome: Promise<LeadOutcome>;
}

/**
 * This instance's latest leading edge per counter (running or finished), keyed by the parent version
 * it read (lead.ts). Bounded: the oldest counters are forgotten first (a forgotten one only costs a sum).
 */
export type LeadMemo = Map<string, LeadEntry>;

/**
 * The parent as this instance's last commit left it, per counter (its view and version: what a fresh read
 * would give while nothing else writes it). A leading edge may start from it instead of reading the parent:
 * its commit is conditioned on that version, so it lands only if the parent is still exactly that, and
 * otherwise the event reads the parent and decides again (index.ts). Nothing else is decided from it.
 * Bounded: the oldest counters are forgotten first (a forgotten one only costs a read).
 */
export type ParentMemo = Map<string, ParentRead>;

export interface RollupDeps {
  store: RollupStore;
  intervalMs: number;
  staleAfterMs: number;
  nowMs: () => number;
  /**
   * The clock whose UTC day a windowed counter's windows are for (model/windows.ts); nowMs when absent.
   * Tests set it ahead of the real clock to cross midnight at any hour (the read times they cover stay real).
   */
  dayClockMs?: () => number;
  sleep: (ms: number) => Promise<void>;
  /** This instance's held claims (see ClaimMemo); without it every event reads. */
  claims?: ClaimMemo;
  /** This instance's leading edges (see LeadMemo); without it every leading event sums. */
  leads?: LeadMemo;
  /** This instance's last committed parents (see ParentMemo); without it every event reads the parent. */
  parents?: ParentMemo;
  /** SHARD_WRITES_PER_SECOND and MAX_GROWN_SHARDS (growth.ts); without them no counter grows. */
  growth?: GrowthSettings;
  /** Called as the rollup passes a stage; tests throw from it to simulate a crash at that point. */
  onStage?: (stage: RollupStage) => void | Promise<void>;
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

/** A rollup run in progress, an event's invocation or the sweep's: its dependencies and the operations made so far. */
export interface Run {
  deps: RollupDeps;
  ops: RollupOps;
}

/** One invocation in progress: a run for one shard write. */
export interface Invocation extends Run {
  write: ShardWrite;
  /** A covered write whose event still had to read the lease (plan.ts: a claimer's retry honours its claim). */
  coveredAfterLeaseRead?: true;
  /** A leading edge started from the instance's last committed parent (ParentMemo): it was still the parent, or not. */
  parentMemo?: "hit" | "missed";
}

/** A claim to finish: its counter, its due time, its lease's version, and the time its sum must be read at or after. */
export interface ClaimToFinish {
  counterId: string;
  dueMs: number;
  /** The lease's version, deleted once the claim is finished; null when no lease was written. */
  version: string | null;
  /** max(due time, the claimer's write) in microseconds: a sum read earlier may miss what it covers. */
  targetUs: number;
  /** Where the lag the commit reports is counted from (the claimer's write; the due time for the sweep). */
  sinceUs: number;
}
