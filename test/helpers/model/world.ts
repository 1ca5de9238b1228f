// An in-memory Firestore for the model check: counters with their parent and shards (and the lease of the
// previous version, which schedules may start with), with the
// semantics the rollup relies on — every write commits atomically at a strictly increasing commit time
// (whole microseconds), preconditions on a document's update time, reads at a consistent read time that
// is at or after every commit they see, create() failing on an existing document. It implements the
// rollup's RollupStore directly (no latency, no faults: remote.ts adds those per invocation) and the
// writes the callables make (increment, reset, reshard), each returning the shard events it causes.
// Mirror targets (MIRRORS) are the app's documents: the schedule creates and deletes them at any time,
// also between the steps of a commit (`mirrorStep`), and a commit runs the functions' own mirrored
// commit (functions/src/rollup/mirrored.ts) over this store's atomic write and consistent read.
// A windowed counter (functions/src/model/windows.ts) also keeps each shard's `days`, the parent's `windows`,
// `rollup.days`, `rollup.windowsMoveAt` and `resetAt` as firestore-store.ts reads and writes them, and a
// ledger of every delta by day with its commit time: the truth the properties hold the windows to.
// On a leaderboard (`board`: board-world.ts), every write that sets a total also writes the counter's entry,
// at the same commit time, as the functions' writers do (functions/src/leaderboard/entry-writes.ts; the
// rollup's commit only where functions/src/model/board.ts's entryDue asks), and a delete removes it.
import { GRPC } from "../../../functions/src/model/errors";
import { PRUNED_DAYS, shardStateOf } from "../../../functions/src/model/shards";
import type { MirrorTarget } from "../../../functions/src/model/mirror-rules";
import type { Load } from "../../../functions/src/rollup/growth";
import type { ParentView } from "../../../functions/src/rollup/plan";
import { ownerKeyOf, type Kept, type Trailing } from "../../../functions/src/rollup/plan";
import { commitMirrored, type MirrorPort } from "../../../functions/src/rollup/mirrored";
import type { ClaimCursor, CommitFields, CommitResult, CountRead, LegacyClaim, MidnightPage, MoveResult, ParentRead, PromisePage, RecountQuery, RollupStore, StaleClaims, SumRead } from "../../../functions/src/rollup/store";
import type { ShardWrite } from "../../../functions/src/rollup/types";
import { addDays, CLOCK_AHEAD_MS, DAY_CLOSES_AFTER_MS, type DayCounts, dayOf, daysFrom, KEPT_DAYS, WINDOW_DAYS, type Windows, windowsMoveAtMs, windowsOf, type WindowsState } from "../../../functions/src/model/windows";
import { erasedDays, resetPlan, type ResetMarks, type ResetRead } from "../../../functions/src/model/reset-plan";
import { pick, type Rng, type Sim } from "./sim";
import { entryDue } from "../../../functions/src/model/board";

interface Parent {
  total: number;
  numShards: number;
  /** `resetAt`, the read time of the last reset; null before any. */
  resetUs: number | null;
  /** `rollup.reshards`: the reshards the counter took. */
  reshards: number;
  readUs: number | null;
  committedUs: number | null;
  recordedIntervalMs: number | null;
  load: Load | null;
  updateUs: number;
  /** When the parent was created (its createTime). */
  createUs: number;
  /** `rollup.trailing`, the pending promise (functions/src/rollup/plan.ts); null when none. */
  trailing: Trailing | null;
  /** A windowed counter's fields; null for a plain one. */
  windowed: WindowedFields | null;
  /** `board`: the leaderboard its entry is on (written with the entry); null when none. */
  board: string | null;
  /** A document counter's `kept` (functions/src/rollup/plan.ts, Kept); null: by its shards. */
  kept: Kept | null;
  /** `rollup.movingSince`: when it started moving to records; null otherwise. */
  movingSinceUs: number | null;
}

/** What a windowed parent holds besides the total: `windows`, `rollup.days`, `rollup.windowsMoveAt`, `resetAt`. */
interface WindowedFields {
  windows: Windows;
  days: DayCounts;
  moveAtMs: number | null;
  resetUs: number | null;
}

/** A lease the previous version wrote (functions/src/rollup/legacy-lease.ts). */
interface Lease {
  data: LegacyClaim;
  updateUs: number;
}

interface Shard {
  count: number;
  /** Applied writes (functions/src/rollup/growth.ts); null on a shard written before shards counted them (an upgrade). */
  writes: number | null;
  /** `days.{day}`: the net count of each day (a windowed counter's; always empty on a plain one). */
  days: DayCounts;
  updateUs: number;
  /** When the document was created (its createTime). */
  createUs: number;
}

/** A counter that grew: when, and from and to how many shards. */
export interface GrowthRecord {
  atUs: number;
  from: number;
  to: number;
}

/** A rollup commit, as the model's properties look at it. */
export interface CommitRecord {
  atUs: number;
  readUs: number;
  total: number;
  intervalMs: number;
  source: CommitSource;
  /** The creation time of the parent it wrote: which incarnation of the id. */
  incarnationUs: number;
}

/** Who committed: a rollup (an event's invocation or the sweep) or the midnight commit (functions/src/rollup/midnight.ts). */
export type CommitSource = "rollup" | "midnight" | "reconcile";

/** A delta applied to a windowed counter: its write's commit time and its day. */
interface DayDelta {
  atUs: number;
  day: string;
  delta: number;
}

/** A windowed counter as the properties look at it. */
export interface WindowedState {
  windows: Windows;
  days: DayCounts;
  moveAtMs: number | null;
  /** What the windows must be exact at: `rollup.readTime`, else the reset's or the creation's time. */
  sinceUs: number;
}

/** An app document a counter's total is mirrored to: its fields, and when it was last created. */
interface TargetDoc {
  fields: Record<string, number>;
  createdUs: number;
}

