// The pure rule for unique counters: value = total − M(R) + membership shown, with M(R), the user's
// membership at the total's coverage time R, read from the membership record of the same cut.
import type { Time } from "../src/coverage";
import {
  basisOf,
  holds,
  memberValue,
  membershipAt,
  shownMember,
  type Basis,
  type MemberCut,
  type MembershipRecord,
  type OwnChange,
  type PendingCall,
} from "../src/member-coverage";

const t = (seconds: number): Time => ({ seconds, nanoseconds: 0 });
/** A record; changedAt null: the change committed, its time not written yet. */
const rec = (member: boolean, changedAt: number | null, previousChangedAt: number | null): MembershipRecord => ({
  member,
  changedAt: changedAt === null ? null : t(changedAt),
  previousChangedAt: previousChangedAt === null ? null : t(previousChangedAt),
});
const cut = (total: number, coveredUntil: number | null, record: MembershipRecord | null, memberDoc = record?.member ?? false, exists = true): MemberCut => ({
  exists,
  total,
  coveredUntil: coveredUntil === null ? null : t(coveredUntil),
  record,
  memberDoc,
});
const change = (member: boolean, at: number): OwnChange => ({ member, writeTime: t(at) });
const call = (member: boolean): PendingCall => ({ member });

/** Folds a stream of cuts as watchMember does: each cut's basis if it has one, else the previous one. */
function show(cuts: MemberCut[], last?: OwnChange, calls: PendingCall[] = []) {
  let basis: Basis | undefined;
  return cuts.map((c) => {
    basis = c.exists ? (basisOf(c) ?? basis) : undefined;
    return memberValue(c, basis, last, calls);
  });
}

describe("membershipAt: M(R) from the record of the same cut", () => {
  it.each<[string, MemberCut, boolean | null]>([
    ["R at the last change: the record's membership", cut(5, 12, rec(true, 12, 8)), true],
    ["R after the last change", cut(5, 20, rec(false, 12, 8)), false],
    ["R between the change before and the last: the opposite", cut(5, 10, rec(true, 12, 8)), false],
    ["R at the change before: the opposite", cut(5, 8, rec(false, 12, 8)), true],
    ["R before the first change (no change before it): the opposite, not a member", cut(5, 3, rec(true, 12, null)), false],
    ["R before the change before: not known from this cut", cut(5, 7, rec(true, 12, 8)), null],
    ["no record: the member document (no change since records exist)", cut(5, 7, null, true), true],
    ["no record and no member document: never a member", cut(5, 7, null, false), false],
    ["R null: the total holds no change", cut(0, null, rec(true, 12, null)), false],
    ["a record the member document contradicts: not one state, not known", cut(5, 20, rec(true, 12, 8), false), null],
    ["the same the other way round", cut(5, 20, rec(false, 12, 8), true), null],
    ["a change whose time is not written yet: R may be on either side of it", cut(5, 20, rec(true, null, 8)), null],
    ["the same for a first change", cut(5, 20, rec(true, null, null)), null],
  ])("%s", (_name, c, expected) => {
    expect(membershipAt(c)).toBe(expected);
  });

  it("compares to the nanosecond", () => {
    const at = (seconds: number, nanoseconds: number) => ({ seconds, nanoseconds });
    const record = { member: true, changedAt: at(12, 500), previousChangedAt: at(12, 100) };
    expect(membershipAt({ exists: true, total: 1, coveredUntil: at(12, 499), record, memberDoc: true })).toBe(false);
    expect(membershipAt({ exists: true, total: 1, coveredUntil: at(12, 500), record, memberDoc: true })).toBe(true);
    expect(membershipAt({ exists: true, total: 1, coveredUntil: at(12, 99), record, memberDoc: true })).toBeNull();
  });
});

describe("holds: whether the record holds this client's change (or a later one)", () => {
  it.each<[string, MembershipRecord | null, OwnChange, boolean]>([
    ["no record", null, change(true, 11), false],
    ["the change itself", rec(true, 11, 9), change(true, 11), true],
    ["a later change", rec(false, 13, 11), change(true, 11), true],
    ["an older change", rec(false, 9, 4), change(true, 11), false],
    ["a later change without its time yet (the one before is at or after ours)", rec(true, null, 11), change(true, 11), true],
    ["without its time, after ours or ours: not known", rec(true, null, 9), change(true, 11), false],
    ["a first change without its time", rec(true, null, null), change(true, 11), false],
  ])("%s", (_name, record, own, expected) => {
    expect(holds(record, own)).toBe(expected);
  });
});

