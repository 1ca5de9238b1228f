// What the rollup's steps share: the shard write an invocation was woken for, its dependencies (the
// store, the clock, the instance's memos), what it may end in, and the run in progress (its operations
// so far). The steps (now.ts, trail.ts, commit.ts) and the orchestrator (index.ts) import
// these; nothing here imports a step.
import type { ShardState } from "../model/shards";
import type { Kept } from "./plan";
import type { GrowthSettings } from "./growth";
import type { RollupOps } from "./ops";
import type { ParentRead, RecountQuery, RollupStore } from "./store";

/** One delivery of a shard write event, reduced to what the rollup needs. */
export interface ShardWrite {
  eventId: string;
  counterId: string;
  shardId: string;
  /** Commit time of the write in microseconds, rounded up. */
  writtenAtUs: number;
  /**
   * When the shard document was created (its createTime), microseconds, rounded up; absent when unknown.
   * A remembered promise defers only writes of shards it knew (plan.ts, sameIncarnation).
   */
  shardCreatedUs?: number;
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
  /** A document's change for a recounted counter (documents/trigger.ts): no shard was written; its time is the document's. */
  recounted?: true;
}

/** Where an invocation is: its sum read ("summed"), or its commit at once made a promise it now owns ("committed"). */
export type RollupStage = "committed" | "summed";

/** What a commit at once (now.ts: a leading edge or a start) came to, as the events that joined it need it. */
export type NowOutcome =
  | { kind: "committed"; readUs: number; after: ParentRead }
  | { kind: "final"; result: "gone" | "overflow" }
  | { kind: "retry" };

export interface NowEntry {
  /** The parent version the commit read, and commits onto. */
  version: string | null;
  outcome: Promise<NowOutcome>;
}

/**
 * This instance's latest commit at once per counter (running or finished), keyed by the parent version it
 * read (now.ts). Bounded: the oldest counters are forgotten first (a forgotten one only costs a sum).
 */
export type NowMemo = Map<string, NowEntry>;

/**
 * The parent as this instance last read it or last wrote it, per counter (its view, version and when: what a
 * fresh read would give while nothing else writes it). Two uses: an event decides from it without a read
 * where plan.ts allows (decideFromMemo: a covered write, a write a remembered promise covers), and a
 * leading edge may start from it (its commit is conditioned on that version, so it lands only if the parent
 * is still exactly that; otherwise the event reads the parent and decides again: index.ts).
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
  /** This instance's commits at once (see NowMemo); without it every event that leads or starts sums. */
  leads?: NowMemo;
  /** This instance's last known parents (see ParentMemo); without it every event reads the parent. */
  parents?: ParentMemo;
  /**
   * How long an owner carries a chain before it hands over (its last commit makes no promise): well within
   * the function's timeout (entry/rollupTotal.ts). Without it, 60 s.
   */
  chainBudgetMs?: number;
  /** SHARD_WRITES_PER_SECOND and MAX_GROWN_SHARDS (growth.ts); without them no counter grows. */
  growth?: GrowthSettings;
  /**
   * The document counters kept by recount (DOCUMENT_COUNTERS: documents/recount.ts): each one's query, and the
   * most documents a recount counts before the counter moves to records. Without it no counter is recounted
   * (a recounted parent's commit fails: the rollup of a codebase without the rules cannot count it).
   */
  recount?: RecountDeps;
  /** Called as the rollup passes a stage; tests throw from it to simulate a crash at that point. */
  onStage?: (stage: RollupStage) => void | Promise<void>;
}

/** What the rollup needs to recount a document counter. */
export interface RecountDeps {
  /** The query whose count() is the counter's total; null when no rule recounts that id (a rule changed). */
  query: (counterId: string) => RecountQuery | null;
  /** RECOUNT_LIMIT: a count reads at most this many index entries; one more document and the counter moves to records. */
  limit: number;
}

/** How a chain that this invocation carried ended (trail.ts). */
export type ChainEnd =
  /** Its owner's sum showed nothing applied since the last: no write. */
  | "quiet"
  /** It ran out of its budget and handed over (its last commit made no promise). */
  | "handover"
  /** A recounted chain's last commit made no promise: the count was what it was before. */
  | "closed"
  /** Another commit fulfilled its promise first (a start, a takeover, a twin of its owner's event). */
  | "fulfilled"
  /** The counter is gone, or was deleted and created again (a promise serves the incarnation it was made on). */
  | "gone"
  | "overflow";

/** Which decision made an invocation commit (plan.ts). */
export type CommitPath = "lead" | "start" | "resume" | "takeover";

export type RollupResult =
  | { kind: "skip"; reason: "unchanged" | "no-parent" | "covered" | "recounted" | "by-records" }
  | { kind: "defer"; toDueMs: number; memo?: true }
  /** Committed as `path` says; a start, a resume and a takeover then carried the chain (`commits` in all, `end`). */
  | { kind: "committed"; path: CommitPath; total: number; lagMs: number; commits: number; end?: ChainEnd }
  /** Covered by a commit at once this instance ran for the same parent version (now.ts). */
  | { kind: "joined" }
  /** A resumed promise that something else had fulfilled meanwhile, or a chain that ended before its first commit. */
  | { kind: "covered-by-other"; end?: ChainEnd }
  | { kind: "gone" }
  | { kind: "overflow" };

/**
 * The result and what it took, and how the counter was kept in the parent it decided on (plan.ts, Kept; null:
 * by its shards, or no parent): a document counter's trigger does its records' part too when it is not recounted.
 */
export type RollupOutcome = RollupResult & { ops: RollupOps; kept?: Kept | null };

/** A rollup run in progress, an event's invocation or the sweep's: its dependencies and the operations made so far. */
export interface Run {
  deps: RollupDeps;
  ops: RollupOps;
  /**
   * Of ops.writes, those its commits made (the parent, its mirror targets, the shards a growth created): the
   * ops line reports it, so that the benchmark shows that nothing else is written (docs/rollup.md).
   */
  commitWrites?: number;
}

/** One invocation in progress: a run for one shard write. */
export interface Invocation extends Run {
  write: ShardWrite;
  /** How the parent the invocation last decided on keeps the counter (plan.ts, Kept). */
  kept?: Kept | null;
  /** The write's owner key (plan.ts, ownerKeyOf): what a promise this invocation makes names. */
  owner: string;
  /** A leading edge started from the instance's remembered parent (ParentMemo): it was still the parent, or not. */
  parentMemo?: "hit" | "missed";
}