interface Counter {
  parent: Parent | null;
  /** When `total` was last written (create, reset, commit): every target that existed then holds it. */
  totalWrittenUs: number;
  shards: Map<string, Shard>;
  lease: Lease | null;
  commits: CommitRecord[];
  growths: GrowthRecord[];
  /** Every shard write that changed a count, with its event and the key its claim has: the properties check each is covered. */
  writes: { atUs: number; eventId: string; claimKey: string }[];
  /** A windowed counter's deltas by day, and the read times of its resets (each erases what came before). */
  ledger: DayDelta[];
  resetsUs: number[];
  /** Every change of a shard's count, with its commit time: the sum of the shards at any read time. */
  counts: { atUs: number; delta: number }[];
}

/** What a reset read (World.resetRead): its ResetRead, what it takes from each shard, and the resetting clock's day. */
export interface ResetSnapshot {
  read: ResetRead;
  shards: Map<string, { count: number; days: DayCounts }>;
  today: string | null;
}

let eventSeq = 0;

/** A Firestore error: what the real client throws, with its gRPC code. */
function grpcError(code: number, what: string): Error {
  return Object.assign(new Error(what), { code });
}

/**
 * A deliberate fault of the world's own writers (functions/test/model.test.ts runs each and expects the model
 * check to catch it): a reset or a reshard that drops the parent's promise instead of keeping it, and a
 * rollup commit that ignores its precondition on the parent's version.
 */
export type WorldMutant = "reset-drops-promise" | "reshard-drops-promise" | "no-precondition" | "commit-skips-entry" | "delete-keeps-entry";

/**
 * The leaderboard every counter of the world is on (board-world.ts): `write` puts the counter's entry at
 * `total` (null: removes it) at the commit time `atUs` of the write that carries it.
 */
export interface BoardSide {
  name: string;
  write(counterId: string, total: number | null, atUs: number): void;
}

export interface WorldOptions {
  /** Where every counter's total is mirrored (the same targets for each: a schedule has one counter). */
  mirrors?: MirrorTarget[];
  mutant?: WorldMutant;
  /** Picks which error a write reports when several of its conditions fail (Firestore's depends on the order). */
  rng?: Rng;
  /** The leaderboard every counter is on, if any. */
  board?: BoardSide;
}

export class World implements RollupStore {
  private lastCommitUs = 0;
  /** The latest read time a sum was given: a write after that read commits after it, as in Firestore. */
  private lastReadUs = 0;
  private readonly counters = new Map<string, Counter>();
  private readonly targets = new Map<string, TargetDoc>();
  private readonly mirrors: MirrorTarget[];
  private readonly rng: Rng;
  /** The writes whose invocations made a promise, by owner key (the properties excuse a dropped event only if none did). */
  readonly promisers = new Set<string>();
  /** How far the sweep checked the promises (functions/src/rollup/sweep.ts). */
  private sweepMarkMs: number | null = null;
  private readonly mutant: WorldMutant | undefined;
  private readonly board: BoardSide | undefined;
  /** Property violations seen as they happen (a commit that said "gone" of a live counter). */
  readonly violations: string[] = [];
  /** How the resets' writes went: "read" (nothing after R covered), "kept" (a rollup committed after R), "retry", "gone". */
  readonly resetOutcomes: Record<string, number> = {};
  /** Rollup commits of a single-shard snapshot sum (functions/src/rollup/plan.ts) and of an aggregation's sum. */
  snapshotCommits = 0;
  summedCommits = 0;
  /** The read times sums were given: a commit whose read time is not one of them committed a snapshot sum. */
  private readonly sumReadTimes = new Set<number>();
    /** Runs before each step of a mirrored commit (its write, its read): latency, and the app changing targets. */
  mirrorStep: () => Promise<void> = () => Promise.resolve();

  constructor(
    private readonly sim: Sim,
    options: WorldOptions = {},
  ) {
    this.mirrors = options.mirrors ?? [];
    this.rng = options.rng ?? Math.random;
    this.mutant = options.mutant;
    this.board = options.board;
  }

  /** The counter's entry at `total` (null: gone) in a write at `atUs` that sets its total; and `board` on its parent. */
  private writeEntry(counterId: string, c: Counter, total: number | null, atUs: number): void {
    if (this.board === undefined) return;
    this.board.write(counterId, total, atUs);
    if (c.parent !== null) c.parent.board = this.board.name;
  }

  /** The commit time of a new write: now, or just after the last commit if that is not earlier. */
  private commitTime(): number {
    this.lastCommitUs = Math.max(this.sim.now(), this.lastCommitUs + 1, this.lastReadUs + 1);
    return this.lastCommitUs;
  }

  /** A read time at or after every commit a read at this moment sees; later commits come after it. */
  private readTime(): number {
    this.lastReadUs = Math.max(this.sim.now(), this.lastCommitUs);
    return this.lastReadUs;
  }

  private counter(counterId: string): Counter {
    let c = this.counters.get(counterId);
    if (c === undefined) {
      c = { parent: null, totalWrittenUs: 0, shards: new Map(), lease: null, commits: [], growths: [], writes: [], ledger: [], resetsUs: [], counts: [] };
      this.counters.set(counterId, c);
    }
    return c;
  }

  // --- the callables' writes ------------------------------------------------------------------------

  /**
   * `legacy`: shards without `writes`, as a counter created before shards counted them. `windowedDay`: a
   * windowed counter's, the UTC day of the creating instance's clock (its windows start at 0 for it).
   */
  createCounter(counterId: string, numShards: number, legacy = false, windowedDay: string | null = null): void {
    const c = this.counter(counterId);
    const at = this.commitTime();
    const windowed = windowedDay === null ? null : { windows: windowsOf({}, windowedDay), days: {}, moveAtMs: null, resetUs: null };
    c.parent = World.newParent(numShards, at, windowed);
    c.shards.clear();
    for (let i = 0; i < numShards; i++) c.shards.set(String(i), { count: 0, writes: legacy ? null : 0, days: {}, updateUs: at, createUs: at });
    this.writeTotal(c, 0, at);
    this.writeEntry(counterId, c, 0, at);
  }

  /** A counter's parent as its creation leaves it (createCounter, or a document counter's first batch). */
  private static newParent(numShards: number, atUs: number, windowed: Parent["windowed"]): Parent {
    return { total: 0, numShards, resetUs: null, reshards: 0, readUs: null, committedUs: null, recordedIntervalMs: null, load: null, updateUs: atUs, createUs: atUs, trailing: null, windowed, board: null, kept: null, movingSinceUs: null };
  }

