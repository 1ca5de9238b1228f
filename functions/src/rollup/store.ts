// The reads and writes the rollup makes, as an interface. The rollup's decisions and steps (index.ts,
// now.ts, trail.ts, commit.ts, sweep.ts, midnight.ts) only talk to a RollupStore, so the very same code
// runs over Firestore in production and in the emulator tests (firestore-store.ts), and over an in-memory store with the same
// semantics in the model check (functions/test/model.test.ts). Times are microseconds (plan.ts); versions
// are opaque tokens that a store turns back into its own preconditions.
import type { DayCounts, WindowsState } from "../model/windows";
import type { Load } from "./growth";
import type { ParentView, Trailing } from "./plan";

/** The parent document as the rollup sees it. */
export interface ParentRead {
  view: ParentView;
  /** The document's version (its update time), for a commit's precondition; null when it does not exist. */
  version: string | null;
  /** When it was read (the snapshot's read time), or written (a commit's time), microseconds: it was the parent then. */
  observedUs: number;
}

/**
 * A claim of the rollup before promises (the lease `counters/{id}/exactCounterRollup/lease`, which this
 * version no longer writes): a claim pending when this version was deployed is finished by the sweep
 * (legacy-lease.ts). Removed once no lease is left (docs/rollup.md, "Upgrading from the lease").
 */
export interface LegacyClaim {
  /** The claimed shard write (`<shard>@<µs>`). */
  eventId: string;
  /** When its claimer was to sum, milliseconds since the epoch. */
  dueMs: number;
}

/**
 * The shards' sum at one consistent read time; `overflow` when no exact JS number holds it. `writes`: the
 * shards' applied writes at that read time (growth.ts), null when they could not be summed with it.
 */
export type ShardSum =
  | { overflow: false; total: number; writes: number | null; readUs: number; days?: DayCounts }
  | { overflow: true; readUs: number };

/** A sum and what reading it cost. */
export interface SumRead {
  sum: ShardSum;
  aggregations: number;
  /** Documents read when the aggregation could not give an exact sum and the shards were read one by one. */
  reads: number;
}

export type CommitResult =
  /**
   * Written: the parent's new version and the commit time (which `rollup.committedAt` records), and what
   * the mirrors (MIRRORS) cost on top of the parent's write: target documents written in the same batch
   * (missing ones asserted absent included), and documents read to find missing targets; and the
   * leaderboard's entry written with it, if any (`boardWrites`: 0 or 1, leaderboard/entry-writes.ts).
   */
  | { kind: "committed"; version: string; commitUs: number; mirrorWrites?: number; mirrorReads?: number; boardWrites?: number }
  /** The parent changed since it was read; nothing was written (`mirrorReads`: what finding that out read). */
  | { kind: "changed"; mirrorReads?: number }
  /** The parent does not exist (only its absence means gone: mirrored.ts); nothing was written. */
  | { kind: "gone"; mirrorReads?: number };

/**
 * How a move of a counter's windows ended (midnight.ts), and what it cost beyond the parent's write: mirror
 * target documents written (only those holding a value that differs), and documents read to compare them.
 */
export interface MoveResult {
  kind: "committed" | "changed" | "gone";
  targetWrites: number;
  reads: number;
}

/**
 * The documents a recounted counter counts (documents/recount.ts): one collection and equality filters
 * (a field, a dotted path, equal to a value), whose count() is its total.
 */
export interface RecountQuery {
  collection: string;
  filters: { field: string; value: boolean | null | number | string }[];
}

/** A count of a recounted counter's documents at one read time, and what it cost. */
export interface CountRead {
  /** The count; when `limit` was given and reached, `limit` + 1 (more documents than the limit). */
  count: number;
  readUs: number;
  /** Billed reads: one per 1,000 index entries read, at least one. */
  reads: number;
}

/** A pending legacy claim found by the sweep: its counter and its lease as read. */
export interface FoundClaim {
  counterId: string;
  claim: LegacyClaim;
  /** The lease's version, for the precondition of its deletion. */
  version: string;
}

/** One page of claims due before a time, oldest first, and what the query cost. */
export interface StaleClaims {
  claims: FoundClaim[];
  /** Documents the query returned (leases, and anything else in a collection with the leases' id). */
  scanned: number;
  /** Documents read as billed: an empty result is billed as one. */
  reads: number;
  /** Where the next page starts (opaque: only the store that made it reads it); null after the last page. */
  next: ClaimCursor | null;
}

/** A position in the stale claims, after the last document of a page (its due time and its name). */
export type ClaimCursor = object;

/** One page of parents with a promise due in a span of time (the sweep's query), oldest first. */
export interface PromisePage {
  counters: FoundCounter[];
  /** Documents read as billed (an empty page is billed as one). */
  reads: number;
  /** Where the next page starts (opaque: only the store that made it reads it); null after the last page. */
  next: PromiseCursor | null;
}

/** A position in the sweep's query of promises, after the last document of a page. */
export type PromiseCursor = object;

/** One counter the midnight commit's (or the sweep's) query found: its id and its parent as read. */
export interface FoundCounter {
  counterId: string;
  parent: ParentRead;
}

/** One page of counters whose windows move at or before a time, as found, and what the query cost. */
export interface MidnightPage {
  counters: FoundCounter[];
  /** Documents read as billed (an empty page is billed as one). */
  reads: number;
  /** Where the next page starts (opaque: only the store that made it reads it); null after the last page. */
  next: MidnightCursor | null;
}