describe("shownMember", () => {
  it.each<[string, MemberCut, OwnChange | undefined, PendingCall[], boolean]>([
    ["the last pending tap, whatever the record says", cut(5, 10, rec(true, 9, null)), change(true, 9), [call(true), call(false)], false],
    ["this client's answered change the record does not hold yet", cut(5, 10, rec(false, 9, 4)), change(true, 11), [], true],
    ["this client's answered change, no record yet", cut(5, 10, null, false), change(true, 11), [], true],
    ["the record once it holds the answered change", cut(5, 10, rec(true, 11, 9)), change(true, 11), [], true],
    ["another device's later change: the record's", cut(5, 10, rec(false, 13, 11)), change(true, 11), [], false],
    ["with nothing of its own: the record's", cut(5, 10, rec(true, 9, null)), undefined, [], true],
    ["with nothing of its own and no record: the member document's", cut(5, 10, null, true), undefined, [], true],
    ["its own change while the record has no time yet: the same either way", cut(5, 10, rec(true, null, 9)), change(true, 11), [], true],
    ["a later change without its time: the record's", cut(5, 10, rec(false, null, 11)), change(true, 11), [], false],
  ])("%s", (_name, c, last, calls, expected) => {
    expect(shownMember(c, last, calls)).toBe(expected);
  });
});