  /** The sum of the counter's shards' counts. */
  private static shardSum(c: Counter): number {
    let sum = 0;
    for (const s of c.shards.values()) sum += s.count;
    return sum;
  }

  /** `total` (and windows) on the parent's bookkeeping and on every existing target (the callables' transactions lock them). */
  private writeTotal(c: Counter, total: number, atUs: number, windows: Windows | null = null): void {
    c.totalWrittenUs = atUs;
    for (const target of this.mirrors) {
      const doc = this.targets.get(target.path);
      const value = World.mirrored(target, total, windows);
      if (doc !== undefined && value !== undefined) doc.fields[target.field] = value;
    }
  }

  /** What a target holds after a commit of `total` (and, on a windowed counter, `windows`): mirror-writes.ts. */
  private static mirrored(target: MirrorTarget, total: number, windows: Windows | null): number | undefined {
    if (target.value === "total") return total;
    return windows === null ? undefined : windows[target.value];
  }

  // --- a document counter's writes (documents-world.ts) -----------------------------------------------
  // The document counters' store writes its records and a shard in one batch: it takes the batch's commit
  // time here (so one clock orders both stores' writes) and writes the counter's side with it.

  /** The time of a commit of another store over the same Firestore (documents-world.ts). */
  nextCommitUs(): number {
    return this.commitTime();
  }

  /** A read time of another store over the same Firestore: at or after every commit so far. */
  nextReadUs(): number {
    return this.readTime();
  }

  /** numShards of the counter; null when it does not exist. */
  numShardsOf(counterId: string): number | null {
    return this.counters.get(counterId)?.parent?.numShards ?? null;
  }

  /** The sum of the counter's shards; null when it does not exist. */
  shardSumOf(counterId: string): number | null {
    const c = this.counters.get(counterId);
    return c?.parent == null ? null : World.shardSum(c);
  }

  /** A document counter kept by recount created at `atUs` (functions/src/documents/store.ts, createRecounted): total 0, its shards at 0, its entry at 0. */
  createRecountedAt(counterId: string, numShards: number, atUs: number): void {
    const c = this.counter(counterId);
    c.parent = { ...World.newParent(numShards, atUs, null), kept: "recount" };
    c.shards.clear();
    for (let i = 0; i < numShards; i++) c.shards.set(String(i), { count: 0, writes: 0, days: {}, updateUs: atUs, createUs: atUs });
    this.writeTotal(c, 0, atUs);
    this.writeEntry(counterId, c, 0, atUs);
  }

  /** The document trigger's batch creating the counter at `atUs` with `delta` on `shard` (a plain counter); that shard's write. */
  createCounterAt(counterId: string, numShards: number, shard: number, delta: number, atUs: number): ShardWrite {
    const c = this.counter(counterId);
    c.parent = { ...World.newParent(numShards, atUs, null), kept: "records" };
    c.shards.clear();
    for (let i = 0; i < numShards; i++) c.shards.set(String(i), { count: i === shard ? delta : 0, writes: i === shard ? 1 : 0, days: {}, updateUs: atUs, createUs: atUs });
    this.writeTotal(c, 0, atUs);
    this.writeEntry(counterId, c, 0, atUs);
    c.counts.push({ atUs, delta });
    // A write that moves no count (a record's alone) has nothing to be covered.
    const event = this.event(counterId, String(shard), atUs, undefined, World.doc(c.shards.get(String(shard))!));
    return delta !== 0 ? this.changed(c, event) : event;
  }

  /** The document trigger's batch adding `delta` to an existing shard at `atUs`; that shard's write (null: no such shard, the batch fails). */
  incrementAt(counterId: string, shard: number, delta: number, atUs: number): ShardWrite | null {
    const c = this.counter(counterId);
    const s = c.parent === null ? undefined : c.shards.get(String(shard));
    if (s === undefined) return null;
    const before = World.doc(s);
    s.count += delta;
    s.writes = (s.writes ?? 0) + 1;
    s.updateUs = atUs;
    c.counts.push({ atUs, delta });
    const event = this.event(counterId, String(shard), atUs, before, World.doc(s));
    return delta !== 0 ? this.changed(c, event) : event;
  }

  /**
   * deleteCounter's transaction at `atUs`: the parent, the shards and the lease go (the shards' events are left
   * out: nothing rolls up a gone counter). The writes of the deleted incarnation no longer count: a counter
   * created again with the id is held to its own.
   */
  deleteCounterAt(counterId: string, atUs: number): void {
    const c = this.counter(counterId);
    const sum = World.shardSum(c);
    if (sum !== 0) c.counts.push({ atUs, delta: -sum });
    c.parent = null;
    c.shards.clear();
    c.lease = null;
    c.writes = [];
    if (this.mutant !== "delete-keeps-entry") this.writeEntry(counterId, c, null, atUs);
  }

  /** deleteCounter, now. */
  deleteCounter(counterId: string): void {
    this.deleteCounterAt(counterId, this.commitTime());
  }

  /** Whether the counter exists (its parent does). */
  exists(counterId: string): boolean {
    return this.counters.get(counterId)?.parent != null;
  }

  /**
   * A lease the previous version wrote for a claim due at `dueMs` (functions/src/rollup/legacy-lease.ts): the
   * writes it lists deferred to it before this version was deployed.
   */
  plantLegacyLease(counterId: string, claim: LegacyClaim): void {
    const c = this.counter(counterId);
    c.lease = { data: { ...claim }, updateUs: this.commitTime() };
  }

  // --- the app's documents --------------------------------------------------------------------------

  /** The app creates a mirror target's document (without the mirrored field), or deletes it. */
  flipTarget(path: string): void {
    const at = this.commitTime();
    if (this.targets.has(path)) this.targets.delete(path);
    else this.targets.set(path, { fields: {}, createdUs: at });
  }

  targetPaths(): string[] {
    return [...new Set(this.mirrors.map((t) => t.path))];
  }

