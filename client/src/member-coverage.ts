// The exactness rule for unique counters (likes), as one pure function: what to show for a counter and
// the signed-in user's own membership, given a consistent pair of snapshots (the counter and the user's
// member document) and what this client knows of its own setMember calls. No Firebase import.
//
// The argument. `total` at coverage time R (rollup.readTime, or createdAt) is the number of members at
// R: others(R) + M(R), where M(R) is this user's membership at R (DESIGN.md: a membership change and its
// ±1 commit atomically, and the coverage rule puts a change in `total` iff its writeTime <= R). The
// number to show is others(R) + the membership to show, so
//
//     value = total − M(R) + shownMember.
//
// M(R) is this user's membership at R. The client knows the time of a membership change only when it
// made it and got its `changed: true` answer (writeTime w). Its calls go out one at a time per counter,
// so its own changes alternate and are ordered by w. Then:
// - own changes not covered yet (w > R), oldest first c1, c2, …: M(R) is the membership just before
//   c1, which is !c1.member (c1 changed it), and the membership now is the last one's;
// - none: M(R) = the member document's existence in the same snapshot cut (`memberDoc`), the membership
//   the server has now, and the value is `total`: exactly the server's values.
// So value = total + Σ uncovered own changes (±1) + (intent − membership before the pending calls), and
// it is exact whenever every change of this user's membership after R is one of this client's answered
// ones. A call still in flight has no writeTime yet: a snapshot whose R is at or before the newest R the
// client had seen when it sent the call cannot contain it (its commit comes later); a newer one may or
// may not, so the client keeps showing the previous value until the call is answered (the hold-back,
// as for increments).
//
// What no client can know: the commit time of a change it did not get an answer for, i.e. another device
// of the same user, or a lost answer whose retry found the change made and answered `changed: false,
// writeTime: null`. Such a change is shown as the server shows it: the member document at once, and the
// count once the rollup covers it (about one interval). It is never counted twice: with no uncovered
// own change, the value is `total`, which holds each member at most once.
import { compareTimes, isCovered, type Time } from "./coverage.js";

/** A change of this user's membership made by this client: a `changed: true` answer. */
export interface OwnChange {
  member: boolean;
  writeTime: Time;
}

/** A setMember call of this client not answered yet (calls of one counter go out one at a time). */
export interface PendingCall {
  member: boolean;
  /** Null while it waits for the call before it (not sent: it cannot be in any snapshot). */
  sent: {
    /** The newest `coveredUntil` the client had received when it sent the call (null if none). */
    after: Time | null;
    /**
     * The membership as the client knew it when it sent the call ({@link knownMember}). While the call is
     * in flight, a snapshot's member document may already hold its change while the total does not, so
     * the document is not read for the membership before it.
     */
    before: boolean;
  } | null;
}

/** A counter snapshot and the user's member document snapshot from the same consistent cut. */
export interface MemberCut {
  exists: boolean;
  total: number;
  coveredUntil: Time | null;
  /** Whether `counters/{id}/members/{uid}` exists in that cut. */
  memberDoc: boolean;
}

export interface MemberValue {
  /** The number to show; null when the counter does not exist. */
  value: number | null;
  /** The membership to show: the last call's while calls are pending, else the server's as known. */
  member: boolean;
  /** value − total (0 when the counter does not exist). */
  pending: number;
}

/** The own changes a snapshot covering up to `coveredUntil` does not contain, oldest first. */
export function uncoveredChanges(coveredUntil: Time | null, own: readonly OwnChange[]): OwnChange[] {
  return own.filter((c) => !isCovered(coveredUntil, c.writeTime)).sort((a, b) => compareTimes(a.writeTime, b.writeTime));
}

/**
 * What to show for `cut`, or null when it cannot be known yet (a sent call may or may not be in this
 * cut's total: keep showing the previous value until it is answered).
 */
export function memberValue(cut: MemberCut, own: readonly OwnChange[], calls: readonly PendingCall[]): MemberValue | null {
  for (const call of calls) {
    if (call.sent === null || cut.coveredUntil === null) continue;
    if (call.sent.after === null || compareTimes(cut.coveredUntil, call.sent.after) > 0) return null; // the hold-back
  }
  const uncovered = uncoveredChanges(cut.coveredUntil, own);
  const last = uncovered[uncovered.length - 1];
  const known = last !== undefined ? last.member : cut.memberDoc;
  let mine = 0;
  for (const change of uncovered) mine += change.member ? 1 : -1;
  // The membership the pending calls start from: as known when the one in flight was sent; with none in
  // flight (the first is about to go out), as known from this cut: it cannot hold a pending call's change.
  const before = calls[0]?.sent?.before ?? known;
  const intent = calls[calls.length - 1];
  if (intent !== undefined) mine += (intent.member ? 1 : 0) - (before ? 1 : 0);
  const member = intent !== undefined ? intent.member : known;
  if (!cut.exists) return { value: null, member, pending: 0 };
  return { value: cut.total + mine, member, pending: mine };
}

/** The membership the client knows now, with no call pending: its last uncovered change, else the document's. */
export function knownMember(cut: MemberCut | undefined, own: readonly OwnChange[]): boolean {
  const uncovered = uncoveredChanges(cut?.coveredUntil ?? null, own);
  const last = uncovered[uncovered.length - 1];
  return last !== undefined ? last.member : (cut?.memberDoc ?? false);
}
