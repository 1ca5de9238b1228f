// Pure decisions of the rollup: is a shard write already covered by the parent's total, and if not, who
// rolls it up and when. No Firebase import: times are plain numbers, so unit tests pin each case and the
// model check (functions/test/model.test.ts) drives these very functions under random schedules.
//
// Times: Firestore commit/read times in whole microseconds (model/time.ts: a write time rounded up, a read
// time down, so "covered" can only err towards one extra rollup). Due times are whole milliseconds.
//
// THE MOVING PARTS
// - Coverage: `rollup.readTime` (coveredUntil) is the read time of the sum the parent's total holds. A
//   write committed at W <= coveredUntil is in the total; its event returns after one parent read.
// - Leading edge: a write on an idle counter (no rollup commit, `rollup.committedAt`, during the S before
//   the write; S below) is rolled up at once: sum now, commit with a precondition on the parent's update
//   time, no lease. Judged from the parent alone, so an idle increment costs one read, one sum, one write.
// - Claims: on a busy counter, time is cut into slots (an interval long, offset per counter); a write's
//   slot is the first that ends after it, its end is the claim's due time, so due - write <= the claim's
//   interval. The first event of a slot claims it: it writes the lease {eventId: its write, dueAt} (compare-and-set
//   on the lease's version), waits until dueAt, sums at a read time >= dueAt and commits. The lease means
//   "a claim is pending": whoever finishes it (its claimer, a takeover, the sweep) deletes it, on
//   condition that it is still that claim, so a newer claim is never deleted.
// - Deferring: an event neither covered nor idle reads the lease and returns ("defers") iff a claim is
//   pending with dueAt >= its write: that claim's sum is read at or after dueAt, so after the write.
//   Owning ("the lease names my write") and staleness (now >= dueAt + staleAfter) are judged on the same
//   stored dueAt. Slots and offsets only choose the dueAt of a new claim, so a lease means the same thing
//   whatever interval or offset its reader runs with (a slot index read with another interval would put
//   a pending claim in the year 2254 and stall every busy counter; docs/rollup.md, "Interval changes are safe").
// - The recorded interval S: every commit records `rollup.intervalMs` = max(its own ROLLUP_INTERVAL_MS,
//   the recorded one), except a leading edge after the counter rested 2 x S, which records its own. New
//   claims use min(own, S) as their interval, idleness is judged with S, and a parent without a recorded
//   interval (a counter no rollup has committed yet) counts as S = 60 s, the param's cap, until a commit records one.
//
// INVARIANT (exactness). For every write W whose event has completed a delivery, at every moment:
//   W <= coveredUntil, or the lease holds a claim with dueAt >= W.
// - coveredUntil only grows: a commit's precondition means its sum was read after the version it replaces;
// - a claim is replaced only by one due later: a new claim is made only for a write after the pending
//   dueAt, and is due after that write;
// - a lease is deleted only once coveredUntil >= its dueAt, or when the counter is gone (or its sum
//   overflowed: the total is frozen then anyway);
// - a delivery completes only by skipping a covered write, deferring to dueAt >= W, or a commit whose sum
//   was read at or after W (a claim's sum at or after max(dueAt, W)).
// And every pending claim is finished: by its claimer (the platform retries a failed event, and the retry
// honours the claim, below), by an event that finds it stale, or by the sweep when retries run out
// (sweep.ts). So once events stop and claims are finished, every write is covered: total = Σ shards.
//
// A CLAIMER'S RETRY HONOURS ITS CLAIM (docs/rollup.md). A claimer C (write Wc, due Dc) can fail and be
// retried after something covered Wc but not Dc: a leading edge, a late commit of an earlier slot, a
// stale takeover, a reset, reconcile. Events deferred to Dc, so "my write is covered" must not end it.
// - A covered event reads the lease when coveredUntil < W + S, and finishes the claim if the lease names
//   its event with dueAt > coveredUntil. When coveredUntil >= W + S it skips without reading: Dc - Wc <= S
//   for every pending claim (below), so coveredUntil >= Dc and the claim is fulfilled. Cost: one lease
//   read, only for covered events whose covering sum was read less than S after their write.
// - A claimer's retry never finds its own write idle while the claim is unfulfilled: it claimed because a
//   commit K > Wc - S_c preceded its write, commits only move forward and S has not shrunk since (below),
//   so the idle test fails again and the lease is read.
// - The instance memo (types.ts, ClaimMemo) is safe for the same reason: an event deferred
//   there without a read relies on a claim whose claimer, if it fails, is retried and finishes it.
//
// WHY Dc - Wc <= S FOR EVERY PENDING UNFULFILLED CLAIM, across interval changes (S as read now): C's
// interval was min(own, S_c) <= S_c, S_c the value C read, so Dc <= Wc + S_c. The recorded value only
// grows (max), except at a rested leading edge L; take the first one after C read the parent. C was not
// idle: a commit K > Wc - S_c; L rested: L's previous commit K_L <= W_L - 2·S_L, with K <= K_L and
// S_c <= S_L (no lowering in between). So Dc <= Wc + S_c < K + 2·S_c <= W_L <= L's read time: L's sum
// fulfils C before anyone reads the lowered value. Without a recorded value S is 60 s, above every claim.
// One gap is left, on purpose: the first commit on a parent without a recorded value records its own
// interval. A deploy that upgrades from a version without `rollup.intervalMs` AND lowers the interval can
// so record less than a claim made by the previous version, still pending; if that claimer then fails
// and its retry comes within its slot, the sweep finishes the claim instead. (Change the interval in a
// deploy of its own: between two versions that record it, every change is covered by the argument.)
//
// AT MOST TWO PARENT WRITES PER INTERVAL (unchanged interval I = S), counted on the read times commits
// record (commit times trail them by the time a commit takes):
// - a leading edge L commits onto the parent it read (precondition), whose last commit is at most W_L - I:
//   every earlier commit's sum was read at or before W_L - I <= R_L - I;
// - every other commit is a claim's, made only for a due time later than the read time already on the
//   parent: D_(k+1) > R_k and R_(k+1) >= D_(k+1); due times lie on the slot grid, so
//   R_(k+2) >= D_(k+2) >= D_(k+1) + I > R_k + I.
// So no window of one interval holds three. Under sustained load every write finds a commit less than an
// interval before it, the leading edge never fires, and the parent is written once per slot.

