// Reconcile: compares every counter's total with the sum of its shards and, with `fix`, writes the sum
// (a regular rollup commit, conditioned on the parent being unchanged), and gives shards from before
// shards counted their applied writes a `writes` of 0 (the upgrade growth needs: docs/growth.md). For unique counters it also
// compares the shard sum with the number of member documents and, with `fix`, repairs the shards from the
// members first. For windowed counters it compares the parent's windows with every day of the last 30
// summed at the same read time and, with `fix`, commits them with the total. Used by the reconcile command (commands/reconcile.ts).
import { AggregateField, FieldPath, FieldValue, type DocumentReference, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import { GRPC, grpcCode } from "../../../functions/src/model/errors";
import type { MirrorTarget } from "../../../functions/src/model/mirror-rules";
import { COUNTERS, counterRef, membersRef, shardRef, shardsRef } from "../../../functions/src/model/paths";
import { microsCeil } from "../../../functions/src/model/time";
import { isDeepStrictEqual } from "node:util";
import { allDaysAt, commitTotal, coveredUntilUs } from "../../../functions/src/rollup/firestore-store";
import { dayStartMs, isDay } from "../../../functions/src/model/days";
import { KEPT_DAYS, type Windows } from "../../../functions/src/model/windows";
import { sumShards } from "../../../functions/src/rollup/sum";
import { shardIds } from "../../../functions/src/model/shards";

/**
 * ok: total equals the shard sum (and, for a unique counter, the shard sum equals the members). lagging:
 * total differs, but a shard was written after the sum the total holds, so a rollup is still due (normal
 * for about one interval). drift: total differs although it claims to cover every shard write, or a
 * unique counter's shard sum differs from its members: a real inconsistency. overflow: the sum is beyond
 * 2^53 - 1. stuck: lagging, but the oldest write missing from the total is older than `stuckAfterMs`: no
 * rollup, retry or sweep is going to bring it in by itself.
 */
export type Status = "ok" | "lagging" | "stuck" | "drift" | "overflow" | "missing";

/** Rollup intervals a write may stay out of the total before it counts as stuck (plus the margin below). */
export const STUCK_INTERVALS = 10;
/**
 * The margin: the sweep runs every 5 minutes (functions/src/entry/rollupSweep.ts) and finishes a claim whose retries
 * ran out; one more minute for its run and for clock differences between this machine and Firestore.
 */
export const STUCK_MARGIN_MS = 6 * 60_000;

/** How old a missing write may be before it is stuck: STUCK_INTERVALS intervals plus STUCK_MARGIN_MS. */
export function stuckAfterMsFor(intervalMs: number): number {
  return STUCK_INTERVALS * intervalMs + STUCK_MARGIN_MS;
}

export interface CounterReport {
  counterId: string;
  status: Status;
  total: number | null;
  sum: number | null;
  /** total − sum, or null when either is unknown. */
  drift: number | null;
  /**
   * Windowed counters: the parent's `windows` next to the windows of its own `windows.day` recomputed from
   * every day of the shards at the sum's read time; null for a counter that is not windowed.
   */
  windows: { stored: unknown; summed: Windows } | null;
  numShards: number | null;
  /** Shard documents with ids outside 0 … numShards-1. */
  strayShards: string[];
  /** Shard ids 0 … numShards-1 without a document. */
  missingShards: string[];
  /**
   * Shards without a numeric `writes` (written before shards counted their applied writes): until each has
   * one, every rollup of the counter sums its counts in a second query, and the counter never grows
   * (docs/growth.md). With fix, each gets `writes: 0`. Ids in numeric order.
   */
  unmeasuredShards: string[];
  /** With fix: how many of those got `writes` (0 when none did, or a reshard removed one meanwhile: next run). */
  writesAdded: number;
  unique: boolean;
  /** Unique counters: the number of member documents, read at the same time as memberSum; else null. */
  members: number | null;
  /** Unique counters: the shard sum read with `members`; null for plain counters or a malformed sum. */
  memberSum: number | null;
  /** memberSum − members (0 when exact: every join and leave moves both in one commit); else null. */
  memberDrift: number | null;
  /**
   * Lagging or stuck: how long ago (ms) the oldest shard write missing from the total was committed, at
   * least. A shard's update time is its latest write, so an earlier missing write on the same shard is
   * older still: this is a lower bound, and "stuck" is never said of a counter that is not. Else null.
   */
  missingForMs: number | null;
  fixed: boolean;
  /**
   * Documents this check read, as billed: the parent, the shard listing, each aggregation (one per 1,000
   * entries it counts; counted as one here) and, with fix, what the repair read. Only documents under
   * counters/{id}: reconcile reads no collection group, so nothing of an app's own is ever read.
   */
  reads: number;
}

export interface ReconcileOptions {
  fix?: boolean;
  /** Only these counters; default: every document in `counters`, in id order. */
  counterIds?: string[];
  pageSize?: number;
  /** Counters checked at once (default 16); reports still come out in id order. */
  concurrency?: number;
  /** Resume: only counters whose id sorts after this one (ignored with counterIds). */
  startAfter?: string;
  /** A missing write older than this makes a lagging counter stuck (default: stuckAfterMsFor(1000)). */
  stuckAfterMs?: number;
  /** The clock the ages are measured with (default Date.now). */
  nowMs?: () => number;
  /** Where a counter's total is mirrored (MIRRORS): --fix writes the total there too, as the rollup does. */
  mirrors?: (counterId: string) => MirrorTarget[];
}

/** What a check needs besides the counter. */
export interface CheckOptions {
  stuckAfterMs: number;
  nowMs: () => number;
  mirrors?: (counterId: string) => MirrorTarget[];
}

const DEFAULT_CHECK: CheckOptions = { stuckAfterMs: stuckAfterMsFor(1000), nowMs: Date.now };

/** How many counters a run will visit: one count() aggregation (1 read per 1,000 counters). */
export async function countCounters(db: Firestore, options: Pick<ReconcileOptions, "counterIds" | "startAfter"> = {}): Promise<number> {
  if (options.counterIds !== undefined) return options.counterIds.length;
  let query = db.collection(COUNTERS).orderBy(FieldPath.documentId());
  if (options.startAfter !== undefined) query = query.startAfter(options.startAfter);
  return (await query.count().get()).data().count;
}

async function* counterSnapshots(db: Firestore, options: ReconcileOptions): AsyncGenerator<DocumentSnapshot> {
  if (options.counterIds !== undefined) {
    for (const id of options.counterIds) yield await counterRef(db, id).get();
    return;
  }
  let last: string | undefined = options.startAfter;
  for (;;) {
    let query = db.collection(COUNTERS).orderBy(FieldPath.documentId()).limit(options.pageSize ?? 100);
    if (last !== undefined) query = query.startAfter(last);
    const page = await query.get();
    for (const doc of page.docs) yield doc;
    if (page.size < (options.pageSize ?? 100)) return;
    last = page.docs[page.docs.length - 1]!.id;
  }
}

/** Checks one counter (and fixes it if asked). */
export async function reconcileCounter(
  db: Firestore,
  parent: DocumentSnapshot,
  fix: boolean,
  check: CheckOptions = DEFAULT_CHECK,
): Promise<CounterReport> {
  const counterId = parent.id;
  const report: CounterReport = {
    counterId,
    status: "missing",
    total: null,
    sum: null,
    drift: null,
    numShards: null,
    strayShards: [],
    missingShards: [],
    unmeasuredShards: [],
    writesAdded: 0,
    unique: false,
    members: null,
    memberSum: null,
    memberDrift: null,
    missingForMs: null,
    windows: null,
    fixed: false,
    reads: 1, // the parent (from its page, or read by id)
  };
  if (!parent.exists) return report;
  report.unique = parent.get("unique") === true;
  const total = parent.get("total") as unknown;
  const numShards = parent.get("numShards") as unknown;
  report.total = typeof total === "number" ? total : null;
  report.numShards = typeof numShards === "number" ? numShards : null;

  const shards = await shardsRef(db, counterId).select("writes").get();
  report.reads += Math.max(1, shards.size);
  const present = new Set(shards.docs.map((d) => d.id));
  const expected = new Set(report.numShards === null ? [] : shardIds(report.numShards));
  report.strayShards = [...present].filter((id) => !expected.has(id)).sort();
  report.missingShards = [...expected].filter((id) => !present.has(id));
  const unmeasured = shards.docs.filter((d) => expected.has(d.id) && typeof d.get("writes") !== "number");
  report.unmeasuredShards = unmeasured.map((d) => d.id).sort((a, b) => Number(a) - Number(b));
  if (fix && unmeasured.length > 0) report.writesAdded = await addWrites(db, unmeasured.map((d) => d.ref));
  const shardWritesUs = shards.docs.map((d) => microsCeil(d.updateTime));
  const lastShardWriteUs = Math.max(0, ...shardWritesUs);

  const cost = { reads: 0, aggregations: 0 };
  const sum = await sumShards(db, counterId, cost);
  report.reads += cost.reads + cost.aggregations;
  if (sum.overflow) {
    report.status = "overflow";
    return report;
  }
  report.sum = sum.total;
  report.drift = report.total === null ? null : report.total - sum.total;
  if (report.unique) {
    const read = await membersAndSum(db, counterId);
    report.reads += MEMBERS_AND_SUM_READS;
    report.members = read.members;
    report.memberSum = read.sum;
    report.memberDrift = read.sum === null ? null : read.sum - read.members;
  }
  const memberDrift = report.memberDrift !== null && report.memberDrift !== 0;
  let windowsDrift = false;
  if (parent.get("windowed") === true) {
    const stored = parent.get("windows") as unknown;
    const day = (stored as { day?: unknown } | undefined)?.day;
    const summed = await allDaysAt(db, counterId, sum.readTime, isDay(day) ? dayStartMs(day) : check.nowMs());
    report.reads += KEPT_DAYS;
    if (summed === "overflow") {
      report.status = "overflow";
      return report;
    }
    report.windows = { stored, summed: summed.windows };
    windowsDrift = !isDeepStrictEqual(stored, summed.windows);
  }
  if (report.drift === 0 && !memberDrift && !windowsDrift) {
    report.status = "ok";
    return report;
  }
  const coveredUs = coveredUntilUs(parent);
  report.status = memberDrift || (coveredUs !== null && coveredUs >= lastShardWriteUs) ? "drift" : "lagging";
  if (report.status === "lagging") {
    // Never rolled up: everything after the counter's creation (its shards were created with it) is missing.
    const fromUs = coveredUs ?? (parent.createTime === undefined ? 0 : microsCeil(parent.createTime));
    const missing = shardWritesUs.filter((us) => us > fromUs);
    if (missing.length > 0) {
      report.missingForMs = Math.max(0, check.nowMs() - Math.floor(Math.min(...missing) / 1000));
      if (report.missingForMs > check.stuckAfterMs) report.status = "stuck";
    }
  }

  if (fix) {
    const extra = { "rollup.reconciledAt": FieldValue.serverTimestamp() };
    const mirrors = check.mirrors?.(counterId) ?? [];
    // "changed" (a rollup committed) or "gone" (deleted) while we looked: not fixed; check again next run.
    if (memberDrift) {
      // Shards first, then the total from a sum read after the repair, on the parent as it is now.
      const repair = await repairFromMembers(db, counterId);
      report.reads += repair.reads;
      if (!repair.done) return report;
      const fresh = await counterRef(db, counterId).get();
      const again = { reads: 0, aggregations: 0 };
      const repaired = await sumShards(db, counterId, again);
      report.reads += 1 + again.reads + again.aggregations;
      if (!fresh.exists || repaired.overflow) return report;
      const commit = await commitTotal(fresh, repaired, extra, mirrors, check.nowMs());
      report.reads += commit.reads + commit.aggregations;
      report.fixed = commit.kind === "committed";
    } else {
      const commit = await commitTotal(parent, sum, extra, mirrors, check.nowMs());
      report.reads += commit.reads + commit.aggregations;
      report.fixed = commit.kind === "committed";
    }
  }
  return report;
}

/**
 * Gives shards written before shards counted their applied writes a `writes` of 0, in one batch:
 * `increment(0)` makes a missing field 0 and leaves a number as it is, so an increment that lands
 * meanwhile (adding 1 to `writes` itself) is never overwritten. `update()` never creates a shard: a shard a
 * reshard removed meanwhile fails the batch, and the next run tries again. Returns how many got it.
 */
async function addWrites(db: Firestore, shards: DocumentReference[]): Promise<number> {
  const batch = db.batch();
  for (const ref of shards) batch.update(ref, { writes: FieldValue.increment(0) });
  try {
    await batch.commit();
    return shards.length;
  } catch (error) {
    if (grpcCode(error) === GRPC.NOT_FOUND) return 0;
    throw error;
  }
}

interface MembersAndSum {
  /** Σ count over the shards; null if it is not a safe integer (malformed or beyond 2^53). */
  sum: number | null;
  members: number;
  /** Shard "0" as of the same read: where a repair goes, conditioned on it being unchanged. */
  shard0: DocumentSnapshot;
}

/**
 * The shard sum, the number of member documents and shard "0", read at one time: one read-only
 * transaction is one consistent snapshot and takes no locks, so setMember calls keep going meanwhile.
 * Aggregations: one read per 1,000 shards and one per 1,000 members.
 */
async function membersAndSum(db: Firestore, counterId: string): Promise<MembersAndSum> {
  return db.runTransaction(
    async (tx) => {
      const sum = (await tx.get(shardsRef(db, counterId).aggregate({ total: AggregateField.sum("count") }))).data().total;
      const members = (await tx.get(membersRef(db, counterId).count())).data().count;
      const shard0 = await tx.get(shardRef(db, counterId, 0));
      return { sum: typeof sum === "number" && Number.isSafeInteger(sum) ? sum : null, members, shard0 };
    },
    { readOnly: true },
  );
}

/** What membersAndSum reads: two aggregations (up to 1,000 shards and members each) and shard "0". */
const MEMBERS_AND_SUM_READS = 3;

/** Attempts of the repair when setMember calls keep writing shard "0" between the read and the repair. */
const REPAIR_ATTEMPTS = 10;

/**
 * Makes a unique counter's shard sum equal its number of members: adds (members − sum), both read at the
 * same time T, to shard "0", on condition that shard "0" is unchanged since T. Why that is exact while
 * setMember calls run: every join or leave committed after T moves the sum and the members together (one
 * batch), so members − sum is the same at the repair's commit as at T. The one write that could change
 * it without moving the members, a second repair (or a stale-cache increment on shard "0"), changes shard
 * "0", so the precondition fails and the repair reads again. Not done if the counter or its shard
 * "0" is gone, the sum is malformed, or it kept losing the race.
 */
async function repairFromMembers(db: Firestore, counterId: string): Promise<{ done: boolean; reads: number }> {
  let reads = 0;
  for (let attempt = 0; attempt < REPAIR_ATTEMPTS; attempt++) {
    const read = await membersAndSum(db, counterId);
    reads += MEMBERS_AND_SUM_READS;
    if (read.sum === null || !read.shard0.exists) return { done: false, reads };
    const correction = read.members - read.sum;
    if (correction === 0) return { done: true, reads };
    try {
      await read.shard0.ref.update({ count: FieldValue.increment(correction) }, { lastUpdateTime: read.shard0.updateTime! });
      return { done: true, reads };
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.NOT_FOUND) return { done: false, reads };
      if (code !== GRPC.FAILED_PRECONDITION) throw error;
    }
  }
  return { done: false, reads };
}

