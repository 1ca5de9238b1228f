// The pure exactness rule: which own increments a snapshot does not contain, and when that is unknown.
import { asTime, compareTimes, isCovered, laterOf, uncoveredDelta, type OwnIncrement, type Time } from "../src/coverage";

const t = (seconds: number, nanoseconds = 0): Time => ({ seconds, nanoseconds });
const answered = (delta: number, writeTime: Time): OwnIncrement => ({ delta, writeTime });
const inFlight = (delta: number, sentAfter: Time | null): OwnIncrement => ({ delta, writeTime: null, sentAfter });

describe("compareTimes and laterOf", () => {
  it.each([
    [t(1, 5), t(1, 5), 0],
    [t(1, 5), t(1, 6), -1],
    [t(2, 0), t(1, 999_999_999), 1],
  ])("orders %o and %o", (a, b, sign) => {
    expect(Math.sign(compareTimes(a, b))).toBe(sign);
  });

  it("takes the later time, and a missing one as none", () => {
    expect(laterOf(t(3), t(2, 9))).toEqual(t(3));
    expect(laterOf(null, t(2))).toEqual(t(2));
    expect(laterOf(t(2), null)).toEqual(t(2));
    expect(laterOf(null, null)).toBeNull();
  });
});

describe("isCovered: total counts exactly the writes at or before coveredUntil", () => {
  it.each([
    ["a write at the read time", t(10, 500), t(10, 500), true],
    ["a write 1 ns after it", t(10, 501), t(10, 500), false],
    ["a write before it", t(9, 999_999_999), t(10, 0), true],
  ])("%s", (_name, writeTime, coveredUntil, covered) => {
    expect(isCovered(coveredUntil, writeTime)).toBe(covered);
  });

  it("covers nothing without a read time", () => {
    expect(isCovered(null, t(0))).toBe(false);
  });
});

describe("uncoveredDelta", () => {
  it("is 0 with nothing of our own: the value is the server total", () => {
    expect(uncoveredDelta(t(5), [])).toBe(0);
    expect(uncoveredDelta(null, [])).toBe(0);
  });

  it("adds answered increments after coveredUntil and leaves out those at or before it", () => {
    const own = [answered(1, t(9)), answered(2, t(10)), answered(4, t(10, 1)), answered(8, t(11))];
    expect(uncoveredDelta(t(10), own)).toBe(12);
    expect(uncoveredDelta(t(11), own)).toBe(0);
    expect(uncoveredDelta(null, own)).toBe(15);
  });

  it("adds an in-flight call when the snapshot is no newer than what the client had seen before sending it", () => {
    expect(uncoveredDelta(t(10), [inFlight(3, t(10))])).toBe(3);
    expect(uncoveredDelta(t(9), [inFlight(3, t(10))])).toBe(3);
    expect(uncoveredDelta(null, [inFlight(3, null)])).toBe(3);
  });

  it("is unknown for a snapshot newer than that: the call may or may not be in it", () => {
    expect(uncoveredDelta(t(10, 1), [inFlight(3, t(10))])).toBeNull();
    expect(uncoveredDelta(t(1), [inFlight(3, null)])).toBeNull();
    expect(uncoveredDelta(t(12), [answered(1, t(13)), inFlight(3, t(10))])).toBeNull();
  });

  it("counts a decrement like any delta", () => {
    expect(uncoveredDelta(t(10), [answered(-5, t(11)), inFlight(2, t(10))])).toBe(-3);
  });

  it("after a reset moved coveredUntil past them, erased increments are not added again", () => {
    // Increments at 20 and 21, a reset whose rollup.readTime is 21, one more at 23.
    const own = [answered(5, t(20)), answered(6, t(21)), answered(7, t(23))];
    expect(uncoveredDelta(t(21), own)).toBe(7);
  });
});

describe("asTime", () => {
  it("reads seconds and nanoseconds integers and refuses anything else", () => {
    expect(asTime({ seconds: 1_700_000_000, nanoseconds: 123_456_000 })).toEqual(t(1_700_000_000, 123_456_000));
    expect(asTime({ seconds: 1, nanoseconds: 1e9 })).toBeNull();
    expect(asTime({ seconds: 1.5, nanoseconds: 0 })).toBeNull();
    expect(asTime({ seconds: "1", nanoseconds: 0 })).toBeNull();
    expect(asTime(null)).toBeNull();
    expect(asTime(undefined)).toBeNull();
  });
});
