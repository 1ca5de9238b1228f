// Pure decisions of the rollup: is a shard write already covered by the parent's total, and if not,
// who rolls up and when. No Firebase import: times are plain numbers so unit tests can pin each case.
//
// Times: Firestore commit/read times in whole MICROseconds since the epoch (exact in a JS number until
// the year 2255). A write time is rounded UP and a read time DOWN, so "covered" can only err towards
// one extra rollup, never towards a missed write.
//
// Coalescing: time is cut into slots of `intervalMs`, shifted by a per-counter offset so counters do not
// all roll up on the same instant. A shard write at time U belongs to the slot that ends first after U;
// the slot's end is its due time. One invocation per slot claims it (a lease document), waits until the
// due time, sums the shards at a read time >= due, and commits the total once. Every other write of that
// slot is covered by that sum, so its invocation returns at once (it "defers").
//
// Leading edge: waiting for the slot to end only pays off when more writes are coming. A write on an
// idle counter (the rollup has not written the parent during the interval before the write) is rolled up
// at once instead: sum now, commit with a precondition on the parent's update time, no lease. Idleness is
// judged by `rollup.committedAt` (the rollup's last parent commit), not by `rollup.readTime`: a reset
// moves the read time without being a rollup write. It is judged from the parent alone, so an idle
// increment costs one document read, not two: the lease is read only when the parent cannot decide.
// - A claimer's retry never finds its own write idle (it was not idle when it claimed, and the last
//   commit only moves forward), so it always finishes the slot others deferred to.
// - An idle write may find a claim pending for its slot (a claim made just under one interval after the
//   last commit). Leading anyway costs at most one extra parent write in that interval, within the bound
//   below, and saves a lease read on every idle increment.
//
// Why the parent is still written at most twice within any one interval:
// - leading-edge commits: say one commits at t1 and another at t2, t1 < t2 < t1 + interval. The second
//   one's commit carries a precondition on the parent it read, so it read the parent after t1 and saw a
//   last commit at t1 or later. It decided "idle", so its write is at t1 + interval or later, after t2:
//   but a write is always before the rollup that sums it. So at most one per interval;
// - slot commits: one per slot at most (the lease names one claimer, its commit carries the parent
//   precondition and is skipped when another sum already covers the slot), and slots are due one
//   interval apart, so one due time falls in any interval.
// Under sustained load every write finds a commit within the interval before it, so the leading edge
// never fires and the rollup writes once per slot, as without it. (A commit delayed past its due time —
// a slow or retried invocation — can land closer to the next one; that holds with or without it.)

/** What the trigger knows about one shard write. */
export interface WriteFacts {
  /** Event id; the same on every delivery of one event. */
  eventId: string;
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
}

/** What the trigger reads before deciding: the parent's bookkeeping and the current lease. */
export interface RollupView extends ParentView {
  /** The slot most recently claimed for this counter, and by which event. */
  lease: { slot: number; eventId: string } | null;
}

export interface Timing {
  intervalMs: number;
  /** This counter's slot offset in [0, intervalMs). */
  offsetMs: number;
  nowMs: number;
  /** A claim whose due time passed this long ago without a covering rollup is taken over. */
  staleAfterMs: number;
}

export type Decision =
  | { kind: "skip"; reason: "unchanged" | "no-parent" | "covered" }
  | { kind: "defer"; toSlot: number }
  | { kind: "claim"; slot: number; dueMs: number }
  | { kind: "rollup"; slot: number; dueMs: number; reason: "own-claim" | "stale-claim" }
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

/** True when the parent's total already includes a write committed at `writtenAtUs`. */
export function isCovered(coveredUntilUs: number | null, writtenAtUs: number): boolean {
  return coveredUntilUs !== null && coveredUntilUs >= writtenAtUs;
}

/**
 * True when the rollup has not written the parent during the interval before the write (or never):
 * the counter is idle, and summing at once cannot add a second commit to a busy interval. Both times
 * come from Firestore's clock (a commit time and a server timestamp), never from an instance's.
 */
export function isIdle(lastCommitUs: number | null, writtenAtUs: number, intervalMs: number): boolean {
  return lastCommitUs === null || lastCommitUs <= writtenAtUs - intervalMs * 1000;
}

/**
 * What the parent alone decides: skip, or lead on an idle counter; null when the lease must be read.
 * The trigger reads the parent first and the lease only when this returns null.
 */
export function decideFromParent(write: WriteFacts, view: ParentView, intervalMs: number): Decision | null {
  if (!write.countChanged) return { kind: "skip", reason: "unchanged" };
  if (!view.parentExists) return { kind: "skip", reason: "no-parent" };
  if (isCovered(view.coveredUntilUs, write.writtenAtUs)) return { kind: "skip", reason: "covered" };
  if (isIdle(view.lastCommitUs, write.writtenAtUs, intervalMs)) return { kind: "lead" };
  return null;
}

/** Decides what one delivery of a shard write event must do. */
export function decide(write: WriteFacts, view: RollupView, timing: Timing): Decision {
  const fromParent = decideFromParent(write, view, timing.intervalMs);
  if (fromParent !== null) return fromParent;

  const { intervalMs, offsetMs, nowMs, staleAfterMs } = timing;
  const slot = slotOf(write.writtenAtUs, intervalMs, offsetMs);
  const lease = view.lease;
  if (lease !== null && lease.slot >= slot) {
    if (lease.slot === slot && lease.eventId === write.eventId) {
      // A redelivery (or retry) of the event that claimed this slot: it still owes the rollup.
      return { kind: "rollup", slot, dueMs: dueMsOf(slot, intervalMs, offsetMs), reason: "own-claim" };
    }
    const leaseDueMs = dueMsOf(lease.slot, intervalMs, offsetMs);
    if (nowMs >= leaseDueMs + staleAfterMs) {
      // The claimer should have committed long ago and has not: its sum would have covered us, so
      // do its work (at the claimed slot, so the coverage promised to everyone who deferred holds).
      return { kind: "rollup", slot: lease.slot, dueMs: leaseDueMs, reason: "stale-claim" };
    }
    // A claimed slot due at or after ours will sum the shards after our write: nothing to do.
    return { kind: "defer", toSlot: lease.slot };
  }
  return { kind: "claim", slot, dueMs: dueMsOf(slot, intervalMs, offsetMs) };
}

/** A Firestore-style time: whole seconds and nanoseconds (firebase-admin's Timestamp is one). */
export interface Time {
  seconds: number;
  nanoseconds: number;
}

/** Microseconds of a time, rounded down (for read times). */
export function microsFloor({ seconds, nanoseconds }: Time): number {
  return seconds * 1_000_000 + Math.floor(nanoseconds / 1000);
}

/** Microseconds of a time, rounded up (for write times). */
export function microsCeil({ seconds, nanoseconds }: Time): number {
  return seconds * 1_000_000 + Math.ceil(nanoseconds / 1000);
}

/** Microseconds of an RFC 3339 time such as "2026-11-22T10:00:00.123456789Z", rounded up; null if unparsable. */
export function parseRfc3339Micros(text: string): number | null {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (match === null) return null;
  const seconds = Date.parse(`${match[1]}${match[3]}`) / 1000;
  if (!Number.isFinite(seconds)) return null;
  const nanos = Number((match[2] ?? "").padEnd(9, "0"));
  return microsCeil({ seconds, nanoseconds: nanos });
}