  /**
   * Adds `delta` to a shard (as incrementCounter's batch does) and returns its event. `knownShards`: the
   * numShards the caller's instance knows (its cache may be stale); a shard that does not exist fails the
   * write (update() on a missing document) and the caller picks again with the parent's numShards.
   * `day`: on a windowed counter, the UTC day of the writer's clock reading `clockMs` (shard-writes.ts:
   * the day's count moves with the count, and days 32 to 38 before it are dropped). The write must commit
   * within DAY_CLOSES_AFTER_MS of that reading (the schedule keeps to it; this records any slip).
   */
  increment(counterId: string, random: number, delta: number, knownShards?: number, day?: { day: string; clockMs: number }): ShardWrite {
    const c = this.counter(counterId);
    const numShards = c.parent!.numShards;
    let shardId = String(random % (knownShards ?? numShards));
    if (!c.shards.has(shardId)) shardId = String(random % numShards);
    const s = c.shards.get(shardId)!;
    const at = this.commitTime();
    const before = { count: s.count };
    s.count += delta;
    s.writes = (s.writes ?? 0) + 1;
    s.updateUs = at;
    if (day !== undefined) {
      s.days[day.day] = (s.days[day.day] ?? 0) + delta;
      for (let back = PRUNED_DAYS.from; back <= PRUNED_DAYS.to; back++) delete s.days[addDays(day.day, -back)];
      c.ledger.push({ atUs: at, day: day.day, delta });
      if (at - day.clockMs * 1000 > DAY_CLOSES_AFTER_MS * 1000) {
        this.violations.push(`model: a write committed ${at - day.clockMs * 1000} us after its clock reading (at most ${DAY_CLOSES_AFTER_MS} ms)`);
      }
    }
    c.counts.push({ atUs: at, delta });
    return this.changed(c, this.event(counterId, shardId, at, before, World.doc(s)));
  }

  /** A shard's document as an event's `after` holds it: `count`, `writes` (when counted) and `days`. */
  private static doc(s: Shard): Record<string, unknown> {
    return { count: s.count, ...(s.writes === null ? {} : { writes: s.writes }), days: { ...s.days } };
  }

  /**
   * resetCounter's read: a snapshot of the parent and the shards at a read time R (no lock), and what the
   * write will take away from each shard: its count and, on a windowed counter, the days around the
   * resetting clock's day (reset-plan.ts, erasedDays). The write comes later (resetWrite): increments,
   * rollup commits, growth, reshards and other resets land in between.
   */
  resetRead(counterId: string, clockMs?: number): ResetSnapshot {
    const c = this.counter(counterId);
    const p = c.parent!;
    const readUs = this.readTime();
    const today = p.windowed === null ? null : dayOf(clockMs ?? Math.floor(readUs / 1000));
    const range = today === null ? null : erasedDays(today);
    const shards = new Map<string, { count: number; days: DayCounts }>();
    let total = 0;
    let days: DayCounts | null = today === null ? null : {};
    for (const [id, s] of c.shards) {
      const erased: DayCounts = {};
      if (range !== null && days !== null) {
        for (const [day, n] of Object.entries(s.days)) {
          if (day < range.from || day > range.to || n === 0) continue;
          erased[day] = n;
          days[day] = (days[day] ?? 0) + n;
        }
      }
      shards.set(id, { count: s.count, days: erased });
      total += s.count;
    }
    if (days !== null) days = Object.fromEntries(Object.entries(days).filter(([, n]) => n !== 0));
    return { read: { readUs, marks: World.marks(p), total, days }, shards, today };
  }

  private static marks(p: Parent): ResetMarks {
    return { createdUs: p.createUs, resetUs: p.resetUs, reshards: p.reshards };
  }

  /**
   * resetCounter's write (reset.ts): one transaction that reads the parent as it is now and, as resetPlan
   * decides, subtracts from each shard what the snapshot held (a shard gone since fails it: "retry"), and
   * writes the parent's total, `resetAt` = R, `rollup.readTime` and days, and the mirror targets.
   */
  resetWrite(counterId: string, snap: ResetSnapshot): { kind: "committed"; events: ShardWrite[] } | { kind: "retry" | "gone" } {
    const c = this.counter(counterId);
    const p = c.parent;
    const plan = resetPlan(snap.read, {
      exists: p !== null,
      marks: p === null ? { createdUs: 0, resetUs: null, reshards: 0 } : World.marks(p),
      total: p?.total ?? 0,
      coveredUntilUs: p?.readUs ?? null,
      days: p?.windowed?.days ?? null,
    });
    const outcome = plan.kind === "commit" ? plan.covers : plan.kind;
    this.resetOutcomes[outcome] = (this.resetOutcomes[outcome] ?? 0) + 1;
    if (plan.kind === "gone" || plan.kind === "retry") return plan;
    if (plan.kind === "unreadable-days") {
      this.violations.push("a reset found rollup.days unreadable");
      return { kind: "retry" };
    }
    for (const [id, erased] of snap.shards) {
      const touches = erased.count !== 0 || Object.keys(erased.days).length > 0;
      if (touches && !c.shards.has(id)) return { kind: "retry" }; // update() on a shard a reshard removed
    }
    const at = this.commitTime();
    const events: ShardWrite[] = [];
    for (const [id, erased] of snap.shards) {
      if (erased.count === 0 && Object.keys(erased.days).length === 0) continue;
      const s = c.shards.get(id)!;
      for (const [day, n] of Object.entries(erased.days)) s.days[day] = (s.days[day] ?? 0) - n;
      const before = { count: s.count };
      s.count -= erased.count;
      s.updateUs = at;
      if (erased.count !== 0) c.counts.push({ atUs: at, delta: -erased.count });
      const event = this.event(counterId, id, at, before, World.doc(s));
      events.push(erased.count !== 0 ? this.changed(c, event) : event);
    }
    const parent = p!;
    const readUs = snap.read.readUs;
    parent.total = plan.total;
    if (plan.covers === "read") parent.readUs = readUs;
    parent.resetUs = readUs;
    parent.load = null;
    parent.updateUs = at;
    if (this.mutant === "reset-drops-promise") parent.trailing = null;
    let windows: Windows | null = null;
    if (parent.windowed !== null) {
      const days = plan.days ?? {};
      windows = windowsOf(days, snap.today!);
      c.resetsUs.push(readUs);
      this.checkDays(counterId, parent.readUs!, snap.today!, days);
      parent.windowed = { windows, days: { ...days }, moveAtMs: windowsMoveAtMs(days, snap.today!), resetUs: readUs };
    }
    this.writeTotal(c, plan.total, at, windows);
    this.writeEntry(counterId, c, plan.total, at);
    return { kind: "committed", events };
  }