import { MAX_INTERVAL_MS } from "../model/param-rules";
import type { DaysRead } from "../model/windows";
import type { Load } from "./growth";

/** A claim takes this long past its due time before anyone else assumes its claimer died. */
export function staleAfterMsFor(intervalMs: number): number {
  return Math.max(10_000, 5 * intervalMs);
}

/** What the trigger knows about one shard write. */
export interface WriteFacts {
  counterId: string;
  /** Whom a claim for this write belongs to (claim.ts, claimKeyOf): the same on every delivery of the write. */
  claimKey: string;
  /** Commit time of the write, microseconds, rounded up. */
  writtenAtUs: number;
  /** Whether the write changed the shard's count (a no-op write cannot change the sum). */
  countChanged: boolean;
}

/** What the parent document says. */
export interface ParentView {
  parentExists: boolean;
  /** The read time of the sum the parent's total holds, microseconds (rounded down); null if none yet. */
  coveredUntilUs: number | null;
  /** When the rollup last wrote the parent (`rollup.committedAt`), microseconds; null if never. */
  lastCommitUs: number | null;
  /** `rollup.intervalMs`, the interval the commits recorded; null if none (or not a valid interval). */
  recordedIntervalMs: number | null;
  /** `numShards`; null if absent or not a positive integer (the rollup then neither measures nor grows). */
  numShards: number | null;
  /** `rollup.load`, the load the last commit measured (growth.ts); null if none. */
  load: Load | null;
  /** A windowed counter's days as kept on the parent (model/windows.ts); null or absent when not windowed. */
  days?: DaysRead | null;
  /**
   * When the parent was last written (its update time), microseconds, rounded down; null if it does not exist.
   * Absent where a view is built without it (then no snapshot sum: plan.ts, snapshotSumAllowed).
   */
  updatedUs?: number | null;
}

/** A pending claim, as the lease stores it. */
export interface Claim {
  /** The claimer's write (claim.ts, claimKeyOf), stored under the lease's `eventId`. */
  eventId: string;
  /** When the claimer sums (at or after), milliseconds since the epoch. */
  dueMs: number;
}

/** The rollup's settings and the instance's clock. */
export interface Timing {
  /** This instance's ROLLUP_INTERVAL_MS. */
  intervalMs: number;
  nowMs: number;
  /** A claim whose due time passed this long ago without a covering rollup is taken over. */
  staleAfterMs: number;
}