/**
 * Reconciles the selected counters, up to `concurrency` at once, yielding a report for each in id order:
 * once a report is yielded, every counter before it is done, so its id is a safe `startAfter` to resume.
 */
export async function* reconcile(db: Firestore, options: ReconcileOptions = {}): AsyncGenerator<CounterReport> {
  const concurrency = Math.max(1, options.concurrency ?? 16);
  const inFlight: Promise<CounterReport>[] = [];
  const source = counterSnapshots(db, options);
  let exhausted = false;
  try {
    for (;;) {
      while (!exhausted && inFlight.length < concurrency) {
        const next = await source.next();
        if (next.done === true) exhausted = true;
        else {
          const work = reconcileCounter(db, next.value, options.fix ?? false, {
            stuckAfterMs: options.stuckAfterMs ?? DEFAULT_CHECK.stuckAfterMs,
            nowMs: options.nowMs ?? Date.now,
            ...(options.mirrors === undefined ? {} : { mirrors: options.mirrors }),
          });
          work.catch(() => undefined); // awaited in order below; this only avoids an unhandled rejection meanwhile
          inFlight.push(work);
        }
      }
      const head = inFlight.shift();
      if (head === undefined) return;
      yield await head;
    }
  } finally {
    await Promise.allSettled(inFlight);
  }
}
