// Reconcile, one counter: the invariant check that ships beside the rollup. It compares the counter's
// total with the sum of its shards (a unique counter's shard sum with its members too, a windowed
// counter's windows with every kept day summed at the same read time) and says how it stands. With `fix` it
// repairs what is wrong through the rollup's own commit (rollup/commit.ts, sumAndCommit: a sum, committed
// on condition that the parent is unchanged, mirrors in the same write), with every kept day summed again,
// so the windows are repaired with the total; and it gives shards from before shards counted their applied
// writes a `writes` of 0 (the upgrade growth needs: docs/growth.md). Each MIRRORS target is compared with
// the parent too (mirrors.ts: a field someone else wrote is drift, and a fix's commit writes it again).
// Reads only documents under counters/{id} and the targets MIRRORS names: nothing else of an app's own.
import { FieldValue, type DocumentReference, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import { isDeepStrictEqual } from "node:util";
import { GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { shardsRef } from "../model/paths";
import { shardIds } from "../model/shards";
import { microsCeil } from "../model/time";
import { dayPlan, dayStartMs, everyDayOpen, isDay, type Windows } from "../model/windows";
import { sumAndCommit } from "../rollup/commit";
import { parentReadOf } from "../rollup/firestore-parent";
import { firestoreRollupStore } from "../rollup/firestore-store";
import { noOps } from "../rollup/ops";
import type { ParentRead, RollupStore, SumRead } from "../rollup/store";
import type { Run } from "../rollup/types";
import { MEMBERS_AND_SUM_READS, membersAndSum, repairFromMembers } from "./members";
import type { DocumentsCheck } from "../documents/reconcile";
import { staleMirrors, type StaleMirror } from "./mirrors";

/**
 * ok: total equals the shard sum (and, for a unique counter, the shard sum equals the members). lagging:
 * total differs, but a shard was written after the sum the total holds, so a rollup is still due (normal
 * for about one interval). drift: total differs although it claims to cover every shard write, or a
 * unique counter's shard sum differs from its members, or a MIRRORS target holds another value than the
 * parent: a real inconsistency. overflow: the sum is beyond
 * 2^53 - 1. stuck: lagging, but the oldest write missing from the total is older than `stuckAfterMs`: no
 * rollup, retry or sweep is going to bring it in by itself. missing: no counter has that id.
 */
export type ReconcileStatus = "ok" | "lagging" | "stuck" | "drift" | "overflow" | "missing";

export interface CounterReport {
  counterId: string;
  status: ReconcileStatus;
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
  /** MIRRORS targets whose field holds another value than the parent (mirrors.ts); a fix's commit writes them again. */
  staleMirrors: StaleMirror[];
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
   * A document counter (DOCUMENT_COUNTERS): its shards against its documents at one read time, and what a
   * fix's backfill did (documents.ts); absent for other counters.
   */
  documents?: DocumentsCheck;
  /**
   * Documents this check read, as billed: the parent, the shard listing, each aggregation (one per 1,000
   * entries it counts; counted as one here) and, with fix, what the repair read.
   */
  reads: number;
}

/** What a check needs besides the counter. */
export interface CheckOptions {
  /** A missing write older than this makes a lagging counter stuck. */
  stuckAfterMs: number;
  /** The clock the ages are measured with, and whose day a windowed counter's repaired windows are for. */
  nowMs: () => number;
  /** Where a counter's total is mirrored (MIRRORS): a fix writes the total there too, as the rollup does. */
  mirrors?: (counterId: string) => MirrorTarget[];
  /** The leaderboard a counter is on (LEADERBOARDS): a fix writes its entry too, as the rollup's commit does. */
  boards?: (counterId: string) => string | undefined;
}

/** Checks one counter, given its parent as read (from a page, or by id), and fixes it if asked. */
export async function reconcileCounter(db: Firestore, parent: DocumentSnapshot, fix: boolean, check: CheckOptions): Promise<CounterReport> {
  const counterId = parent.id;
  const report = emptyReport(counterId);
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

  // The total and, for a windowed counter, every kept day up to the day its stored windows are for, at one
  // read time: the rollup's own sum.
  const store = firestoreRollupStore(db, { mirrors: check.mirrors ?? (() => []), ...(check.boards === undefined ? {} : { boards: check.boards }) });
  const windowed = parent.get("windowed") === true;
  const stored = parent.get("windows") as unknown;
  const storedDay = (stored as { day?: unknown } | undefined)?.day;
  // Every kept day summed, as a repair sums them (the same day plan as a rollup's commit, every day open).
  const days = windowed ? dayPlan(everyDayOpen(null), isDay(storedDay) ? dayStartMs(storedDay) : check.nowMs()) : undefined;
  const read = await store.sum(counterId, null, days?.open);
  report.reads += read.reads + read.aggregations;
  if (read.sum.overflow) {
    report.status = "overflow";
    return report;
  }
  report.sum = read.sum.total;
  report.drift = report.total === null ? null : report.total - read.sum.total;
  if (report.unique) {
    const members = await membersAndSum(db, counterId);
    report.reads += MEMBERS_AND_SUM_READS;
    report.members = members.members;
    report.memberSum = members.sum;
    report.memberDrift = members.sum === null ? null : members.sum - members.members;
  }
  const memberDrift = report.memberDrift !== null && report.memberDrift !== 0;
  let windowsDrift = false;
  if (days !== undefined) {
    const summed = days.after(read.sum.days ?? {}).windows;
    report.windows = { stored, summed };
    windowsDrift = !isDeepStrictEqual(stored, summed);
  }
  const mirrors = await staleMirrors(db, counterId, check.mirrors?.(counterId) ?? []);
  report.reads += mirrors.reads;
  report.staleMirrors = mirrors.stale;
  const mirrorDrift = mirrors.stale.length > 0;
  if (report.drift === 0 && !memberDrift && !windowsDrift && !mirrorDrift) {
    report.status = "ok";
    return report;
  }
  const parentRead = parentReadOf(parent);
  const coveredUs = parentRead.view.coveredUntilUs;
  report.status = memberDrift || mirrorDrift || (coveredUs !== null && coveredUs >= lastShardWriteUs) ? "drift" : "lagging";
  if (report.status === "lagging") {
    // Never rolled up: everything after the counter's creation (its shards were created with it) is missing.
    const fromUs = coveredUs ?? (parent.createTime === undefined ? 0 : microsCeil(parent.createTime));
    const missing = shardWritesUs.filter((us) => us > fromUs);
    if (missing.length > 0) {
      report.missingForMs = Math.max(0, check.nowMs() - Math.floor(Math.min(...missing) / 1000));
      if (report.missingForMs > check.stuckAfterMs) report.status = "stuck";
    }
  }
  if (!fix) return report;
  // "changed" (a rollup committed) or "gone" (deleted) while we looked: not fixed; check again next run.
  let onto = parentRead;
  // The check's sum is committed as it is, unless the repair needs another: after the members' repair, or
  // a windowed counter's, whose windows are repaired from every day up to today (the check summed the days
  // up to the day its stored windows are for).
  let sum: SumRead | undefined = windowed ? undefined : read;
  if (memberDrift) {
    // Shards first, then the total from a sum read after the repair, onto the parent as it is now.
    const repair = await repairFromMembers(db, counterId);
    report.reads += repair.reads;
    if (!repair.done) return report;
    onto = await store.readParent(counterId);
    report.reads += 1;
    sum = undefined;
  }
  const commit = await commitRepair(store, counterId, onto, sum, check.nowMs);
  report.reads += commit.reads;
  report.fixed = commit.fixed;
  return report;
}

/**
 * The repair: the rollup's commit of `sum` (or of a sum it reads now) onto `parent`, on condition that the
 * parent is unchanged, marked as a reconcile's; a windowed counter's every kept day is summed again, so its
 * windows are repaired too.
 */
async function commitRepair(store: RollupStore, counterId: string, parent: ParentRead, sum: SumRead | undefined, nowMs: () => number): Promise<{ fixed: boolean; reads: number }> {
  const view = parent.view;
  const days = view.days == null ? view.days : everyDayOpen(view.days.moveAtMs);
  // No claims, no memos, no growth: a reconcile holds no slot and measures no load.
  const run: Run = { deps: { store, intervalMs: 0, staleAfterMs: 0, nowMs, sleep: () => Promise.resolve() }, ops: noOps() };
  const step = await sumAndCommit(run, { counterId, parent: { ...parent, view: { ...view, days } }, targetUs: 0, leadWrittenAtUs: null, sinceUs: nowMs() * 1000, reconciled: sum === undefined ? {} : { sum } });
  return { fixed: step.kind === "committed", reads: run.ops.reads + run.ops.aggregations };
}

export function emptyReport(counterId: string): CounterReport {
  return {
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
    staleMirrors: [],
    unique: false,
    members: null,
    memberSum: null,
    memberDrift: null,
    missingForMs: null,
    windows: null,
    fixed: false,
    reads: 1, // the parent (from its page, or read by id)
  };
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