export type Decision =
  | { kind: "skip"; reason: "unchanged" | "no-parent" | "covered" }
  /** Covered, and the lease names this event with a due time already covered: delete it, it is done. */
  | { kind: "release" }
  | { kind: "defer"; toDueMs: number }
  | { kind: "claim"; dueMs: number; intervalMs: number }
  | { kind: "rollup"; dueMs: number; reason: "own-claim" | "stale-claim" }
  | { kind: "lead" };

/** The slot a write at `writtenAtUs` belongs to: the one whose due time is the first after the write. */
export function slotOf(writtenAtUs: number, intervalMs: number, offsetMs: number): number {
  // Integer arithmetic in microseconds; the due time is strictly later than the write.
  const intervalUs = intervalMs * 1000;
  return Math.floor((writtenAtUs - offsetMs * 1000) / intervalUs) + 1;
}

/** When slot `slot` is due, in milliseconds since the epoch. */
export function dueMsOf(slot: number, intervalMs: number, offsetMs: number): number {
  return slot * intervalMs + offsetMs;
}

/** A stable per-counter offset in [0, intervalMs) (FNV-1a of the id), spreading rollups over the slot. */
export function offsetMsOf(counterId: string, intervalMs: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < counterId.length; i++) {
    hash ^= counterId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % intervalMs;
}

/** The due time of a new claim for a write: the end of its slot, with slots of `intervalMs`. */
export function dueMsFor(counterId: string, writtenAtUs: number, intervalMs: number): number {
  const offsetMs = offsetMsOf(counterId, intervalMs);
  return dueMsOf(slotOf(writtenAtUs, intervalMs, offsetMs), intervalMs, offsetMs);
}

/** True when the parent's total already includes a write committed at `writtenAtUs`. */
export function isCovered(coveredUntilUs: number | null, writtenAtUs: number): boolean {
  return coveredUntilUs !== null && coveredUntilUs >= writtenAtUs;
}

/**
 * True when the rollup has not written the parent during the `intervalMs` before the write (or never):
 * the counter is idle, and summing at once cannot add a second commit to a busy interval. Both times
 * come from Firestore's clock (a commit time and a server timestamp), never from an instance's.
 */
export function isIdle(lastCommitUs: number | null, writtenAtUs: number, intervalMs: number): boolean {
  return lastCommitUs === null || lastCommitUs <= writtenAtUs - intervalMs * 1000;
}

/** S: the recorded interval, or the cap when none is recorded. Bounds due - write of any pending claim. */
export function claimSpanMs(view: ParentView): number {
  return view.recordedIntervalMs ?? MAX_INTERVAL_MS;
}

/** The interval a new claim uses: never more than the recorded one, so S keeps bounding every claim. */
export function claimIntervalMs(ownIntervalMs: number, view: ParentView): number {
  return Math.min(ownIntervalMs, view.recordedIntervalMs ?? ownIntervalMs);
}

/**
 * The interval a commit records: at least what is recorded (a claim made under it may be pending),
 * except on a leading edge after a rest of two recorded intervals, when no claim can be pending that its
 * sum does not fulfil (see the header), so its own interval may replace a larger one.
 */
export function intervalToRecord(ownIntervalMs: number, view: ParentView, leadWrittenAtUs: number | null): number {
  const recorded = view.recordedIntervalMs;
  if (recorded === null) return ownIntervalMs;
  const rested = leadWrittenAtUs !== null && isIdle(view.lastCommitUs, leadWrittenAtUs, 2 * recorded);
  return rested ? ownIntervalMs : Math.max(ownIntervalMs, recorded);
}

/**
 * What the parent alone decides: skip, or lead on an idle counter; null when the lease must be read —
 * for a busy write, and for a covered one whose covering sum might be earlier than a claim it could hold.
 */
export function decideFromParent(write: WriteFacts, view: ParentView): Decision | null {
  if (!write.countChanged) return { kind: "skip", reason: "unchanged" };
  if (!view.parentExists) return { kind: "skip", reason: "no-parent" };
  const spanMs = claimSpanMs(view);
  if (isCovered(view.coveredUntilUs, write.writtenAtUs)) {
    return isCovered(view.coveredUntilUs, write.writtenAtUs + spanMs * 1000) ? { kind: "skip", reason: "covered" } : null;
  }
  if (isIdle(view.lastCommitUs, write.writtenAtUs, spanMs)) return { kind: "lead" };
  return null;
}

