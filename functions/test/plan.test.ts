import {
  claimIntervalMs,
  claimSpanMs,
  decide,
  decideFromParent,
  dueMsFor,
  dueMsOf,
  intervalToRecord,
  isCovered,
  isIdle,
  offsetMsOf,
  slotOf,
  snapshotSumAllowed,
  type Claim,
  type ParentView,
  type Timing,
  type WriteFacts,
} from "../src/rollup/plan";
import { MAX_INTERVAL_MS } from "../src/model/param-rules";
import { microsCeil, microsFloor, parseRfc3339Micros } from "../src/model/time";

const INTERVAL = 1000;
const OFFSET = 250;
const COUNTER = "plan-test";
const T0_MS = 1_800_000_000_000; // a whole second: with OFFSET, slots here end at …250 ms

function write(atMs: number, overrides: Partial<WriteFacts> = {}): WriteFacts {
  return { counterId: COUNTER, claimKey: "evt-a", writtenAtUs: atMs * 1000, countChanged: true, ...overrides };
}

/** A busy counter by default: the rollup wrote the parent 200 ms before T0, with a 1 s interval recorded. */
function view(overrides: Partial<ParentView> = {}): ParentView {
  return { parentExists: true, coveredUntilUs: null, lastCommitUs: (T0_MS - 200) * 1000, recordedIntervalMs: INTERVAL, numShards: 1, load: null, ...overrides };
}

function timing(nowMs: number, intervalMs = INTERVAL): Timing {
  return { intervalMs, nowMs, staleAfterMs: 10_000 };
}

/** The due time a claim of this test counter gets for a write at `atMs`. */
function dueOf(atMs: number, intervalMs = INTERVAL): number {
  return dueMsFor(COUNTER, atMs * 1000, intervalMs);
}

