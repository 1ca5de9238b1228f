// The pure state of unique counters in the client: what it knows about one counter and one user, how
// a consistent cut of the three listened documents and an answered call change it, and what each watcher
// is to be shown (see member-coverage.ts for the rule). No Firebase import and no listener:
// membership.ts listens, calls one at a time and tells.
import type { CounterSnapshotState, Time } from "./coverage.js";
import { basisOf, holds, memberValue, serverMember, type Basis, type MemberCut, type MembershipRecord, type OwnChange, type PendingCall } from "./member-coverage.js";
import type { Watcher } from "./registry.js";

/** What a membership watcher receives besides the value. */
export interface MemberView {
  counterId: string;
  /** The user whose membership is shown (the uid passed to watchMember). */
  uid: string;
  /** False while `counters/{counterId}` does not exist (then `value` is null). */
  exists: boolean;
  /** The membership to show ("you like this"): the last tap's while calls are pending, else the server's. */
  member: boolean;
  /**
   * The server's `total` this value is based on (0 when the counter does not exist): the newest total for
   * which the user's own membership at `coveredUntil` is known (see member-coverage.ts).
   */
  total: number;
  /** Every change committed at or before this time is in `total`: max(rollup.readTime, createdAt). */
  coveredUntil: Time | null;
  /**
   * The server's membership in the newest snapshot: the membership record's `member`, or, for a user
   * whose record does not exist, whether the member document exists.
   */
  memberDoc: boolean;
  /** value − total: the shown membership's difference to what `total` holds of this user. */
  pending: number;
}

/** A watch of the counter for one user (every watch of a counter is for the same user). */
export interface MemberWatcher extends Watcher<MemberView> {
  uid: string;
  autoCreated: boolean;
  /** Told that the counter is missing (missing.ts), once per absence. */
  toldMissing: boolean;
}

/** A listened document as last delivered: its value, and whether the SDK had it from its cache. */
export interface Delivered<T> {
  value: T;
  fromCache: boolean;
}

/** What the client knows about one unique counter and one user. */
export interface MemberState {
  /** This client's last change (`changed: true` answer), kept until a cut's record holds it. */
  last: OwnChange | undefined;
  /** Calls not answered yet, in the order they go out (one at a time). */
  calls: PendingCall[];
  /** The newest coveredUntil of any counter snapshot received. */
  seenUntil: Time | null;
  counter: Delivered<CounterSnapshotState> | undefined;
  /** The membership record (null: it does not exist). */
  record: Delivered<MembershipRecord | null> | undefined;
  memberDoc: Delivered<boolean> | undefined;
  /** The last consistent cut (all three from the server, in sync). */
  cut: MemberCut | undefined;
  /** The newest cut of the counter as it exists now whose M(R) was known. */
  basis: Basis | undefined;
  /** The end of the chain of this counter's calls (the next one is sent after it). */
  tail: Promise<void>;
  watchers: Set<MemberWatcher>;
  unsubscribe: (() => void) | undefined;
}

/** A counter's state before anything is known of it. */
export function freshMemberState(): MemberState {
  return {
    last: undefined,
    calls: [],
    seenUntil: null,
    counter: undefined,
    record: undefined,
    memberDoc: undefined,
    cut: undefined,
    basis: undefined,
    tail: Promise.resolve(),
    watchers: new Set(),
    unsubscribe: undefined,
  };
}

/** The listeners stopped: forget what they delivered (the calls in flight and the last change stay). */
export function forgetDelivered(state: MemberState): void {
  state.counter = undefined;
  state.record = undefined;
  state.memberDoc = undefined;
  state.cut = undefined;
  state.basis = undefined;
}

/**
 * Every listener has fired for a change: the three documents are from the same server snapshot, unless
 * one of them comes from the cache (then the cut could pair a record older than the total: skip it).
 * Returns whether a cut was taken.
 */
export function takeCut(state: MemberState): boolean {
  const { counter, record, memberDoc } = state;
  if (counter === undefined || record === undefined || memberDoc === undefined) return false; // nothing before all arrived
  if (counter.fromCache || record.fromCache || memberDoc.fromCache) return false;
  const cut: MemberCut = { ...counter.value, record: record.value, memberDoc: memberDoc.value };
  // Deleted: an answered change of this client was made on the counter that is gone.
  if (state.cut?.exists === true && !cut.exists) state.last = undefined;
  state.cut = cut;
  // A counter that does not exist has no basis; one created again must not inherit the old one.
  state.basis = cut.exists ? (basisOf(cut) ?? state.basis) : undefined;
  if (state.last !== undefined && holds(cut.record, state.last)) state.last = undefined; // the record says from now on
  return true;
}

/** A call of `member` was answered: its change (if it made one) is shown until a cut's record holds it. */
export function settleChange(state: MemberState, member: boolean, changed: boolean, writeTime: Time | null): void {
  if (changed && writeTime !== null) {
    // Shown until a cut's record holds it, so the like does not flicker back while the record is late.
    const change = { member, writeTime };
    state.last = holds(state.cut?.record ?? null, change) ? undefined : change;
  } else if (state.last !== undefined && state.last.member !== member) {
    // Unchanged, and the server says `member`: an older own change to the opposite is not the
    // membership any more (a lost answer made this one, at a time no answer carries): the record says.
    state.last = undefined;
  }
}

/** What one watcher is to be shown for the last cut. */
export interface MemberShown {
  /** The counter exists: a later absence is told again (missing.ts). */
  found: boolean;
  value: number | null;
  view: MemberView;
  /** The counter does not exist: tell onError (missing.ts). */
  missing: boolean;
}

/**
 * What `watcher` is to be shown: the count and the user's membership from the last cut, its basis, and
 * this client's last change and calls; undefined while no cut with a known M(R) was received.
 */
export function memberShownTo(counterId: string, state: MemberState, watcher: MemberWatcher): MemberShown | undefined {
  const cut = state.cut;
  if (cut === undefined) return undefined;
  if (!cut.exists) return missingShown(counterId, state, cut, watcher);
  const shown = memberValue(cut, state.basis, state.last, state.calls);
  if (shown === null) return undefined; // no cut with a known M(R) yet: nothing exact to show
  const view: MemberView = {
    counterId,
    uid: watcher.uid,
    exists: cut.exists,
    member: shown.member,
    total: shown.total,
    coveredUntil: shown.coveredUntil,
    memberDoc: serverMember(cut),
    pending: shown.pending,
  };
  return { found: true, value: shown.value, view, missing: false };
}

/**
 * A counter that does not exist has no members. Auto-created (WatchMemberOptions): this user's like to
 * show (a pending call's, or an answered change that no counter holds yet: the one this call's like
 * creates, before its snapshot arrives) counted alone. Otherwise null, told to onError once (cuts come
 * from the server only).
 */
function missingShown(counterId: string, state: MemberState, cut: MemberCut, watcher: MemberWatcher): MemberShown {
  const member = state.calls[state.calls.length - 1]?.member ?? state.last?.member ?? false;
  const view = { counterId, uid: watcher.uid, exists: false, member, total: 0, coveredUntil: null, memberDoc: serverMember(cut) };
  if (watcher.autoCreated) {
    const value = member ? 1 : 0;
    return { found: false, value, view: { ...view, pending: value }, missing: false };
  }
  return { found: false, value: null, view: { ...view, pending: 0 }, missing: true };
}
