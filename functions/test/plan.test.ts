import {
  decide,
  decideFromMemo,
  intervalToRecord,
  isCovered,
  isIdle,
  markOfParent,
  nothingApplied,
  ownerKeyOf,
  promiseDueMs,
  promiseIntervalMs,
  resumeAfterMsFor,
  snapshotSumAllowed,
  spanMs,
  staleAfterMsFor,
  type ParentView,
  type RememberedParent,
  type Timing,
  type Trailing,
  type WriteFacts,
} from "../src/rollup/plan";
import { MAX_INTERVAL_MS } from "../src/model/param-rules";
import { microsCeil, microsFloor, parseRfc3339Micros } from "../src/model/time";

const INTERVAL = 1000;
const COUNTER = "plan-test";
const T0_MS = 1_800_000_000_000; // a whole second

function write(atMs: number, overrides: Partial<WriteFacts> = {}): WriteFacts {
  return { counterId: COUNTER, ownerKey: "0@1", writtenAtUs: atMs * 1000, countChanged: true, ...overrides };
}

/** A busy counter by default: the rollup wrote the parent 200 ms before T0 (its sum read then), with a 1 s interval recorded. */
function view(overrides: Partial<ParentView> = {}): ParentView {
  const at = (T0_MS - 200) * 1000;
  return { parentExists: true, coveredUntilUs: at, lastCommitUs: at, recordedIntervalMs: INTERVAL, numShards: 1, load: null, updatedUs: at, trailing: null, total: 0, createdUs: 0, ...overrides };
}

function timing(nowMs: number, intervalMs = INTERVAL): Timing {
  return { intervalMs, nowMs, staleAfterMs: staleAfterMsFor(intervalMs) };
}

/** A promise due at `dueMs`, owned by another write unless said. */
function promise(dueMs: number, owner = "1@2"): Trailing {
  return { dueMs, owner };
}

