// The exactness rule for unique counters (likes), as pure functions: what to show for a counter and the
// signed-in user's own membership, given one consistent cut of the counter, the user's membership record
// and member document, and what this client knows of its own setMember calls. No Firebase import.
//
// The argument. `total` at coverage time R (rollup.readTime, or createdAt) is the number of members at
// R: others(R) + M(R), where M(R) is this user's membership at R (docs/unique-counters.md: a membership
// change and its ±1 commit atomically, and the coverage rule puts a change in `total` iff its commit time
// <= R). The number to show is others(R) + the membership to show, so
//
//     value = total − M(R) + shownMember.
//
// M(R) comes from the server, not from what this client did. Every change of a membership writes, in its
// own batch and on condition that it is the version read, the user's record
// counters/{id}/memberships/{uid}: { member, changedAt, previousChangedAt }, then the batch's exact commit
// time into changedAt (null until then: no commit time is known before the commit, and
// serverTimestamp() is not it); previousChangedAt is the exact commit time of the change before, null for
// the first (functions/src/counters/members.ts). A change is only written if it changes the membership,
// so changes alternate: the membership was `member` from changedAt on and `!member` from
// previousChangedAt until changedAt. In a cut taken at T whose counter covers up to R <= T, the record is
// the one of T, so:
// - R >= changedAt (c1): M(R) = member;
// - previousChangedAt (c0) <= R < c1, or c0 null: M(R) = !member;
// - R < c0: two changes the total does not hold yet, M(R) not known from this cut; nor while c1 is null
//   (R may be on either side of it). The last cut in which M(R) was known (the *basis*) still gives
//   others(R') = total − M(R') for its R', so the value is basis.others + shownMember, reported with that
//   cut's total and R', until a cut with a known M(R) arrives (the rollup covers every write within
//   about an interval, and the time is written milliseconds after the commit, so one does);
// - no record: nobody changed this membership since records exist, so the member document says what it
//   is and has been: M(R) = its existence (false before any change). A member document that a version
//   without records wrote is assumed to be covered, which holds from one interval after the upgrade;
// - R null (no rollup and no createdAt): the total holds no change, M(R) = false.
// Whatever a call in flight, another device of the same user or a lost answer did, the record in the cut
// says it: nothing is held back for calls in flight, and no client-side history is needed for M(R).
//
// The cut must be consistent: a record older than the counter's R would make M(R) wrong. The client reads
// the three documents only when the SDK says every listener has fired for a change (onSnapshotsInSync)
// and none of them comes from the cache (the SDK marks a target from the cache while it is not current:
// offline, or listened again after the watch stream restarted, until the server has brought it up to
// date). The record is only ever updated in place, never deleted and created again. The record and the
// member document commit together, so in a consistent cut the record's `member` is the member document's
// existence; a cut in which they differ is not one state and tells nothing: M(R) is then not known. The
// emulator does deliver such cuts: after a leave and a join of the same user 30-70 ms apart, its listener
// kept the member document "deleted" next to the record of the join (2 cuts in each of 3 of 12 runs of
// the randomized test, client/test/membership.emulator.test.ts). In those runs (about 1,000 cuts) no
// record was older than its cut's total.
//
// shownMember is free to be any membership: the rule holds for each. It is the last tap while calls are
// pending; else this client's last changed answer while the cut's record does not hold it yet (no
// flicker back to the old state once the call is answered); else the record's membership, i.e. the
// server's, also for a change another device made.
import { asTime, compareTimes, type Time } from "./coverage.js";

/** The user's membership record as the server writes it with every change (counters/{id}/memberships/{uid}). */
export interface MembershipRecord {
  /** The membership since `changedAt`. */
  member: boolean;
  /**
   * The commit time of the change that made it `member` (the setMember answer's writeTime); null between
   * that commit and the write of its time (milliseconds, or until the next change if that write failed).
   */
  changedAt: Time | null;
  /** The commit time of the change before (it made it `!member`); null if there was none. */
  previousChangedAt: Time | null;
}

/**
 * Reads an existing membership record's snapshot (anything with `get(field)`, as the SDK's
 * DocumentSnapshot), or undefined when its fields are not the server's.
 */
export function readMembershipRecord(snap: { get(field: string): unknown }): MembershipRecord | undefined {
  const member = snap.get("member");
  const changedAt = nullableTime(snap.get("changedAt"));
  const previousChangedAt = nullableTime(snap.get("previousChangedAt"));
  if (typeof member !== "boolean" || changedAt === undefined || previousChangedAt === undefined) return undefined;
  return { member, changedAt, previousChangedAt };
}

