// A leaderboard in memory for the board model check (board-schedule.ts), over the same clock as the counters'
// World (world.ts): the board's entries, which the World's writers write in the same commit as a total
// (BoardSide), and its summary, rolled up by the rollup's real code through this RollupStore, as
// functions/src/leaderboard/board-store.ts does over Firestore: the summary always "exists" (empty before its
// first commit, which creates it), its "sum" is the real recount (functions/src/model/board-buckets.ts, with
// small buckets so that boards of a few counters split and merge) at the current read time, its mark's
// writes the latest entry write, and its commit conditioned on the summary's version. Every write of an entry
// is an event for the board's rollup, handed to `onEvent`.
import { randomUUID } from "node:crypto";
import { entryKey, rankFrom, rankQuery, type BoardSummary } from "../../../functions/src/model/board";
import { recountBuckets, type BucketLimits, type Buckets } from "../../../functions/src/model/board-buckets";
import type { ParentView, Trailing } from "../../../functions/src/rollup/plan";
import type { CommitFields, CommitResult, CountRead, MidnightPage, MoveResult, ParentRead, PromisePage, RollupStore, StaleClaims, SumRead } from "../../../functions/src/rollup/store";
import type { ShardWrite } from "../../../functions/src/rollup/types";
import type { BoardSide, CommitSource } from "./world";

interface Entry {
  total: number;
  changedUs: number;
  createUs: number;
}

interface Summary {
  of: number;
  /** The mark of its sum: the latest entry write it saw (`rollup.latestChange`). */
  latestUs: number;
  buckets: Buckets;
  readUs: number;
  committedUs: number;
  recordedIntervalMs: number | null;
  trailing: Trailing | null;
  updateUs: number;
  createUs: number;
}

/** A commit of the summary, as the properties look at it. */
export interface SummaryCommit {
  atUs: number;
  readUs: number;
}

/** A deliberate fault (functions/test/board-model.test.ts expects it caught): a recount whose mark ignores entry writes. */
export type BoardMutant = "mark-without-writes";

export class BoardWorld implements RollupStore, BoardSide {
  private readonly entries = new Map<string, Entry>();
  /**
   * Every entry write, by counter: its time, and whether it moved the entry's total (the properties check the
   * summary covers the last that did: one that did not changes no count, and its event is skipped).
   */
  readonly entryWrites: { counterId: string; atUs: number; moved: boolean }[] = [];
  private summary: Summary | null = null;
  /** The recount each sum read, by its read time, for the commit of that sum. */
  private readonly recounts = new Map<number, { of: number; buckets: Buckets; latestUs: number }>();
  readonly commits: SummaryCommit[] = [];
  readonly violations: string[] = [];
  private sweepMarkMs: number | null = null;
  /** Receives every entry write as the board rollup's event. */
  onEvent: (event: ShardWrite) => void = () => undefined;

  constructor(
    readonly name: string,
    private readonly clock: { commitUs: () => number; readUs: () => number },
    private readonly limits: BucketLimits,
    private readonly mutant?: BoardMutant,
  ) {}

  // --- the counters' side (BoardSide) -----------------------------------------------------------------

  write(counterId: string, total: number | null, atUs: number): void {
    const key = entryKey(counterId);
    const before = this.entries.get(key);
    if (total === null && before === undefined) return; // a delete of an entry that is not there writes nothing
    const createUs = before?.createUs ?? atUs;
    if (total === null) this.entries.delete(key);
    else this.entries.set(key, { total, changedUs: atUs, createUs });
    this.entryWrites.push({ counterId, atUs, moved: (before?.total ?? null) !== total });
    this.onEvent({
      eventId: `entry-${randomUUID().slice(0, 8)}`,
      counterId: this.name,
      shardId: key,
      writtenAtUs: atUs,
      shardCreatedUs: createUs,
      before: undefined,
      after: undefined,
      countChanged: (before?.total ?? null) !== total,
    });
  }

  // --- what the properties read ----------------------------------------------------------------------

  /** The summary as a client reads it (EMPTY before the first commit), and when it was read. */
  readSummary(): BoardSummary & { readUs: number | null } {
    if (this.summary === null) return { of: 0, bounds: [], counts: [0], readUs: null };
    return { of: this.summary.of, bounds: [...this.summary.buckets.bounds], counts: [...this.summary.buckets.counts], readUs: this.summary.readUs };
  }

  /** `counterId`'s entry's total; undefined when it has none. */
  entryTotal(counterId: string): number | undefined {
    return this.entries.get(entryKey(counterId))?.total;
  }

  entryCount(): number {
    return this.entries.size;
  }

  /** A rank as rankOf reads it: the summary, and a count over the entries in the range it names. */
  rankOf(total: number): number {
    const query = rankQuery(this.readSummary(), total);
    if (query.count === null) return rankFrom(query, 0);
    const { greaterThan, lessThan } = query.count;
    const counted = [...this.entries.values()].filter((e) => e.total > greaterThan && (lessThan === null || e.total < lessThan)).length;
    return rankFrom(query, counted);
  }