  /** What reshardCounter's transaction does: new shards at 0, or removed shards folded into kept ones. */
  reshard(counterId: string, numShards: number): ShardWrite[] {
    const c = this.counter(counterId);
    const p = c.parent!;
    if (numShards === p.numShards) return [];
    const at = this.commitTime();
    const events: ShardWrite[] = [];
    if (numShards > p.numShards) {
      for (let i = p.numShards; i < numShards; i++) {
        c.shards.set(String(i), { count: 0, writes: 0, days: {}, updateUs: at, createUs: at });
        events.push(this.event(counterId, String(i), at, undefined, World.doc(c.shards.get(String(i))!)));
      }
    } else {
      let folded = 0;
      let foldedWrites = 0;
      for (let i = numShards; i < p.numShards; i++) {
        const s = c.shards.get(String(i))!;
        folded += s.count;
        foldedWrites += s.writes ?? 0;
        // A windowed counter's day counts move with the counts, to the first kept shard (reshard.ts).
        const kept = c.shards.get("0")!;
        for (const [day, count] of Object.entries(s.days)) if (count !== 0) kept.days[day] = (kept.days[day] ?? 0) + count;
        c.shards.delete(String(i));
        const event = this.event(counterId, String(i), at, { count: s.count }, undefined, s.createUs);
        events.push(s.count !== 0 ? this.changed(c, event) : event);
      }
      if (foldedWrites !== 0) {
        const s = c.shards.get("0")!;
        s.writes = (s.writes ?? 0) + foldedWrites;
      }
      if (folded !== 0) {
        const s = c.shards.get("0")!;
        const before = { count: s.count };
        s.count += folded;
        s.updateUs = at;
        events.push(this.changed(c, this.event(counterId, "0", at, before, World.doc(s))));
      }
    }
    p.numShards = numShards;
    p.reshards++;
    p.load = null;
    p.updateUs = at;
    if (this.mutant === "reshard-drops-promise") p.trailing = null;
    return events;
  }

  private changed(c: Counter, event: ShardWrite): ShardWrite {
    c.writes.push({ atUs: event.writtenAtUs, eventId: event.eventId, claimKey: ownerKeyOf(event) });
    return event;
  }

  private event(
    counterId: string,
    shardId: string,
    atUs: number,
    before: Record<string, unknown> | undefined,
    after: Record<string, unknown> | undefined,
    shardCreatedUs?: number,
  ): ShardWrite {
    // Commit times here are whole microseconds, as Firestore's: the write's time is exact.
    const created = shardCreatedUs ?? this.counter(counterId).shards.get(shardId)?.createUs;
    return {
      eventId: `evt-${++eventSeq}`,
      counterId,
      shardId,
      writtenAtUs: atUs,
      writtenAtExact: true,
      ...(created === undefined ? {} : { shardCreatedUs: created }),
      before: shardStateOf(before),
      after: shardStateOf(after),
    };
  }

  // --- what the properties look at ------------------------------------------------------------------

  state(counterId: string): {
    total: number;
    coveredUntilUs: number | null;
    shardSum: number;
    writes: { atUs: number; eventId: string; claimKey: string }[];
    commits: CommitRecord[];
    growths: GrowthRecord[];
    numShards: number;
    /** Shard ids that exist beyond 0..numShards-1, and ids in that range that are missing. */
    misplacedShards: string[];
    lease: Lease | null;
    /** Targets that existed when `total` was last written but do not hold it (or the window they mirror) now. */
    staleMirrors: string[];
    /** A windowed counter's windows and days as on the parent; null for a plain one. */
    windowed: WindowedState | null;
  } {
    const c = this.counter(counterId);
    const p = c.parent;
    const staleMirrors: string[] = [];
    for (const target of this.mirrors) {
      const doc = this.targets.get(target.path);
      if (doc === undefined || doc.createdUs > c.totalWrittenUs) continue; // created since: the next commit fills it
      const value = doc.fields[target.field];
      const expected = p === null ? undefined : World.mirrored(target, p.total, p.windowed?.windows ?? null);
      if (value !== expected) staleMirrors.push(`${target.path}:${target.field} = ${value} (${target.value} ${expected})`);
    }
    const shardSum = World.shardSum(c);
    return {
      total: c.parent?.total ?? NaN,
      coveredUntilUs: c.parent?.readUs ?? null,
      shardSum,
      writes: c.writes,
      commits: c.commits,
      growths: c.growths,
      numShards: c.parent?.numShards ?? 0,
      misplacedShards: this.misplacedShards(c),
      lease: c.lease,
      staleMirrors,
      windowed: p?.windowed == null ? null : { ...p.windowed, sinceUs: p.readUs ?? p.windowed.resetUs ?? p.createUs },
    };
  }

  /** The sum of the shards' counts at a read time: every count change committed at or before it. */
  private totalAt(c: Counter, atUs: number): number {
    let total = 0;
    for (const change of c.counts) if (change.atUs <= atUs) total += change.delta;
    return total;
  }

  /**
   * The truth a windowed counter's days are held to, under the coverage rule: the net count of each day of
   * the deltas whose writes committed at or before `atUs` and after the last reset read at or before it
   * (days at 0 left out).
   */
  trueDays(counterId: string, atUs: number): DayCounts {
    const c = this.counter(counterId);
    const resetUs = c.resetsUs.filter((r) => r <= atUs).reduce((a, b) => Math.max(a, b), -Infinity);
    const days: DayCounts = {};
    for (const e of c.ledger) if (e.atUs > resetUs && e.atUs <= atUs) days[e.day] = (days[e.day] ?? 0) + e.delta;
    for (const [day, count] of Object.entries(days)) if (count === 0) delete days[day];
    return days;
  }

  // --- RollupStore ----------------------------------------------------------------------------------

