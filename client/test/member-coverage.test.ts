// The pure rule for unique counters: value = total − (own membership the total holds) + membership shown.
import type { Time } from "../src/coverage";
import { knownMember, memberValue, type MemberCut, type OwnChange, type PendingCall } from "../src/member-coverage";

const t = (seconds: number): Time => ({ seconds, nanoseconds: 0 });
const cut = (total: number, coveredUntil: Time | null, memberDoc: boolean, exists = true): MemberCut => ({ exists, total, coveredUntil, memberDoc });
const change = (member: boolean, at: number): OwnChange => ({ member, writeTime: t(at) });
const queued = (member: boolean): PendingCall => ({ member, sent: null });
const sent = (member: boolean, after: number | null, before = false): PendingCall => ({
  member,
  sent: { after: after === null ? null : t(after), before },
});

describe("memberValue", () => {
  it("with nothing of its own, shows the server's values: total and the member document", () => {
    expect(memberValue(cut(7, t(10), true), [], [])).toEqual({ value: 7, member: true, pending: 0 });
    expect(memberValue(cut(7, t(10), false), [], [])).toEqual({ value: 7, member: false, pending: 0 });
  });

  it("shows a like at once while its call is queued or in flight, and not twice once answered", () => {
    expect(memberValue(cut(7, t(10), false), [], [queued(true)])).toEqual({ value: 8, member: true, pending: 1 });
    expect(memberValue(cut(7, t(10), false), [], [sent(true, 10)])).toEqual({ value: 8, member: true, pending: 1 });
    // answered changed: true at 12; a snapshot covering up to 11 does not hold it, one at 12 does
    expect(memberValue(cut(7, t(11), true), [change(true, 12)], [])).toEqual({ value: 8, member: true, pending: 1 });
    expect(memberValue(cut(8, t(12), true), [change(true, 12)], [])).toEqual({ value: 8, member: true, pending: 0 });
  });

  it("holds back a snapshot newer than what the client had seen when it sent a call still in flight", () => {
    expect(memberValue(cut(8, t(11), true), [], [sent(true, 10)])).toBeNull();
    expect(memberValue(cut(8, t(11), true), [], [sent(true, null)])).toBeNull();
    expect(memberValue(cut(0, null, false), [], [sent(true, null)])).toEqual({ value: 1, member: true, pending: 1 });
  });

  it("does not read the member document while a call is pending: it may hold the change the total does not", () => {
    // the in-flight like has committed (member document exists) but the total (covered to 10) does not hold it
    expect(memberValue(cut(7, t(10), true), [], [sent(true, 10)])).toEqual({ value: 8, member: true, pending: 1 });
  });

  it("nets a like and an unlike the total holds neither of, and the last tap decides what is shown", () => {
    expect(memberValue(cut(7, t(10), false), [change(true, 11)], [sent(false, 10, true)])).toEqual({ value: 7, member: false, pending: 0 });
    expect(memberValue(cut(7, t(10), false), [change(true, 11), change(false, 12)], [])).toEqual({ value: 7, member: false, pending: 0 });
    // the total holds the like (covered to 11) but not the unlike
    expect(memberValue(cut(8, t(11), true), [change(true, 11), change(false, 12)], [])).toEqual({ value: 7, member: false, pending: -1 });
  });

  it("with no call in flight, starts the pending calls from the cut's membership: another device's change is not taken twice", () => {
    // the like before was answered changed: false; another device then unliked, and this cut covers that
    expect(memberValue(cut(3, t(12), false), [], [queued(false)])).toEqual({ value: 3, member: false, pending: 0 });
  });

  it("an unlike of a like the total already holds takes exactly one away", () => {
    expect(memberValue(cut(8, t(10), true), [], [queued(false)])).toEqual({ value: 7, member: false, pending: -1 });
  });

  it("shows null for a counter that does not exist", () => {
    expect(memberValue(cut(0, null, false, false), [], [queued(true)])).toEqual({ value: null, member: true, pending: 0 });
  });
});

describe("knownMember", () => {
  it("is the last uncovered own change, else the member document", () => {
    expect(knownMember(cut(1, t(10), false), [change(true, 11)])).toBe(true);
    expect(knownMember(cut(1, t(11), false), [change(true, 11)])).toBe(false);
    expect(knownMember(undefined, [])).toBe(false);
  });
});