function lease(dueMs: number, eventId = "evt-other"): Claim {
  return { eventId, dueMs };
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

  it("makes a claim due after its write and at most one interval later, whatever the interval", () => {
    for (const intervalMs of [1, 7, 1000, 1001, 5000, MAX_INTERVAL_MS]) {
      for (const atMs of [T0_MS, T0_MS + 1, T0_MS + 999, T0_MS + 123_457]) {
        const due = dueOf(atMs, intervalMs);
        expect(due * 1000).toBeGreaterThan(atMs * 1000);
        expect(due - atMs).toBeLessThanOrEqual(intervalMs);
      }
    }
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
  const due = dueOf(at);

  it("skips a write that did not change the count (e.g. a shard created at 0)", () => {
    expect(decide(write(at, { countChanged: false }), view(), null, timing(at))).toEqual({ kind: "skip", reason: "unchanged" });
  });

  it("skips when the parent does not exist: a late event never recreates a deleted counter", () => {
    expect(decide(write(at), view({ parentExists: false }), null, timing(at))).toEqual({ kind: "skip", reason: "no-parent" });
  });

  it("skips a write already covered by the parent's sum when no claim of its event is pending", () => {
    const covered = view({ coveredUntilUs: at * 1000 });
    expect(decide(write(at), covered, null, timing(at + 5000))).toEqual({ kind: "skip", reason: "covered" });
    expect(decide(write(at), covered, lease(due), timing(at + 5000))).toEqual({ kind: "skip", reason: "covered" });
  });

  it("claims the end of the write's slot when no claim is pending", () => {
    expect(decide(write(at), view(), null, timing(at))).toEqual({ kind: "claim", dueMs: due, intervalMs: INTERVAL });
    expect(due).toBeGreaterThan(at);
    expect(due - at).toBeLessThanOrEqual(INTERVAL);
  });

  it("claims when the pending claim is due before the write (its duty passes to the new, later claim)", () => {
    expect(decide(write(at), view(), lease(at - 1), timing(at))).toEqual({ kind: "claim", dueMs: due, intervalMs: INTERVAL });
  });

  it("defers to a pending claim due at or after the write, by its stored due time", () => {
    expect(decide(write(at), view(), lease(due), timing(at + 10))).toEqual({ kind: "defer", toDueMs: due });
    expect(decide(write(at), view(), lease(at), timing(at + 10))).toEqual({ kind: "defer", toDueMs: at });
    expect(decide(write(at), view(), lease(due + 3000), timing(at + 10))).toEqual({ kind: "defer", toDueMs: due + 3000 });
  });

  it("resumes its own claim when the same event is delivered again (retry after a crash)", () => {
    expect(decide(write(at), view(), lease(due, "evt-a"), timing(at + 2000))).toEqual({ kind: "rollup", dueMs: due, reason: "own-claim" });
  });

  it("takes over a claim whose due time passed long ago without a covering sum", () => {
    expect(decide(write(at), view(), lease(due), timing(due + 9_999)).kind).toBe("defer");
    expect(decide(write(at), view(), lease(due), timing(due + 10_000))).toEqual({ kind: "rollup", dueMs: due, reason: "stale-claim" });
  });

  it("treats a lease due further ahead than any claim can be as unreadable, and claims over it", () => {
    const far = lease(at + 2 * MAX_INTERVAL_MS + 1);
    expect(decide(write(at), view(), far, timing(at))).toEqual({ kind: "claim", dueMs: due, intervalMs: INTERVAL });
  });

  it("makes one claim for a burst of writes within a slot: the rest defer", () => {
    let current: Claim | null = null;
    const kinds: string[] = [];
    for (let i = 0; i < 100; i++) {
      const d = decide(write(at + i, { claimKey: `evt-${i}` }), view(), current, timing(at + i + 1));
      kinds.push(d.kind);
      if (d.kind === "claim") current = lease(d.dueMs, `evt-${i}`);
    }
    expect(kinds.filter((k) => k === "claim")).toHaveLength(1);
    expect(current).toEqual(lease(due, "evt-0"));
  });
});

describe("a claimer's retry honours its claim (docs/rollup.md)", () => {
  // The schedule, step by step, inside one slot (due at D): the last commit K is 500 ms before the
  // slot starts; C's write, just after the start, is not idle (< K + I) and claims D; L, later in the same
  // slot, finds the counter idle (>= K + I) and leads with a sum read at R_L; E, after R_L and before D,
  // defers to C; C fails at D and is retried.
  const D = dueOf(T0_MS + 100);
  const slotStart = D - INTERVAL;

  it("resumes the claim, although a leading edge covered the claimer's own write meanwhile", () => {
    // Lay the schedule out inside one slot: C just after the slot starts, L idle, E before D.
    const k = slotStart - 500;
    const c = slotStart + 20;
    const l = k + INTERVAL + 10;
    const e = l + 200;
    expect(l).toBeLessThan(D);
    expect(e).toBeLessThan(D);
    const busy = view({ lastCommitUs: k * 1000 });
    // 1. C claims.
    const claimC = decide(write(c, { claimKey: "evt-C" }), busy, null, timing(c + 5));
    expect(claimC).toEqual({ kind: "claim", dueMs: D, intervalMs: INTERVAL });
    // 2. L finds the counter idle and leads: its sum is read at R_L, its commit lands at R_L + 5.
    expect(decideFromParent(write(l, { claimKey: "evt-L" }), busy)).toEqual({ kind: "lead" });
    const rL = l + 20;
    const afterL = view({ lastCommitUs: (rL + 5) * 1000, coveredUntilUs: rL * 1000 });
    // 3. E, after L's sum and before D, is neither covered nor idle: it defers to C.
    expect(decide(write(e, { claimKey: "evt-E" }), afterL, lease(D, "evt-C"), timing(e + 5))).toEqual({ kind: "defer", toDueMs: D });
    // 4-5. C fails at D; its retry finds its write covered by L's sum, but not its claim: it must read
    // the lease (the parent alone cannot decide) and finish the claim at D, which covers E.
    expect(decideFromParent(write(c, { claimKey: "evt-C" }), afterL)).toBeNull();
    expect(decide(write(c, { claimKey: "evt-C" }), afterL, lease(D, "evt-C"), timing(D + 50))).toEqual({
      kind: "rollup",
      dueMs: D,
      reason: "own-claim",
    });
  });

  it("reads the lease for a covered write only when the covering sum was read less than S after it", () => {
    const w = write(at(0));
    expect(decideFromParent(w, view({ coveredUntilUs: (at(0) + INTERVAL - 1) * 1000 }))).toBeNull();
    expect(decideFromParent(w, view({ coveredUntilUs: (at(0) + INTERVAL) * 1000 }))).toEqual({ kind: "skip", reason: "covered" });
    // Without a recorded interval S is the param's cap: any claim may be pending up to 60 s after its write.
    const legacy = view({ recordedIntervalMs: null });
    expect(decideFromParent(w, { ...legacy, coveredUntilUs: (at(0) + MAX_INTERVAL_MS - 1) * 1000 })).toBeNull();
    expect(decideFromParent(w, { ...legacy, coveredUntilUs: (at(0) + MAX_INTERVAL_MS) * 1000 })).toEqual({ kind: "skip", reason: "covered" });
  });

  it("only deletes the lease when its own claim is already covered at its due time", () => {
    const w = write(at(0));
    const d = dueOf(at(0));
    const coveredAtDue = view({ coveredUntilUs: d * 1000 });
    expect(decide(w, coveredAtDue, lease(d, "evt-a"), timing(d + 10))).toEqual({ kind: "release" });
    const coveredBeforeDue = view({ coveredUntilUs: (d - 1) * 1000 });
    expect(decide(w, coveredBeforeDue, lease(d, "evt-a"), timing(d + 10))).toEqual({ kind: "rollup", dueMs: d, reason: "own-claim" });
  });

  it("never lets a claimer's retry lead while its claim is pending: idleness is judged with the recorded interval", () => {
    const c = T0_MS + 100;
    const claimedWith = view({ lastCommitUs: (c - 300) * 1000, recordedIntervalMs: 5000 });
    const claim = decide(write(c), claimedWith, null, timing(c, 5000));
    expect(claim).toMatchObject({ kind: "claim" });
    // A deploy lowers this instance's interval to 1000 ms: the write is 300 ms after the last commit,
    // idle under 1000 ms but not under the 5000 ms still recorded, so the retry reads the lease.
    expect(decideFromParent(write(c), claimedWith)).toBeNull();
    const dueMs = (claim as { dueMs: number }).dueMs;
    expect(decide(write(c), claimedWith, lease(dueMs, "evt-a"), timing(c + 20_000, 1000))).toMatchObject({ kind: "rollup", reason: "own-claim" });
  });

  function at(offsetMs: number): number {
    return T0_MS + 100 + offsetMs;
  }
});

describe("interval changes (docs/rollup.md)", () => {
  it("defers to a claim made under another interval by its stored due time, and claims after it", () => {
    // A claim made with a 1000 ms interval; this instance now runs with 5000 ms.
    const w = T0_MS + 100;
    const d = dueOf(w, 1000);
    const recorded = view({ recordedIntervalMs: 5000 });
    expect(decide(write(w + 10, { claimKey: "evt-b" }), recorded, lease(d), timing(w + 20, 5000))).toEqual({ kind: "defer", toDueMs: d });
    // A write after that due time is not covered by the pending claim: it claims (with 5000 ms slots).
    const later = d + 1;
    expect(decide(write(later, { claimKey: "evt-c" }), recorded, lease(d), timing(later + 5, 5000))).toEqual({
      kind: "claim",
      dueMs: dueOf(later, 5000),
      intervalMs: 5000,
    });
  });

  it("lets a claim made under 5000 ms go stale on its own due time when the interval drops to 1000 ms", () => {
    const w = T0_MS + 100;
    const d = dueOf(w, 5000);
    const recorded = view({ recordedIntervalMs: 5000 });
    const staleAfter = 10_000;
    expect(decide(write(w + 1, { claimKey: "evt-b" }), recorded, lease(d), timing(d + staleAfter - 1, 1000)).kind).toBe("defer");
    expect(decide(write(w + 1, { claimKey: "evt-b" }), recorded, lease(d), timing(d + staleAfter, 1000))).toMatchObject({ kind: "rollup", reason: "stale-claim" });
  });

  it("never makes a claim longer than the recorded interval, and records at least the recorded one", () => {
    expect(claimIntervalMs(5000, view({ recordedIntervalMs: 1000 }))).toBe(1000);
    expect(claimIntervalMs(1000, view({ recordedIntervalMs: 5000 }))).toBe(1000);
    expect(claimIntervalMs(5000, view({ recordedIntervalMs: null }))).toBe(5000);
    expect(intervalToRecord(5000, view({ recordedIntervalMs: 1000 }), null)).toBe(5000);
    expect(intervalToRecord(1000, view({ recordedIntervalMs: 5000 }), null)).toBe(5000);
    expect(intervalToRecord(1000, view({ recordedIntervalMs: null }), null)).toBe(1000);
  });

  it("lets only a leading edge after a rest of two recorded intervals lower the recorded interval", () => {
    const lastCommitUs = T0_MS * 1000;
    const recorded = view({ recordedIntervalMs: 5000, lastCommitUs });
    expect(intervalToRecord(1000, recorded, (T0_MS + 9_999) * 1000)).toBe(5000);
    expect(intervalToRecord(1000, recorded, (T0_MS + 10_000) * 1000)).toBe(1000);
    expect(intervalToRecord(1000, view({ recordedIntervalMs: 5000, lastCommitUs: null }), T0_MS * 1000)).toBe(1000);
  });

  it("bounds the span of any pending claim by the recorded interval, or by the cap when none is recorded", () => {
    expect(claimSpanMs(view({ recordedIntervalMs: 1234 }))).toBe(1234);
    expect(claimSpanMs(view({ recordedIntervalMs: null }))).toBe(MAX_INTERVAL_MS);
  });
});

describe("leading edge", () => {
  const at = T0_MS + 100;

  it("rolls up at once a write on a counter the rollup never wrote", () => {
    expect(decide(write(at), view({ lastCommitUs: null }), null, timing(at))).toEqual({ kind: "lead" });
  });

  it("rolls up at once when the last rollup commit is one recorded interval or more before the write", () => {
    expect(decide(write(at), view({ lastCommitUs: (at - 5000) * 1000 }), null, timing(at))).toEqual({ kind: "lead" });
    expect(decide(write(at), view({ lastCommitUs: (at - INTERVAL) * 1000 }), null, timing(at))).toEqual({ kind: "lead" });
    expect(decide(write(at), view({ lastCommitUs: (at - INTERVAL) * 1000 + 1 }), null, timing(at)).kind).toBe("claim");
  });

  it("judges idleness by the rollup's last commit, not by the read time (a reset moves only that)", () => {
    // A reset 10 ms before the write: covered until then, but the rollup last wrote a minute ago.
    const afterReset = view({ coveredUntilUs: (at - 10) * 1000, lastCommitUs: (at - 60_000) * 1000 });
    expect(decide(write(at), afterReset, null, timing(at))).toEqual({ kind: "lead" });
    // A rollup commit 10 ms before the write, whose sum was read long before: busy.
    const busy = view({ coveredUntilUs: (at - 60_000) * 1000, lastCommitUs: (at - 10) * 1000 });
    expect(decide(write(at), busy, null, timing(at)).kind).toBe("claim");
  });

  it("judges idleness from the write's commit time, so a late delivery of a busy moment's write still claims", () => {
    const lastCommitUs = (at - 300) * 1000;
    expect(isIdle(lastCommitUs, at * 1000, INTERVAL)).toBe(false);
    expect(decide(write(at), view({ lastCommitUs }), null, timing(at + 60_000)).kind).toBe("claim");
  });

  it("decides from the parent alone when it can: a lone increment on an idle counter reads nothing else", () => {
    expect(decideFromParent(write(at), view({ coveredUntilUs: (at + INTERVAL) * 1000 }))).toEqual({ kind: "skip", reason: "covered" });
    expect(decideFromParent(write(at), view({ parentExists: false }))).toEqual({ kind: "skip", reason: "no-parent" });
    expect(decideFromParent(write(at), view({ lastCommitUs: null }))).toEqual({ kind: "lead" });
    expect(decideFromParent(write(at), view({}))).toBeNull();
  });

  it("leads on an idle counter even past a pending claim (at most one extra write, no lease read)", () => {
    expect(decide(write(at), view({ lastCommitUs: null }), lease(dueOf(at)), timing(at))).toEqual({ kind: "lead" });
  });

  it("still skips a covered write and a missing parent before anything else", () => {
    expect(decide(write(at), view({ lastCommitUs: null, coveredUntilUs: (at + INTERVAL) * 1000 }), null, timing(at)).kind).toBe("skip");
    expect(decide(write(at), view({ lastCommitUs: null, parentExists: false }), null, timing(at)).kind).toBe("skip");
  });
});

describe("the single-shard snapshot sum (its guard)", () => {
  const at = T0_MS + 5_000;
  const shard0 = { shardId: "0", writtenAtUs: at * 1000 };
  const idle = view({ lastCommitUs: null, updatedUs: (at - 1_000) * 1000 });

  it("takes the event's own shard as the sum on a one-shard counter whose parent was last written before the write", () => {
    expect(snapshotSumAllowed(idle, shard0)).toBe(true);
  });

  it("sums the shards when the parent was written at or after the write: a reshard or a reset may have come in between", () => {
    expect(snapshotSumAllowed(view({ ...idle, updatedUs: (at + 1) * 1000 }), shard0)).toBe(false);
    // The same instant: a reshard's fold or a reset's subtraction, written in one transaction with the parent.
    expect(snapshotSumAllowed(view({ ...idle, updatedUs: at * 1000 }), shard0)).toBe(false);
    expect(snapshotSumAllowed(view({ ...idle, updatedUs: undefined }), shard0)).toBe(false);
  });

  it("sums the shards of a counter with more than one shard, or of an unreadable numShards", () => {
    expect(snapshotSumAllowed(view({ ...idle, numShards: 2 }), shard0)).toBe(false);
    expect(snapshotSumAllowed(view({ ...idle, numShards: null }), shard0)).toBe(false);
    expect(snapshotSumAllowed(idle, { ...shard0, shardId: "1" })).toBe(false);
  });

  it("never replaces a sum that already covers the write", () => {
    expect(snapshotSumAllowed(view({ ...idle, coveredUntilUs: at * 1000 }), shard0)).toBe(false);
  });
});
