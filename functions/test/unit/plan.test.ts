import {
  decide,
  dueMsOf,
  isCovered,
  microsCeil,
  microsFloor,
  offsetMsOf,
  parseRfc3339Micros,
  slotOf,
  type RollupView,
  type Timing,
  type WriteFacts,
} from "../../src/counters/plan";

const INTERVAL = 1000;
const OFFSET = 250;
const T0_MS = 1_800_000_000_000; // a whole second: slots here end at …250 ms

function write(atMs: number, overrides: Partial<WriteFacts> = {}): WriteFacts {
  return { eventId: "evt-a", writtenAtUs: atMs * 1000, countChanged: true, ...overrides };
}

function view(overrides: Partial<RollupView> = {}): RollupView {
  return { parentExists: true, coveredUntilUs: null, lease: null, ...overrides };
}

function timing(nowMs: number): Timing {
  return { intervalMs: INTERVAL, offsetMs: OFFSET, nowMs, staleAfterMs: 10_000 };
}

describe("slots", () => {
  it("puts a write in the slot that is due first after it", () => {
    const slot = slotOf((T0_MS + 100) * 1000, INTERVAL, OFFSET);
    expect(dueMsOf(slot, INTERVAL, OFFSET)).toBe(T0_MS + 250);
  });

  it("never makes a write due at its own instant: a write exactly on a boundary waits a whole interval", () => {
    const slot = slotOf((T0_MS + 250) * 1000, INTERVAL, OFFSET);
    expect(dueMsOf(slot, INTERVAL, OFFSET)).toBe(T0_MS + 1250);
  });

  it("gives writes within one interval at most two slots and consecutive slots one interval apart", () => {
    const slots = new Set<number>();
    for (let ms = 0; ms < INTERVAL; ms += 7) slots.add(slotOf((T0_MS + 600 + ms) * 1000, INTERVAL, OFFSET));
    expect(slots.size).toBe(2);
    const [a, b] = [...slots];
    expect(dueMsOf(b!, INTERVAL, OFFSET) - dueMsOf(a!, INTERVAL, OFFSET)).toBe(INTERVAL);
  });

  it("offsets counters differently but stably, within the interval", () => {
    const offsets = ["likes", "views", "favorites", "a", "b"].map((id) => offsetMsOf(id, INTERVAL));
    expect(new Set(offsets).size).toBe(offsets.length);
    for (const o of offsets) expect(o).toBeGreaterThanOrEqual(0);
    for (const o of offsets) expect(o).toBeLessThan(INTERVAL);
    expect(offsetMsOf("likes", INTERVAL)).toBe(offsetMsOf("likes", INTERVAL));
  });
});

describe("coverage", () => {
  it.each([
    [null, 5, false],
    [4, 5, false],
    [5, 5, true],
    [6, 5, true],
  ])("a sum read at %p covers a write at %p: %p", (readUs, writeUs, expected) => {
    expect(isCovered(readUs, writeUs)).toBe(expected);
  });

  it("rounds write times up and read times down, so a sub-microsecond tie is never called covered", () => {
    const writeUs = microsCeil({ seconds: 100, nanoseconds: 1_500 });
    const readUs = microsFloor({ seconds: 100, nanoseconds: 1_999 });
    expect(writeUs).toBe(100_000_002);
    expect(readUs).toBe(100_000_001);
    expect(isCovered(readUs, writeUs)).toBe(false);
  });

  it("parses CloudEvent times with nanoseconds, rounding up", () => {
    expect(parseRfc3339Micros("2026-11-22T00:00:00.000001001Z")).toBe(Date.UTC(2026, 10, 22) * 1000 + 2);
    expect(parseRfc3339Micros("2026-11-22T00:00:00Z")).toBe(Date.UTC(2026, 10, 22) * 1000);
    expect(parseRfc3339Micros("2026-11-22T01:00:00.5+01:00")).toBe(Date.UTC(2026, 10, 22) * 1000 + 500_000);
    expect(parseRfc3339Micros("yesterday")).toBeNull();
  });
});

describe("decide", () => {
  const at = T0_MS + 100;

  it("skips a write that did not change the count (e.g. a shard created at 0)", () => {
    expect(decide(write(at, { countChanged: false }), view(), timing(at))).toEqual({ kind: "skip", reason: "unchanged" });
  });

  it("skips when the parent does not exist: a late event never recreates a deleted counter", () => {
    expect(decide(write(at), view({ parentExists: false }), timing(at))).toEqual({ kind: "skip", reason: "no-parent" });
  });

  it("skips a write already covered by the parent's sum (duplicate or late delivery)", () => {
    const covered = view({ coveredUntilUs: at * 1000 });
    expect(decide(write(at), covered, timing(at + 5000))).toEqual({ kind: "skip", reason: "covered" });
  });

  it("claims the write's slot when nobody has", () => {
    expect(decide(write(at), view(), timing(at))).toEqual({ kind: "claim", slot: slotOf(at * 1000, INTERVAL, OFFSET), dueMs: T0_MS + 250 });
  });

  it("claims a newer slot than the lease holds", () => {
    const slot = slotOf(at * 1000, INTERVAL, OFFSET);
    const decision = decide(write(at), view({ lease: { slot: slot - 1, eventId: "evt-old" } }), timing(at));
    expect(decision).toEqual({ kind: "claim", slot, dueMs: T0_MS + 250 });
  });

  it("defers to a claim of the same slot by another event", () => {
    const slot = slotOf(at * 1000, INTERVAL, OFFSET);
    const decision = decide(write(at), view({ lease: { slot, eventId: "evt-other" } }), timing(at + 10));
    expect(decision).toEqual({ kind: "defer", toSlot: slot });
  });

  it("defers to a claim of a later slot (a late event)", () => {
    const slot = slotOf(at * 1000, INTERVAL, OFFSET);
    const decision = decide(write(at), view({ lease: { slot: slot + 3, eventId: "evt-other" } }), timing(at + 3000));
    expect(decision).toEqual({ kind: "defer", toSlot: slot + 3 });
  });

  it("resumes its own claim when the same event is delivered again (retry after a crash)", () => {
    const slot = slotOf(at * 1000, INTERVAL, OFFSET);
    const decision = decide(write(at), view({ lease: { slot, eventId: "evt-a" } }), timing(at + 2000));
    expect(decision).toEqual({ kind: "rollup", slot, dueMs: T0_MS + 250, reason: "own-claim" });
  });

  it("takes over a claim whose due time passed long ago without a covering sum", () => {
    const slot = slotOf(at * 1000, INTERVAL, OFFSET);
    const lease = { slot, eventId: "evt-dead" };
    expect(decide(write(at), view({ lease }), timing(T0_MS + 250 + 9_999)).kind).toBe("defer");
    expect(decide(write(at), view({ lease }), timing(T0_MS + 250 + 10_000))).toEqual({
      kind: "rollup",
      slot,
      dueMs: T0_MS + 250,
      reason: "stale-claim",
    });
  });

  it("makes one claim for a burst of writes within a slot: the rest defer", () => {
    const slot = slotOf(at * 1000, INTERVAL, OFFSET);
    let lease: RollupView["lease"] = null;
    const kinds: string[] = [];
    for (let i = 0; i < 100; i++) {
      const d = decide(write(at + i, { eventId: `evt-${i}` }), view({ lease }), timing(at + i + 1));
      kinds.push(d.kind);
      if (d.kind === "claim") lease = { slot: d.slot, eventId: `evt-${i}` };
    }
    expect(kinds.filter((k) => k === "claim")).toHaveLength(1);
    expect(lease).toEqual({ slot, eventId: "evt-0" });
  });
});
