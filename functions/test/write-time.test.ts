// When a trigger takes a write to have been committed (entry/write-time.ts over model/time.ts): an update at
// its document's update time, a delete at its event's time, never before the deleted version, and in the
// emulator, whose delete events carry a time from before the delete, at the invocation's time.
import type { Change, DocumentSnapshot } from "firebase-functions/v2/firestore";
import { eventWriteTimeUs } from "../src/entry/write-time";
import { microsCeil, writeTimeUs } from "../src/model/time";

const T1 = { seconds: 1_700_000_000, nanoseconds: 123_456_789 };
const T2 = { seconds: 1_700_000_001, nanoseconds: 500 };
const EVENT = "2023-11-14T22:13:22.000001Z";

/** The two sides of a write as a trigger's event holds them: only `exists` and `updateTime` are read. */
function change(before: typeof T1 | undefined, after: typeof T1 | undefined): Change<DocumentSnapshot> {
  const side = (time: typeof T1 | undefined) => ({ exists: time !== undefined, updateTime: time });
  // A stand-in for firebase-functions' Change: eventWriteTimeUs reads nothing else of it.
  return { before: side(before), after: side(after) } as unknown as Change<DocumentSnapshot>;
}

describe("writeTimeUs", () => {
  it("takes an update at the new version's update time, rounded up to a microsecond", () => {
    expect(writeTimeUs(T2, T1, EVENT, 0)).toBe(1_700_000_001_000_001);
  });

  it("takes a delete at its event's time, and never at or before the deleted version", () => {
    expect(writeTimeUs(undefined, T1, EVENT, 0)).toBe(Date.parse("2023-11-14T22:13:22Z") * 1000 + 1);
    expect(writeTimeUs(undefined, T1, "2020-01-01T00:00:00Z", 0)).toBe(microsCeil(T1) + 1);
    expect(writeTimeUs(undefined, T1, "not a time", 1_900_000_000_000)).toBe(1_900_000_000_000_000);
  });
});

describe("eventWriteTimeUs", () => {
  const saved = process.env.FUNCTIONS_EMULATOR;
  afterEach(() => {
    if (saved === undefined) delete process.env.FUNCTIONS_EMULATOR;
    else process.env.FUNCTIONS_EMULATOR = saved;
  });

  it("deployed: a delete at the event's time, an update at its update time", () => {
    delete process.env.FUNCTIONS_EMULATOR;
    expect(eventWriteTimeUs(change(T1, undefined), EVENT)).toBe(Date.parse("2023-11-14T22:13:22Z") * 1000 + 1);
    expect(eventWriteTimeUs(change(T1, T2), EVENT)).toBe(microsCeil(T2));
  });

  it("in the emulator: a delete at the invocation's time (its event's is earlier than the commit), an update as deployed", () => {
    process.env.FUNCTIONS_EMULATOR = "true";
    const before = Date.now() * 1000;
    const taken = eventWriteTimeUs(change(T1, undefined), "2020-01-01T00:00:00Z");
    expect(taken).toBeGreaterThanOrEqual(before);
    expect(taken).toBeLessThanOrEqual(Date.now() * 1000);
    expect(eventWriteTimeUs(change(T1, T2), EVENT)).toBe(microsCeil(T2));
  });
});