describe("memberValue", () => {
  it("with nothing pending, shows the server's values: the total and the record's membership", () => {
    expect(show([cut(7, 10, rec(true, 9, null))])).toEqual([{ value: 7, member: true, total: 7, coveredUntil: t(10), pending: 0 }]);
    expect(show([cut(7, 10, null, false)])).toEqual([{ value: 7, member: false, total: 7, coveredUntil: t(10), pending: 0 }]);
  });

  it("shows a tap at once, in flight or committed, and never twice once the total holds it", () => {
    // others: 7. The like commits at 12; the record has it from the cut at 12 on, the total from R = 12.
    const calls = [call(true)];
    expect(show([cut(7, 10, null)], undefined, calls)).toEqual([{ value: 8, member: true, total: 7, coveredUntil: t(10), pending: 1 }]);
    expect(show([cut(7, 10, rec(true, 12, null))], undefined, calls)).toEqual([{ value: 8, member: true, total: 7, coveredUntil: t(10), pending: 1 }]);
    expect(show([cut(8, 12, rec(true, 12, null))], undefined, calls)).toEqual([{ value: 8, member: true, total: 8, coveredUntil: t(12), pending: 0 }]);
    // answered: the same values with the answer instead of the call
    expect(show([cut(7, 10, null)], change(true, 12))).toEqual([{ value: 8, member: true, total: 7, coveredUntil: t(10), pending: 1 }]);
    expect(show([cut(8, 12, rec(true, 12, null))], change(true, 12))).toEqual([{ value: 8, member: true, total: 8, coveredUntil: t(12), pending: 0 }]);
  });

  it("an unlike of a like the total holds takes exactly one away", () => {
    expect(show([cut(8, 13, rec(true, 12, null))], undefined, [call(false)])).toEqual([{ value: 7, member: false, total: 8, coveredUntil: t(13), pending: -1 }]);
    // the unlike committed at 14, the total does not hold it yet
    expect(show([cut(8, 13, rec(false, 14, 12))])).toEqual([{ value: 7, member: false, total: 8, coveredUntil: t(13), pending: -1 }]);
  });

  it("another device's like: shown with the record at once, counted once before and after the total holds it", () => {
    // This client made no call: its own history knows nothing of the like at 12.
    expect(show([cut(5, 10, null), cut(5, 11, rec(true, 12, null)), cut(6, 12, rec(true, 12, null))])).toEqual([
      { value: 5, member: false, total: 5, coveredUntil: t(10), pending: 0 },
      { value: 6, member: true, total: 5, coveredUntil: t(11), pending: 1 },
      { value: 6, member: true, total: 6, coveredUntil: t(12), pending: 0 },
    ]);
  });

  it("a lost answer (the like committed, the retry answered changed: false): the record says when", () => {
    // The call's retry is still pending in the second cut; the record already holds the like at 11.
    expect(show([cut(3, 10, null), cut(3, 10, rec(true, 11, null))], undefined, [call(true)])).toEqual([
      { value: 4, member: true, total: 3, coveredUntil: t(10), pending: 1 },
      { value: 4, member: true, total: 3, coveredUntil: t(10), pending: 1 },
    ]);
    expect(show([cut(4, 11, rec(true, 11, null))])).toEqual([{ value: 4, member: true, total: 4, coveredUntil: t(11), pending: 0 }]);
  });

  it("R before the change before the last: keeps the basis of the last cut that knew M(R), with its total and R", () => {
    // A like at 11 and an unlike at 12 (another device), neither in the total at R = 10 or 10.5.
    const cuts = [cut(5, 9, null), cut(5, 10, rec(false, 12, 11)), cut(6, 11, rec(false, 12, 11)), cut(5, 12, rec(false, 12, 11))];
    expect(show(cuts)).toEqual([
      { value: 5, member: false, total: 5, coveredUntil: t(9), pending: 0 },
      { value: 5, member: false, total: 5, coveredUntil: t(9), pending: 0 },
      { value: 5, member: false, total: 6, coveredUntil: t(11), pending: -1 },
      { value: 5, member: false, total: 5, coveredUntil: t(12), pending: 0 },
    ]);
    // The same with a pending like of this client: the basis's others + 1.
    expect(show(cuts.slice(0, 2), undefined, [call(true)]).map((v) => v?.value)).toEqual([6, 6]);
  });

  it("keeps the basis while the record's time is being written, and while the record and the member document disagree", () => {
    // the like commits at 12; its time is written a moment later
    const cuts = [cut(5, 10, null), cut(5, 13, rec(true, null, null)), cut(6, 13, rec(true, 12, null), false), cut(6, 13, rec(true, 12, null))];
    expect(show(cuts)).toEqual([
      { value: 5, member: false, total: 5, coveredUntil: t(10), pending: 0 },
      { value: 6, member: true, total: 5, coveredUntil: t(10), pending: 1 },
      { value: 6, member: true, total: 5, coveredUntil: t(10), pending: 1 },
      { value: 6, member: true, total: 6, coveredUntil: t(13), pending: 0 },
    ]);
  });

  it("shows nothing while no cut has told M(R) yet", () => {
    expect(show([cut(5, 10, rec(false, 12, 11)), cut(5, 12, rec(false, 12, 11))])).toEqual([
      null,
      { value: 5, member: false, total: 5, coveredUntil: t(12), pending: 0 },
    ]);
  });

  it("never shows less than 0: an unlike of the only like shows 0", () => {
    expect(show([cut(1, 10, rec(true, 9, null))], undefined, [call(false)])).toEqual([{ value: 0, member: false, total: 1, coveredUntil: t(10), pending: -1 }]);
    // a like at 11 and an unlike at 12 of the only member: the total at 11 holds the like, and shows 0
    expect(show([cut(0, 10, rec(false, 12, 11)), cut(1, 11, rec(false, 12, 11))])).toEqual([
      null,
      { value: 0, member: false, total: 1, coveredUntil: t(11), pending: -1 },
    ]);
  });

  it("shows null for a counter that does not exist, and starts again from the new counter's cuts", () => {
    expect(show([cut(0, null, null, false, false)], undefined, [call(true)])).toEqual([{ value: null, member: true, total: 0, coveredUntil: null, pending: 0 }]);
    // deleted (the record goes with it) and created again: the old basis is not used
    expect(show([cut(4, 10, null), cut(0, null, null, false, false), cut(0, 20, rec(false, 22, 21))])).toEqual([
      { value: 4, member: false, total: 4, coveredUntil: t(10), pending: 0 },
      { value: null, member: false, total: 0, coveredUntil: null, pending: 0 },
      null,
    ]);
  });
});