/** A position in the midnight commit's query, after the last document of a page. */
export type MidnightCursor = object;

export interface RollupStore {
  readParent(counterId: string): Promise<ParentRead>;
  /**
   * The count of a recounted counter's documents at one read time: at most `limit` + 1 when a limit is given
   * (a count() over the query limited to that: it never reads more index entries), else all of them.
   */
  count(query: RecountQuery, limit: number | null): Promise<CountRead>;
  /** Deletes a legacy claim's lease if it is still at `version`; false if it changed or is gone. */
  deleteClaim(counterId: string, version: string): Promise<boolean>;
  /**
   * The shards' sum at one read time (sum.ts over Firestore). `numShards`: the parent's, when known; the
   * applied writes are summed with the counts only then. `days`: for a windowed counter, its open days as
   * of the sum's read time (model/windows.ts), each summed at that same read time into `sum.days`.
   */
  sum(counterId: string, numShards: number | null, days?: (readUs: number) => readonly string[]): Promise<SumRead>;
  /**
   * The one atomic write of a rollup: `total` = the sum and `rollup.readTime` = its read time (plus the
   * bookkeeping in `fields`), on condition that the parent is still at `parent.version`. Never creates it.
   */
  commit(counterId: string, parent: ParentRead, sum: { total: number; readUs: number }, fields: CommitFields): Promise<CommitResult>;
  /**
   * The midnight commit's write (midnight.ts): a windowed counter's windows moved to a later day from its own
   * days, with no sum (model/windows.ts says why that is exact): `windows`, `rollup.days` and
   * `rollup.windowsMoveAt`, on condition that the parent is still at `parent.version`; `total` and its read
   * time stay. In the same atomic write, each mirror target of the counter that exists gets the values it
   * mirrors, written only where they differ from what it holds (so a target that appeared since the last
   * commit gets them, and one that holds them is not written). Never creates the parent or a target.
   */
  moveWindows(counterId: string, parent: ParentRead, moved: WindowsState): Promise<MoveResult>;
  /**
   * One page of the legacy claims (leases) of any counter due before `dueBeforeMs`, oldest first (the sweep):
   * up to `limit` documents after `after` (from the start when absent). Pages by a cursor, so what a page
   * skips (a document that is no lease) never hides what comes after it.
   */
  staleClaims(dueBeforeMs: number, limit: number, after?: ClaimCursor): Promise<StaleClaims>;
  /**
   * One page of the counters whose promise (`rollup.trailing.dueAt`) is due at or after `dueFromMs` and
   * before `dueBeforeMs`, oldest first (the sweep), with their parents as read: up to `limit` after `after`.
   */
  promisesDue(dueFromMs: number, dueBeforeMs: number, limit: number, after?: PromiseCursor): Promise<PromisePage>;
  /** How far the sweep has checked the promises (ms since the epoch): every promise due before it; null before its first run. */
  readSweepMark(): Promise<number | null>;
  /** Records how far the sweep has checked the promises (never moved back by the store's caller). */
  writeSweepMark(dueBeforeMs: number): Promise<void>;
  /**
   * One page of the windowed counters whose `rollup.windowsMoveAt` is at or before `atMs` (the midnight
   * commit, midnight.ts), oldest first: up to `limit` after `after` (from the start when absent), with their
   * parents as read. Paged by a cursor, as staleClaims.
   */
  midnightCounters(atMs: number, limit: number, after?: MidnightCursor): Promise<MidnightPage>;
}

/** Rollup bookkeeping a commit writes next to the total. */
export interface CommitFields {
  /**
   * `kept`: a recounted counter that grew past RECOUNT_LIMIT starts its move to records ("moving", with
   * `rollup.movingSince` the commit's time: documents/move.ts); a move whose records cover every document ends
   * ("records": the total the sum of the shards from then on).
   */
  kept?: "moving" | "records";
  /**
   * `rollup.trailing`: the promise this commit makes (its owner then carries the chain: trail.ts), null to
   * make none (a leading edge, a chain's handover, the sweep), absent to leave the parent's as it is (a
   * reconcile's repair: plan.ts, "every other writer keeps the promise").
   */
  trailing?: Trailing | null;
  /** `rollup.intervalMs`: the interval to record (plan.ts, intervalToRecord); absent: left as it is (a reconcile's). */
  intervalMs?: number;
  /** A reconcile's repair: `rollup.reconciledAt` is stamped with the commit's time. */
  reconciled?: true;
  /** `rollup.load`: the load measured with this sum (growth.ts); absent when it was not measured (left as it is). */
  load?: Load;
  /**
   * The counter grows: `numShards` goes from `from` (the parent's, which the commit's precondition pins)
   * to `to`, and shards from..to-1 are created at 0 in the same atomic write, so every shard an increment
   * can pick exists from the moment it can be picked. `writesPerSecond`: the applied rate it sized for (logged).
   */
  grow?: { from: number; to: number; writesPerSecond: number | null };
  /**
   * A windowed counter's `windows` for the commit's day, `rollup.days` after the sum, and
   * `rollup.windowsMoveAt`, when the windows next move by themselves (null: they do not).
   */
  windows?: WindowsState;
}