  readParent(counterId: string): Promise<ParentRead> {
    return Promise.resolve(this.parentRead(counterId));
  }

  parentRead(counterId: string): ParentRead {
    const p = this.counter(counterId).parent;
    const view: ParentView = {
      parentExists: p !== null,
      coveredUntilUs: p?.readUs ?? null,
      lastCommitUs: p?.committedUs ?? null,
      recordedIntervalMs: p?.recordedIntervalMs ?? null,
      numShards: p?.numShards ?? null,
      load: p?.load ?? null,
      // As firestore-store.ts's daysOf: `rollup.days`, exact at `rollup.readTime`, else at the reset or the creation.
      days: p?.windowed == null ? null : { days: { ...p.windowed.days }, sinceUs: p.readUs ?? p.windowed.resetUs ?? p.createUs, moveAtMs: p.windowed.moveAtMs },
      updatedUs: p?.updateUs ?? null,
      trailing: p?.trailing ?? null,
      total: p?.total ?? null,
      createdUs: p?.createUs ?? null,
      board: p?.board ?? null,
      kept: p?.kept ?? null,
      movingSinceUs: p?.movingSinceUs ?? null,
    };
    return { view, version: p === null ? null : String(p.updateUs), observedUs: this.readTime() };
  }

  deleteClaim(counterId: string, version: string): Promise<boolean> {
    const c = this.counter(counterId);
    if (c.lease === null || String(c.lease.updateUs) !== version) return Promise.resolve(false);
    this.commitTime();
    c.lease = null;
    return Promise.resolve(true);
  }

  /**
   * As sum.ts: the writes only when every one of `numShards` shards holds them (else the counts alone, in a
   * second query). `days`: each summed over the shards at the same read time (firestore-store.ts, one
   * aggregation query per day in a transaction pinned to it).
   */
  sum(counterId: string, numShards: number | null, open?: (readUs: number) => readonly string[]): Promise<SumRead> {
    const c = this.counter(counterId);
    let total = 0;
    let writes: number | null = 0;
    for (const s of c.shards.values()) {
      total += s.count;
      writes = writes === null || s.writes === null ? null : writes + s.writes;
    }
    if (numShards === null || numShards !== c.shards.size) writes = null;
    let aggregations = numShards !== null && writes === null ? 2 : 1;
    const readUs = this.readTime();
    this.sumReadTimes.add(readUs);
    const days = open?.(readUs);
    if (days === undefined) return Promise.resolve({ sum: { overflow: false, total, writes, readUs }, aggregations, reads: 0 });
    const counts: DayCounts = {};
    for (const day of days) {
      counts[day] = 0;
      for (const s of c.shards.values()) counts[day] += s.days[day] ?? 0;
    }
    aggregations += days.length;
    return Promise.resolve({ sum: { overflow: false, total, writes, readUs, days: counts }, aggregations, reads: 0 });
  }

  private misplacedShards(c: Counter): string[] {
    const n = c.parent?.numShards ?? 0;
    const wrong = [...c.shards.keys()].filter((id) => !(Number(id) < n && String(Number(id)) === id));
    for (let i = 0; i < n; i++) if (!c.shards.has(String(i))) wrong.push(`missing ${i}`);
    return wrong;
  }