/** A time field that may be null; undefined when it is neither. */
function nullableTime(value: unknown): Time | null | undefined {
  return value === null ? null : (asTime(value) ?? undefined);
}

/** A counter snapshot, the user's record and member document, all from one consistent cut. */
export interface MemberCut {
  exists: boolean;
  total: number;
  coveredUntil: Time | null;
  /** The membership record; null when it does not exist. */
  record: MembershipRecord | null;
  /** Whether `counters/{id}/members/{uid}` exists (read only when there is no record). */
  memberDoc: boolean;
}

/** A change this client made and was told of: a `changed: true` answer. */
export interface OwnChange {
  member: boolean;
  writeTime: Time;
}

/** A setMember call of this client not answered yet (calls of one counter go out one at a time). */
export interface PendingCall {
  member: boolean;
}

/** A cut whose M(R) is known, reduced to what the value needs: others(R) = total − M(R). */
export interface Basis {
  total: number;
  coveredUntil: Time | null;
  others: number;
}

export interface MemberValue {
  /** The number to show; null when the counter does not exist. */
  value: number | null;
  /** The membership to show. */
  member: boolean;
  /** The total and the coverage time the value is based on (the basis's; 0 and null with no counter). */
  total: number;
  coveredUntil: Time | null;
  /** value − total (0 when the counter does not exist). */
  pending: number;
}

/** The server's membership in the cut, now: the record's, else the member document's. */
export function serverMember(cut: MemberCut): boolean {
  return cut.record !== null ? cut.record.member : cut.memberDoc;
}

/** M(R): the user's membership at the cut's coverage time, or null when this cut cannot tell. */
export function membershipAt(cut: MemberCut): boolean | null {
  const at = cut.coveredUntil;
  if (at === null) return false;
  const record = cut.record;
  if (record === null) return cut.memberDoc;
  if (record.member !== cut.memberDoc) return null; // not one consistent state: trust neither (see above)
  if (record.changedAt === null) return null; // R may be before or after the change: wait for its time
  if (compareTimes(at, record.changedAt) >= 0) return record.member;
  if (record.previousChangedAt === null || compareTimes(at, record.previousChangedAt) >= 0) return !record.member;
  return null;
}

/** The basis a cut gives, or null when its M(R) is not known (keep the previous basis). */
export function basisOf(cut: MemberCut): Basis | null {
  if (!cut.exists) return null;
  const member = membershipAt(cut);
  if (member === null) return null;
  return { total: cut.total, coveredUntil: cut.coveredUntil, others: cut.total - (member ? 1 : 0) };
}

/**
 * Whether the record holds this client's change or a later one. A record without its time yet holds it
 * when the change before it is at or after the own change; otherwise it is the own change itself (no
 * change lies between previousChangedAt and changedAt) or an older one: not known, and the same to show
 * either way, since the own change's membership is then the record's or the newer one.
 */
export function holds(record: MembershipRecord | null, change: OwnChange): boolean {
  if (record === null) return false;
  if (record.changedAt !== null) return compareTimes(record.changedAt, change.writeTime) >= 0;
  return record.previousChangedAt !== null && compareTimes(record.previousChangedAt, change.writeTime) >= 0;
}

/** The membership to show: the last pending call's, else the last own change the cut does not hold yet, else the server's. */
export function shownMember(cut: MemberCut, last: OwnChange | undefined, calls: readonly PendingCall[]): boolean {
  const intent = calls[calls.length - 1];
  if (intent !== undefined) return intent.member;
  if (last !== undefined && !holds(cut.record, last)) return last.member;
  return serverMember(cut);
}

/**
 * What to show for `cut` with `basis` (the newest cut whose M(R) was known, this one if it is), or null
 * while there is nothing exact to show (no basis yet).
 */
export function memberValue(cut: MemberCut, basis: Basis | undefined, last: OwnChange | undefined, calls: readonly PendingCall[]): MemberValue | null {
  const member = shownMember(cut, last, calls);
  if (!cut.exists) return { value: null, member, total: 0, coveredUntil: null, pending: 0 };
  if (basis === undefined) return null;
  const value = basis.others + (member ? 1 : 0);
  return { value, member, total: basis.total, coveredUntil: basis.coveredUntil, pending: value - basis.total };
}