/**
 * A lease with a due time further ahead than any claim can be (a hand edit, a broken clock) would make
 * every event defer to it for ever: it is treated as unreadable, and claimed over.
 */
function isPlausibleClaim(claim: Claim, nowMs: number): boolean {
  return claim.dueMs <= nowMs + 2 * MAX_INTERVAL_MS;
}

/** Decides what one delivery of a shard write event must do, given the parent and the lease. */
export function decide(write: WriteFacts, view: ParentView, lease: Claim | null, timing: Timing): Decision {
  const fromParent = decideFromParent(write, view);
  if (fromParent !== null) return fromParent;

  const claim = lease !== null && isPlausibleClaim(lease, timing.nowMs) ? lease : null;
  const covered = isCovered(view.coveredUntilUs, write.writtenAtUs);
  if (claim !== null && claim.eventId === write.claimKey) {
    // A redelivery (or retry) of the write that claimed (its event again, or rollupTotal's event of a write
    // its writer claimed for and failed: claim.ts, claimKeyOf): it owes the sum at dueAt, whatever covered
    // its own write meanwhile, unless a sum read at or after dueAt is already on the parent.
    if (!isCovered(view.coveredUntilUs, claim.dueMs * 1000)) return { kind: "rollup", dueMs: claim.dueMs, reason: "own-claim" };
    return { kind: "release" };
  }
  if (covered) return { kind: "skip", reason: "covered" };
  if (claim !== null && claim.dueMs * 1000 >= write.writtenAtUs) {
    if (timing.nowMs >= claim.dueMs + timing.staleAfterMs) {
      // The claimer should have committed long ago and has not: its sum would have covered us, so
      // do its work (at its due time, so the coverage promised to everyone who deferred holds).
      return { kind: "rollup", dueMs: claim.dueMs, reason: "stale-claim" };
    }
    // A pending claim due at or after our write will sum the shards after it: nothing to do.
    return { kind: "defer", toDueMs: claim.dueMs };
  }
  // No claim pending for our write (none, or one due before it: ours, due later, takes over its duty).
  const intervalMs = claimIntervalMs(timing.intervalMs, view);
  return { kind: "claim", dueMs: dueMsFor(write.counterId, write.writtenAtUs, intervalMs), intervalMs };
}

/**
 * THE SINGLE-SHARD SNAPSHOT SUM. A leading edge on a counter of one shard may take the event's own `after`
 * document as the sum, read at the write's commit time W: no aggregation query. It is exact when, at W, that
 * shard was all the shards there were, and when what the parent says (its total's coverage, a reset's
 * `resetAt`) already held at W. The guard: the parent it commits onto (on condition that it is unchanged)
 * has numShards = 1 and was last written before W (strictly: a write in the same transaction as the parent's,
 * a reshard's fold or a reset's subtraction, is summed). That parent then was the parent from its update
 * time to the commit, W included, so numShards was 1 at W, and every change of numShards came before W: a
 * reshard down to one shard deletes the others in its own transaction, growth adds shards only with
 * numShards, and increments write with update(), so no removed shard comes back. A reset's write (which
 * subtracts what it read from the shards and sets `resetAt` on the parent in one transaction) came before W
 * too, so the shard at W holds exactly what counts after the reset.
 * Without the guard (the model check's mutant, functions/test/model.test.ts), two things go wrong:
 * - an event of a write made before a reshard down to one shard, delivered after it, commits the one shard
 *   it saw as the whole sum;
 * - an event of a write made between a reset's read and its write, delivered after the write, commits a
 *   count from before the reset's subtraction as the total after the reset. A marker that aggregation
 *   commits set and that changes of numShards clear (the design first considered) misses this one: the
 *   model check found it.
 * A write older than its parent's last write (an event delivered after a rollup commit, a reset or a
 * reshard) is summed by an aggregation, as before. Firestore's times are whole microseconds; W is used only
 * when it is exactly the document's update time (entry/rollupTotal.ts), and the parent's is rounded down.
 */
export function snapshotSumAllowed(view: ParentView, write: { shardId: string; writtenAtUs: number }): boolean {
  return (
    view.numShards === 1 &&
    write.shardId === "0" &&
    view.updatedUs != null &&
    view.updatedUs < write.writtenAtUs &&
    !isCovered(view.coveredUntilUs, write.writtenAtUs)
  );
}