  /** `source`: who commits (the properties count the rollup's parent writes per interval apart from the midnight commit's). */
  async commit(counterId: string, parent: ParentRead, sum: { total: number; readUs: number }, fields: CommitFields, source: CommitSource = "rollup"): Promise<CommitResult> {
    const c = this.counter(counterId);
    const port: MirrorPort<number> = {
      commit: async (present, absent) => {
        if (this.mirrors.length > 0) await this.mirrorStep();
        const p = c.parent;
        // Every condition of the write, as Firestore checks them; it reports one of the failed ones.
        const failed: Error[] = [];
        if (p === null) failed.push(grpcError(GRPC.NOT_FOUND, "no parent to update"));
        else if (String(p.updateUs) !== parent.version && this.mutant !== "no-precondition") failed.push(grpcError(GRPC.FAILED_PRECONDITION, "the parent changed"));
        for (const target of present) if (!this.targets.has(target.path)) failed.push(grpcError(GRPC.NOT_FOUND, `no ${target.path} to update`));
        for (const path of absent) {
          if (this.targets.has(path)) failed.push(grpcError(pick(this.rng, [GRPC.ALREADY_EXISTS, GRPC.FAILED_PRECONDITION]), `${path} exists`));
        }
        if (failed.length > 0) throw pick(this.rng, failed);
        const at = this.commitTime();
        // A count's commit is held to the documents (the truth the documents model keeps), a sum's to the shards.
        // A count and another counter's sum may share a read time (one simulated instant): then how the counter is
        // kept tells which it was (recounted while kept by recount or moving).
        const kept = p!.kept;
        const ambiguous = this.countReadTimes.has(sum.readUs) && this.sumReadTimes.has(sum.readUs);
        const counted = this.countReadTimes.has(sum.readUs) && fields.kept !== "records" && (!ambiguous || kept === "recount" || kept === "moving");
        const truth = counted ? (this.recountTruth?.(counterId, sum.readUs) ?? NaN) : this.totalAt(c, sum.readUs);
        if (sum.total !== truth) this.violations.push(`a commit of total ${sum.total} read at ${sum.readUs} us: the ${counted ? "documents counted" : "shards summed to"} ${truth} then`);
        if (counted) this.countedCommits++;
        if (fields.kept !== undefined) {
          p!.kept = fields.kept;
          if (fields.kept === "moving") p!.movingSinceUs = at;
        }
        if (this.sumReadTimes.has(sum.readUs)) this.summedCommits++;
        else this.snapshotCommits++;
        // The commit carries the entry where entryDue asks, on the parent as it is (the precondition pins it).
        if (entryDue(this.board?.name, p!.board, p!.total, sum.total) && this.mutant !== "commit-skips-entry") this.writeEntry(counterId, c, sum.total, at);
        p!.total = sum.total;
        p!.readUs = sum.readUs;
        p!.committedUs = at;
        // The invariant (functions/src/rollup/plan.ts, T): a promise leaves the parent only in a commit whose sum
        // was read at or after its due time.
        const open = p!.trailing;
        if (open !== null && fields.trailing !== undefined && sum.readUs < open.dueMs * 1000 && (fields.trailing === null || fields.trailing.dueMs !== open.dueMs || fields.trailing.owner !== open.owner)) {
          this.violations.push(`a commit read at ${sum.readUs} us replaced the promise due ${open.dueMs * 1000} us of ${open.owner} before fulfilling it`);
        }
        if (fields.trailing !== undefined) p!.trailing = fields.trailing === null ? null : { ...fields.trailing };
        if (fields.trailing != null) this.promisers.add(fields.trailing.owner);
        if (fields.intervalMs !== undefined) p!.recordedIntervalMs = fields.intervalMs;
        if (fields.load !== undefined) p!.load = fields.load;
        if (fields.grow !== undefined) {
          // Precondition: the parent is the version read, so its numShards is the one the growth read.
          if (fields.grow.from !== p!.numShards || fields.grow.to <= fields.grow.from) {
            this.violations.push(`a commit grew ${fields.grow.from} -> ${fields.grow.to} on a parent with ${p!.numShards} shards`);
          }
          for (let i = fields.grow.from; i < fields.grow.to; i++) {
            if (!c.shards.has(String(i))) c.shards.set(String(i), { count: 0, writes: 0, days: {}, updateUs: at, createUs: at });
          }
          p!.numShards = fields.grow.to;
          c.growths.push({ atUs: at, from: fields.grow.from, to: fields.grow.to });
        }
        if (fields.windows !== undefined) {
          if (p!.windowed === null) this.violations.push("a commit wrote windows onto a counter that is not windowed");
          else {
            this.checkDays(counterId, sum.readUs, fields.windows.windows.day, fields.windows.days);
            p!.windowed = { ...p!.windowed, windows: { ...fields.windows.windows }, days: { ...fields.windows.days }, moveAtMs: fields.windows.moveAtMs };
          }
        } else if (p!.windowed !== null) this.violations.push("a commit of a windowed counter left its windows as they were");
        p!.updateUs = at;
        c.totalWrittenUs = at;
        for (const target of present) {
          const value = World.mirrored(target, sum.total, p!.windowed?.windows ?? null);
          if (value !== undefined) this.targets.get(target.path)!.fields[target.field] = value;
        }
        c.commits.push({ atUs: at, readUs: sum.readUs, total: sum.total, intervalMs: p!.recordedIntervalMs ?? 0, source, incarnationUs: p!.createUs });
        return at;
      },
      read: async (paths) => {
        if (this.mirrors.length > 0) await this.mirrorStep();
        const p = c.parent;
        return {
          parent: p === null ? "gone" : String(p.updateUs) === parent.version ? "same" : "changed",
          exists: paths.map((path) => this.targets.has(path)),
        };
      },
    };
    const commit = await commitMirrored(port, this.mirrors, () => undefined);
    if (commit.kind === "gone" && c.parent !== null) this.violations.push(`a commit said "gone" of a counter whose parent exists`);
    if (commit.kind !== "committed") return { kind: commit.kind };
    return { kind: "committed", version: String(commit.result), commitUs: commit.result };
  }

  /**
   * The midnight commit's move (firestore-store.ts, moveWindows): the windows from the parent's own days,
   * conditioned on the parent's version, and, in the same atomic write (a transaction that locks the targets
   * it reads), each existing target's values where they differ. Checked like a commit: the days must be
   * exact at the read time the total holds, which the move leaves as it is.
   */
  moveWindows(counterId: string, parent: ParentRead, moved: WindowsState): Promise<MoveResult> {
    const c = this.counter(counterId);
    const p = c.parent;
    const none = { targetWrites: 0, reads: 1 + this.targetPaths().length };
    if (p === null) return Promise.resolve({ kind: "gone", ...none });
    if (String(p.updateUs) !== parent.version) return Promise.resolve({ kind: "changed", ...none });
    if (p.windowed === null) {
      this.violations.push("a move of windows on a counter that is not windowed");
      return Promise.resolve({ kind: "changed", ...none });
    }
    const at = this.commitTime();
    const sinceUs = p.readUs ?? p.windowed.resetUs ?? p.createUs;
    this.checkDays(counterId, sinceUs, moved.windows.day, moved.days);
    p.windowed = { ...p.windowed, windows: { ...moved.windows }, days: { ...moved.days }, moveAtMs: moved.moveAtMs };
    p.updateUs = at;
    let targetWrites = 0;
    for (const path of this.targetPaths()) {
      const doc = this.targets.get(path);
      if (doc === undefined) continue;
      let written = false;
      for (const target of this.mirrors.filter((t) => t.path === path)) {
        const value = World.mirrored(target, p.total, p.windowed.windows);
        if (value === undefined || doc.fields[target.field] === value) continue;
        doc.fields[target.field] = value;
        written = true;
      }
      if (written) targetWrites++;
    }
    c.totalWrittenUs = at;
    c.commits.push({ atUs: at, readUs: p.readUs ?? sinceUs, total: p.total, intervalMs: p.recordedIntervalMs ?? 0, source: "midnight", incarnationUs: p.createUs });
    return Promise.resolve({ kind: "committed", targetWrites, reads: none.reads });
  }

  /**
   * The invariant of functions/src/model/windows.ts, checked at every commit: `rollup.days` read at `readUs` for `day`
   * holds, for each day from the 30th before `day` to the newest day a write covered by `readUs` can have
   * chosen (and any later day it holds), exactly the true count at `readUs`, and no other day.
   */
  private checkDays(counterId: string, readUs: number, day: string, days: DayCounts): void {
    const truth = this.trueDays(counterId, readUs);
    // Every day a window of `day` (or a later day) spans is exact; the day before them, kept for a commit
    // on a clock a day behind (KEPT_DAYS), is exact when it is kept.
    const oldest = addDays(day, 1 - WINDOW_DAYS.last30Days);
    const kept = addDays(day, 1 - KEPT_DAYS);
    const reachable = dayOf(Math.floor(readUs / 1000) + CLOCK_AHEAD_MS);
    const newest = [day, reachable, ...Object.keys(days)].reduce((a, b) => (b > a ? b : a));
    const wrong: string[] = [];
    for (const d of daysFrom(oldest, newest)) if ((days[d] ?? 0) !== (truth[d] ?? 0)) wrong.push(`${d}: ${days[d] ?? 0} (true ${truth[d] ?? 0})`);
    for (const d of daysFrom(kept, addDays(oldest, -1))) if (d in days && days[d] !== (truth[d] ?? 0)) wrong.push(`${d}: ${days[d]} (true ${truth[d] ?? 0})`);
    for (const [d, count] of Object.entries(days)) if (d < kept || count === 0) wrong.push(`${d}: ${count} (not kept for ${day})`);
    if (wrong.length > 0) this.violations.push(`a commit for ${day} of a sum read at ${readUs} us wrote rollup.days ${wrong.join(", ")}`);
  }