describe("the promise", () => {
  it("names its owner by the write: its shard and commit time, the same on every delivery", () => {
    expect(ownerKeyOf({ shardId: "3", writtenAtUs: 1_800_000_000_123_456 })).toBe("3@1800000000123456");
  });

  it("is due one interval after the read time of the sum its commit holds (rounded up to the millisecond)", () => {
    expect(promiseDueMs(T0_MS * 1000, INTERVAL)).toBe(T0_MS + INTERVAL);
    expect(promiseDueMs(T0_MS * 1000 + 1, INTERVAL)).toBe(T0_MS + 1 + INTERVAL);
  });

  it("never spans more than the recorded interval, and a commit records at least the recorded one", () => {
    expect(promiseIntervalMs(5000, view({ recordedIntervalMs: 1000 }))).toBe(1000);
    expect(promiseIntervalMs(1000, view({ recordedIntervalMs: 5000 }))).toBe(1000);
    expect(promiseIntervalMs(5000, view({ recordedIntervalMs: null }))).toBe(5000);
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

  it("is bounded by the recorded interval, or by the cap when none is recorded", () => {
    expect(spanMs(view({ recordedIntervalMs: 1234 }))).toBe(1234);
    expect(spanMs(view({ recordedIntervalMs: null }))).toBe(MAX_INTERVAL_MS);
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

  it("skips a write the parent's sum covers, whatever promise is pending", () => {
    const covered = view({ coveredUntilUs: at * 1000 });
    expect(decide(write(at), covered, timing(at + 5))).toEqual({ kind: "skip", reason: "covered" });
    expect(decide(write(at), { ...covered, trailing: promise(at + 500) }, timing(at + 5))).toEqual({ kind: "skip", reason: "covered" });
  });

  it("defers to a promise due at or after the write: its owner's sum is read after it", () => {
    expect(decide(write(at), view({ trailing: promise(at + 800) }), timing(at + 5))).toEqual({ kind: "defer", toDueMs: at + 800 });
    expect(decide(write(at), view({ trailing: promise(at) }), timing(at + 5))).toEqual({ kind: "defer", toDueMs: at });
  });

  it("starts a chain when the promise is due before the write (its owner may sum before the write)", () => {
    expect(decide(write(at), view({ trailing: promise(at - 1) }), timing(at + 5))).toEqual({ kind: "start" });
  });

  it("starts a chain on a busy counter no promise covers (right after a leading edge or a handover)", () => {
    expect(decide(write(at), view(), timing(at + 5))).toEqual({ kind: "start" });
  });

  it("takes over a promise that went stale without a covering sum", () => {
    const due = at + 800;
    const staleAfter = staleAfterMsFor(INTERVAL);
    expect(decide(write(at), view({ trailing: promise(due) }), timing(due + staleAfter - 1)).kind).toBe("defer");
    expect(decide(write(at), view({ trailing: promise(due) }), timing(due + staleAfter))).toEqual({ kind: "takeover", dueMs: due });
  });

  it("resumes its own promise once it is overdue, although its own write is covered (its owner failed: others deferred to it)", () => {
    const due = at + 800;
    const mine = view({ coveredUntilUs: at * 1000, trailing: promise(due, "0@1") });
    const resumeAfter = resumeAfterMsFor(INTERVAL);
    // Early (its first delivery may still be running): it returns, as any covered write.
    expect(decide(write(at), mine, timing(due + resumeAfter - 1))).toEqual({ kind: "skip", reason: "covered" });
    expect(decide(write(at), mine, timing(due + resumeAfter))).toEqual({ kind: "resume", dueMs: due });
    // Fulfilled already: nothing to resume.
    expect(decide(write(at), { ...mine, coveredUntilUs: due * 1000 }, timing(due + resumeAfter)).kind).toBe("skip");
  });

  it("treats a promise due further ahead than any can be as unreadable", () => {
    expect(decide(write(at), view({ trailing: promise(at + 3 * MAX_INTERVAL_MS) }), timing(at + 5))).toEqual({ kind: "start" });
  });

  it("defers a whole burst to one promise: only the first write of a busy stretch starts a chain", () => {
    const due = at + INTERVAL;
    const kinds = [1, 50, 300, 999].map((ms) => decide(write(at + ms, { ownerKey: `0@${ms}` }), view({ trailing: promise(due) }), timing(at + ms + 5)).kind);
    expect(kinds).toEqual(["defer", "defer", "defer", "defer"]);
  });
});

describe("the leading edge", () => {
  const at = T0_MS + 100;

  it("rolls up at once a write on a counter the rollup never wrote", () => {
    expect(decide(write(at), view({ lastCommitUs: null, coveredUntilUs: null }), timing(at))).toEqual({ kind: "lead" });
  });

  it("rolls up at once when the last rollup commit is one recorded interval or more before the write", () => {
    const busyAt = (ms: number) => view({ lastCommitUs: (at - ms) * 1000, coveredUntilUs: (at - ms) * 1000 });
    expect(decide(write(at), busyAt(5000), timing(at))).toEqual({ kind: "lead" });
    expect(decide(write(at), busyAt(INTERVAL), timing(at))).toEqual({ kind: "lead" });
    expect(decide(write(at), view({ lastCommitUs: (at - INTERVAL) * 1000 + 1 }), timing(at)).kind).toBe("start");
  });

  it("judges idleness by the rollup's last commit, not by the read time (a reset moves only that)", () => {
    const afterReset = view({ coveredUntilUs: (at - 10) * 1000, lastCommitUs: (at - 60_000) * 1000 });
    expect(decide(write(at), afterReset, timing(at))).toEqual({ kind: "lead" });
    const busy = view({ coveredUntilUs: (at - 60_000) * 1000, lastCommitUs: (at - 10) * 1000 });
    expect(decide(write(at), busy, timing(at)).kind).toBe("start");
  });

  it("judges idleness from the write's commit time, so a late delivery of a busy moment's write still starts a chain", () => {
    const lastCommitUs = (at - 300) * 1000;
    expect(isIdle(lastCommitUs, at * 1000, INTERVAL)).toBe(false);
    expect(decide(write(at), view({ lastCommitUs }), timing(at + 60_000)).kind).toBe("start");
  });

  it("drops a promise that an idle write's sum fulfils: every promise is due at most one recorded interval after its commit", () => {
    const committed = (at - INTERVAL) * 1000;
    const idle = view({ lastCommitUs: committed, coveredUntilUs: committed, trailing: promise(at - INTERVAL + INTERVAL) });
    // The promise is due at the write (deferred to) or before it (the write leads, and its sum is read after it).
    expect(decide(write(at), idle, timing(at)).kind).toBe("defer");
    expect(decide(write(at + 1), idle, timing(at + 1))).toEqual({ kind: "lead" });
  });
});

describe("decideFromMemo: what an instance decides without reading the parent", () => {
  const at = T0_MS + 100;
  const due = at + 800;
  const seen = (overrides: Partial<ParentView> = {}, observedMs = at - 50): RememberedParent => ({ view: view(overrides), observedUs: observedMs * 1000 });
  const t = { nowMs: at + 5, staleAfterMs: staleAfterMsFor(INTERVAL) };

  it("skips a write the remembered sum covers (read times only grow)", () => {
    expect(decideFromMemo(write(at), seen({ coveredUntilUs: at * 1000 }), t)).toEqual({ kind: "skip", reason: "covered" });
  });

  it("defers a write of a shard it knew to a remembered promise due at or after it", () => {
    const known = write(at, { shardCreatedUs: (at - 60_000) * 1000 });
    expect(decideFromMemo(known, seen({ trailing: promise(due) }), t)).toEqual({ kind: "defer", toDueMs: due });
  });

  it("reads the parent for a shard created after its memo: the counter may have been deleted and created again", () => {
    expect(decideFromMemo(write(at, { shardCreatedUs: (at - 10) * 1000 }), seen({ trailing: promise(due) }), t)).toBeNull();
    expect(decideFromMemo(write(at, { shardCreatedUs: null }), seen({ trailing: promise(due) }), t)).toBeNull();
  });

  it("reads the parent for a write that owns the remembered promise (it may be its owner's retry), and for a stale promise", () => {
    const old = (at - 60_000) * 1000;
    expect(decideFromMemo(write(at, { shardCreatedUs: old }), seen({ trailing: promise(due, "0@1"), coveredUntilUs: at * 1000 }), t)).toBeNull();
    expect(decideFromMemo(write(at, { shardCreatedUs: old }), seen({ trailing: promise(due) }), { ...t, nowMs: due + t.staleAfterMs })).toBeNull();
  });

  it("reads the parent for anything else: a write past the promise, a gone counter", () => {
    const old = (at - 60_000) * 1000;
    expect(decideFromMemo(write(due + 1, { shardCreatedUs: old }), seen({ trailing: promise(due) }), t)).toBeNull();
    expect(decideFromMemo(write(at, { shardCreatedUs: old }), seen({ parentExists: false }), t)).toBeNull();
    expect(decideFromMemo(write(at, { countChanged: false }), seen(), t)).toEqual({ kind: "skip", reason: "unchanged" });
  });
});

describe("the chain's end: nothing applied between two sums", () => {
  const mark = { total: 5, writes: 12, shards: 4 };

  it("ends only when the total, the applied writes and the shards are all the same", () => {
    expect(nothingApplied(mark, { ...mark })).toBe(true);
    expect(nothingApplied(mark, { ...mark, writes: 13 })).toBe(false); // an increment
    expect(nothingApplied(mark, { ...mark, total: 0 })).toBe(false); // a reset's subtraction
    expect(nothingApplied(mark, { ...mark, shards: 2 })).toBe(false); // a reshard's fold
    expect(nothingApplied(null, mark)).toBe(false);
    expect(nothingApplied(mark, null)).toBe(false);
  });

  it("reads what the parent's last commit summed from its load, measured with the sum its total holds", () => {
    const at = T0_MS * 1000;
    const load = { readUs: at, writes: 12, hot: null };
    const committed = view({ coveredUntilUs: at, lastCommitUs: at + 3, updatedUs: at + 3, load, total: 5, numShards: 4 });
    expect(markOfParent(committed)).toEqual(mark);
    // Measured with another sum than the total's (a reset moved the read time), or deleted (a reset, a reshard).
    expect(markOfParent({ ...committed, load: { ...load, readUs: at - 1 } })).toBeNull();
    expect(markOfParent({ ...committed, load: null })).toBeNull();
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
