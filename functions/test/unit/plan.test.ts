import {
  decide,
  decideFromParent,
  dueMsOf,
  isCovered,
  isIdle,
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

/** A busy counter by default: the rollup wrote the parent 300 ms before the writes of these tests. */
function view(overrides: Partial<RollupView> = {}): RollupView {
  return { parentExists: true, coveredUntilUs: null, lease: null, lastCommitUs: (T0_MS - 200) * 1000, ...overrides };
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

describe("leading edge", () => {
  const at = T0_MS + 100;
  const slot = slotOf(at * 1000, INTERVAL, OFFSET);

  it("rolls up at once a write on a counter the rollup never wrote", () => {
    expect(decide(write(at), view({ lastCommitUs: null }), timing(at))).toEqual({ kind: "lead" });
  });

  it("rolls up at once when the last rollup commit is one interval or more before the write", () => {
    expect(decide(write(at), view({ lastCommitUs: (at - 5000) * 1000 }), timing(at))).toEqual({ kind: "lead" });
    expect(decide(write(at), view({ lastCommitUs: (at - INTERVAL) * 1000 }), timing(at))).toEqual({ kind: "lead" });
    expect(decide(write(at), view({ lastCommitUs: (at - INTERVAL) * 1000 + 1 }), timing(at)).kind).toBe("claim");
  });

  it("judges idleness by the rollup's last commit, not by the read time (a reset moves only that)", () => {
    // A reset 10 ms before the write: covered until then, but the rollup last wrote a minute ago.
    const afterReset = view({ coveredUntilUs: (at - 10) * 1000, lastCommitUs: (at - 60_000) * 1000 });
    expect(decide(write(at), afterReset, timing(at))).toEqual({ kind: "lead" });
    // A rollup commit 10 ms before the write, whose sum was read long before: busy.
    const busy = view({ coveredUntilUs: (at - 60_000) * 1000, lastCommitUs: (at - 10) * 1000 });
    expect(decide(write(at), busy, timing(at)).kind).toBe("claim");
  });

  it("judges idleness from the write's commit time, so a late delivery of a busy moment's write still claims", () => {
    const lastCommitUs = (at - 300) * 1000;
    expect(isIdle(lastCommitUs, at * 1000, INTERVAL)).toBe(false);
    expect(decide(write(at), view({ lastCommitUs }), timing(at + 60_000)).kind).toBe("claim");
  });

  it("leads on an idle counter even past a claim pending for its slot (at most one extra write, no lease read)", () => {
    const idleWithClaim = view({ lastCommitUs: null, lease: { slot, eventId: "evt-other" } });
    expect(decide(write(at), idleWithClaim, timing(at))).toEqual({ kind: "lead" });
  });

  it("never lets a claimer's retry lead: its write was not idle, and the last commit only moves forward", () => {
    const claimedWith = (at - 300) * 1000;
    expect(decide(write(at), view({ lastCommitUs: claimedWith }), timing(at)).kind).toBe("claim");
    for (const lastCommitUs of [claimedWith, (at - 100) * 1000, (at + 5000) * 1000]) {
      const retry = view({ lastCommitUs, lease: { slot, eventId: "evt-a" } });
      expect(decide(write(at), retry, timing(at + 20_000))).toMatchObject({ kind: "rollup", reason: "own-claim" });
    }
  });

  it("decides from the parent alone when it can, and asks for the lease only on a busy, uncovered write", () => {
    const parent = (overrides: Partial<RollupView>) => {
      const { lease: _lease, ...rest } = view(overrides);
      return rest;
    };
    expect(decideFromParent(write(at), parent({ coveredUntilUs: at * 1000 }), INTERVAL)).toEqual({ kind: "skip", reason: "covered" });
    expect(decideFromParent(write(at), parent({ parentExists: false }), INTERVAL)).toEqual({ kind: "skip", reason: "no-parent" });
    expect(decideFromParent(write(at), parent({ lastCommitUs: null }), INTERVAL)).toEqual({ kind: "lead" });
    expect(decideFromParent(write(at), parent({}), INTERVAL)).toBeNull();
  });

  it("leads past an old claim of an earlier slot", () => {
    const old = view({ lastCommitUs: null, lease: { slot: slot - 5, eventId: "evt-old" } });
    expect(decide(write(at), old, timing(at))).toEqual({ kind: "lead" });
  });

  it("still skips a covered write and a missing parent before anything else", () => {
    expect(decide(write(at), view({ lastCommitUs: null, coveredUntilUs: at * 1000 }), timing(at)).kind).toBe("skip");
    expect(decide(write(at), view({ lastCommitUs: null, parentExists: false }), timing(at)).kind).toBe("skip");
  });
});

/**
 * A model of the rollup driven by decide(): events are delivered (possibly late and out of order), a
 * leading-edge rollup sums and commits at its delivery instant, a claimer commits at its slot's due time
 * unless a sum read at or after it is already on the parent. Returns the parent commit times (ms).
 */
function simulate(writesMs: number[], deliveryDelayMs: (i: number) => number): { commitsMs: number[]; finalCoveredUs: number } {
  const events = writesMs
    .map((w, i) => ({ w, i, deliverAt: w + deliveryDelayMs(i) }))
    .sort((a, b) => a.deliverAt - b.deliverAt || a.i - b.i);
  let coveredUntilUs: number | null = null;
  let lastCommitUs: number | null = null;
  let lease: RollupView["lease"] = null;
  const pending: { dueMs: number }[] = [];
  const commitsMs: number[] = [];
  const commit = (atMs: number, readMs: number) => {
    coveredUntilUs = Math.max(coveredUntilUs ?? 0, readMs * 1000);
    lastCommitUs = atMs * 1000;
    commitsMs.push(atMs);
  };
  const runDueClaims = (untilMs: number) => {
    pending.sort((a, b) => a.dueMs - b.dueMs);
    while (pending.length > 0 && pending[0]!.dueMs <= untilMs) {
      const { dueMs } = pending.shift()!;
      if (!isCovered(coveredUntilUs, dueMs * 1000)) commit(dueMs, dueMs);
    }
  };
  for (const e of events) {
    runDueClaims(e.deliverAt);
    const d = decide(
      write(e.w, { eventId: `evt-${e.i}` }),
      { parentExists: true, coveredUntilUs, lease, lastCommitUs },
      timing(e.deliverAt),
    );
    if (d.kind === "lead") commit(e.deliverAt, e.deliverAt);
    else if (d.kind === "claim") {
      lease = { slot: d.slot, eventId: `evt-${e.i}` };
      pending.push({ dueMs: Math.max(d.dueMs, e.deliverAt) });
    }
  }
  runDueClaims(Number.POSITIVE_INFINITY);
  return { commitsMs, finalCoveredUs: coveredUntilUs ?? 0 };
}

/** The most commits within any half-open window of one interval. */
function mostPerInterval(commitsMs: number[]): number {
  const sorted = [...commitsMs].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j < sorted.length && sorted[j]! < sorted[i]! + INTERVAL) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

describe("parent writes with the leading edge (model driven by decide)", () => {
  it("writes about once per interval under 100 increments/s for 30 s, never more than twice in one interval", () => {
    const writes = Array.from({ length: 3000 }, (_, i) => T0_MS + i * 10);
    const { commitsMs, finalCoveredUs } = simulate(writes, () => 0);
    expect(commitsMs.length).toBeLessThanOrEqual(32);
    expect(mostPerInterval(commitsMs)).toBeLessThanOrEqual(2);
    expect(finalCoveredUs).toBeGreaterThanOrEqual(writes[writes.length - 1]! * 1000);
  });

  it("writes once per isolated increment, at once", () => {
    const writes = Array.from({ length: 20 }, (_, i) => T0_MS + i * 2500);
    const { commitsMs } = simulate(writes, () => 3);
    expect(commitsMs).toEqual(writes.map((w) => w + 3));
  });

  it.each([
    ["bursty arrivals", 1, 50],
    ["arrivals about one interval apart", 2, 900],
    ["sparse arrivals", 3, 2000],
  ])("never writes more than twice in one interval, and covers every write, with %s delivered late and out of order", (_name, seed, meanGapMs) => {
    const random = lcg(seed);
    const writes: number[] = [];
    let t = T0_MS;
    for (let i = 0; i < 2000; i++) {
      t += Math.max(1, Math.round(-Math.log(1 - random()) * meanGapMs));
      writes.push(t);
    }
    const delays = writes.map(() => Math.round(random() * 400));
    const { commitsMs, finalCoveredUs } = simulate(writes, (i) => delays[i]!);
    expect(mostPerInterval(commitsMs)).toBeLessThanOrEqual(2);
    expect(finalCoveredUs).toBeGreaterThanOrEqual(writes[writes.length - 1]! * 1000);
  });
});