  /** Whether every bucket of the summary holds what the entries hold now. */
  summaryProblems(): string[] {
    const s = this.readSummary();
    const problems: string[] = [];
    const totals = [...this.entries.values()].map((e) => e.total);
    if (s.of !== totals.length) problems.push(`the summary says ${s.of} counters, the board has ${totals.length}`);
    s.counts.forEach((n, i) => {
      const lo = i === 0 ? -Infinity : s.bounds[i - 1]!;
      const hi = i < s.bounds.length ? s.bounds[i]! : Infinity;
      const inside = totals.filter((t) => t >= lo && t < hi);
      if (inside.length !== n) problems.push(`bucket ${i} [${lo}, ${hi}) says ${n}, holds ${inside.length}`);
      if (n > this.limits.cap && new Set(inside).size > 1) problems.push(`bucket ${i} [${lo}, ${hi}) holds ${n} counters of several totals (cap ${this.limits.cap})`);
    });
    return problems;
  }

  // --- the rollup's store ----------------------------------------------------------------------------

  private read(): ParentRead {
    const s = this.summary;
    const view: ParentView = {
      parentExists: true,
      coveredUntilUs: s?.readUs ?? null,
      lastCommitUs: s?.committedUs ?? null,
      recordedIntervalMs: s?.recordedIntervalMs ?? null,
      numShards: 1,
      // As board-store.ts: the sum's mark, as the load measured with the sum the summary holds.
      load: s === null ? null : { readUs: s.readUs, writes: this.mutant === "mark-without-writes" ? 0 : s.latestUs, hot: null },
      days: null,
      updatedUs: s?.updateUs ?? null,
      trailing: s?.trailing ?? null,
      total: s?.of ?? 0,
      createdUs: s?.createUs ?? null,
      board: null,
    };
    return { view, version: s === null ? null : String(s.updateUs), observedUs: this.clock.readUs() };
  }

  readParent(): Promise<ParentRead> {
    return Promise.resolve(this.read());
  }

  /** A summary never says kept: recount (as functions/src/leaderboard/board-store.ts), so the rollup never asks. */
  count(): Promise<CountRead> {
    return Promise.reject(new Error("a leaderboard's summary is not a recounted counter"));
  }

  deleteClaim(): Promise<boolean> {
    return Promise.resolve(false);
  }

  async sum(): Promise<SumRead> {
    const readUs = this.clock.readUs();
    const totals = [...this.entries.values()].map((e) => e.total);
    let queries = 0;
    const inRange = (t: number, lo: number | null, hi: number | null) => (lo === null || t >= lo) && (hi === null || t < hi);
    const buckets = await recountBuckets(
      this.summary?.buckets.bounds ?? [],
      {
        count: (lo, hi) => {
          queries++;
          return Promise.resolve(totals.filter((t) => inRange(t, lo, hi)).length);
        },
        extreme: (lo, hi, which) => {
          const inside = totals.filter((t) => inRange(t, lo, hi));
          return Promise.resolve(inside.length === 0 ? null : which === "min" ? Math.min(...inside) : Math.max(...inside));
        },
      },
      this.limits,
    );
    const latest = Math.max(0, ...[...this.entries.values()].map((e) => e.changedUs));
    this.recounts.set(readUs, { of: totals.length, buckets, latestUs: latest });
    const writes = this.mutant === "mark-without-writes" ? 0 : latest;
    return { sum: { overflow: false, total: totals.length, writes, readUs }, aggregations: queries, reads: 2 };
  }

  commit(_board: string, parent: ParentRead, sum: { total: number; readUs: number }, fields: CommitFields, _source?: CommitSource): Promise<CommitResult> {
    const s = this.summary;
    if ((s === null) !== (parent.version === null) || (s !== null && String(s.updateUs) !== parent.version)) return Promise.resolve({ kind: "changed" });
    const recount = this.recounts.get(sum.readUs);
    if (recount === undefined || recount.of !== sum.total) {
      this.violations.push(`a summary committed a sum read at ${sum.readUs} us that no recount read`);
      return Promise.resolve({ kind: "changed" });
    }
    const at = this.clock.commitUs();
    const trailing = fields.trailing === undefined ? (s?.trailing ?? null) : fields.trailing;
    this.summary = {
      of: recount.of,
      latestUs: recount.latestUs,
      buckets: recount.buckets,
      readUs: sum.readUs,
      committedUs: at,
      recordedIntervalMs: fields.intervalMs ?? s?.recordedIntervalMs ?? null,
      trailing: trailing === null ? null : { ...trailing },
      updateUs: at,
      createUs: s?.createUs ?? at,
    };
    this.commits.push({ atUs: at, readUs: sum.readUs });
    return Promise.resolve({ kind: "committed", version: String(at), commitUs: at });
  }

  moveWindows(): Promise<MoveResult> {
    return Promise.reject(new Error("a leaderboard has no windows"));
  }

  staleClaims(): Promise<StaleClaims> {
    return Promise.resolve({ claims: [], scanned: 0, reads: 0, next: null });
  }

  promisesDue(dueFromMs: number, dueBeforeMs: number): Promise<PromisePage> {
    const due = this.summary?.trailing?.dueMs;
    const found = due !== undefined && due >= dueFromMs && due < dueBeforeMs ? [{ counterId: this.name, parent: this.read() }] : [];
    return Promise.resolve({ counters: found, reads: 1, next: null });
  }

  readSweepMark(): Promise<number | null> {
    return Promise.resolve(this.sweepMarkMs);
  }

  writeSweepMark(dueBeforeMs: number): Promise<void> {
    this.clock.commitUs();
    this.sweepMarkMs = dueBeforeMs;
    return Promise.resolve();
  }

  midnightCounters(): Promise<MidnightPage> {
    return Promise.resolve({ counters: [], reads: 0, next: null });
  }
}