  /** The midnight commit's query (firestore-store.ts, midnightCounters): windowed counters whose windows move by `atMs`, in (windowsMoveAt, id) order. */
  midnightCounters(atMs: number, limit: number, after?: object): Promise<MidnightPage> {
    const from = after as { moveAtMs: number; counterId: string } | undefined;
    const found = [...this.counters.entries()]
      .filter(([, c]) => c.parent?.windowed != null && c.parent.windowed.moveAtMs !== null && c.parent.windowed.moveAtMs <= atMs)
      .map(([counterId, c]) => ({ counterId, moveAtMs: c.parent!.windowed!.moveAtMs! }))
      .sort((a, b) => a.moveAtMs - b.moveAtMs || (a.counterId < b.counterId ? -1 : a.counterId > b.counterId ? 1 : 0))
      .filter((f) => from === undefined || f.moveAtMs > from.moveAtMs || (f.moveAtMs === from.moveAtMs && f.counterId > from.counterId))
      .slice(0, limit);
    const last = found[found.length - 1];
    return Promise.resolve({
      counters: found.map((f) => ({ counterId: f.counterId, parent: this.parentRead(f.counterId) })),
      reads: Math.max(1, found.length),
      next: found.length < limit || last === undefined ? null : { moveAtMs: last.moveAtMs, counterId: last.counterId },
    });
  }

  /**
   * A recounted counter's count (firestore-store.ts, count): the documents the query names, from the app's
   * documents the documents model keeps (documents-world.ts sets `countDocuments`), at a read time now.
   */
  count(query: RecountQuery, limit: number | null): Promise<CountRead> {
    if (this.countDocuments === undefined) return Promise.reject(new Error("this world holds no app documents to count"));
    const readUs = this.readTime();
    this.countReadTimes.add(readUs);
    const all = this.countDocuments(query, readUs);
    const count = limit === null ? all : Math.min(all, limit + 1);
    return Promise.resolve({ count, readUs, reads: Math.max(1, Math.ceil(count / 1000)) });
  }

  /** The app's documents a recount query names at a read time: set by the documents model (documents-world.ts). */
  countDocuments: ((query: RecountQuery, readUs: number) => number) | undefined = undefined;
  /** What a recounted counter must hold at a read time, from its documents as the records would count them (documents-world.ts). */
  recountTruth: ((counterId: string, readUs: number) => number) | undefined = undefined;
  /** Commits of a count. */
  countedCommits = 0;
  /** The read times counts were given: a commit of one is held to recountTruth. */
  private readonly countReadTimes = new Set<number>();

  /** The sweep's query of promises (firestore-store.ts, promisesDue): due in [from, before), in (dueAt, id) order. */
  promisesDue(dueFromMs: number, dueBeforeMs: number, limit: number, after?: object): Promise<PromisePage> {
    const from = after as { dueMs: number; counterId: string } | undefined;
    const found = [...this.counters.entries()]
      .filter(([, c]) => c.parent?.trailing != null && c.parent.trailing.dueMs >= dueFromMs && c.parent.trailing.dueMs < dueBeforeMs)
      .map(([counterId, c]) => ({ counterId, dueMs: c.parent!.trailing!.dueMs }))
      .sort((a, b) => a.dueMs - b.dueMs || (a.counterId < b.counterId ? -1 : a.counterId > b.counterId ? 1 : 0))
      .filter((f) => from === undefined || f.dueMs > from.dueMs || (f.dueMs === from.dueMs && f.counterId > from.counterId))
      .slice(0, limit);
    const last = found[found.length - 1];
    return Promise.resolve({
      counters: found.map((f) => ({ counterId: f.counterId, parent: this.parentRead(f.counterId) })),
      reads: Math.max(1, found.length),
      next: found.length < limit || last === undefined ? null : { dueMs: last.dueMs, counterId: last.counterId },
    });
  }

  readSweepMark(): Promise<number | null> {
    return Promise.resolve(this.sweepMarkMs);
  }

  writeSweepMark(dueBeforeMs: number): Promise<void> {
    this.commitTime();
    this.sweepMarkMs = dueBeforeMs;
    return Promise.resolve();
  }

  staleClaims(dueBeforeMs: number, limit: number, after?: ClaimCursor): Promise<StaleClaims> {
    // In (dueMs, counterId) order, after the cursor: Firestore's (dueAt, document name) order.
    const from = after as { dueMs: number; counterId: string } | undefined;
    const found = [...this.counters.entries()]
      .filter(([, c]) => c.lease !== null && c.lease.data.dueMs < dueBeforeMs)
      .map(([counterId, c]) => ({ counterId, claim: { eventId: c.lease!.data.eventId, dueMs: c.lease!.data.dueMs }, version: String(c.lease!.updateUs) }))
      .sort((a, b) => a.claim.dueMs - b.claim.dueMs || (a.counterId < b.counterId ? -1 : a.counterId > b.counterId ? 1 : 0))
      .filter((f) => from === undefined || f.claim.dueMs > from.dueMs || (f.claim.dueMs === from.dueMs && f.counterId > from.counterId))
      .slice(0, limit);
    const last = found[found.length - 1];
    const next = found.length < limit || last === undefined ? null : { dueMs: last.claim.dueMs, counterId: last.counterId };
    return Promise.resolve({ claims: found, scanned: found.length, reads: Math.max(1, found.length), next });
  }
}
