// Workload 11's pure parts (scripts/bench/workloads/documents-measure.ts and the usual ±1 trigger's decision in
// scripts/bench/naive/src/documents.ts): what a write changes in the count, the writer's mix, the drift against
// the documents, the drift the usual trigger must show for its duplicates, each counted change's lag (kept by
// records, kept by recount), and every recounted version held to the count of its documents at its read time.
import { naiveDelta } from "../bench/naive/src/documents";
import { seededRandom } from "../bench/pace";
import {
  applyOperation,
  countOf,
  driftOf,
  exactSinceUs,
  expectedNaiveDrift,
  naiveLags,
  nextOperation,
  oursHops,
  oursLags,
  recountLags,
  recountStatesOff,
  truthOf,
  type CommentWrite,
} from "../bench/workloads/documents-measure";

const published = { status: "published", text: "a" };
const draft = { status: "draft", text: "a" };

function write(over: Partial<CommentWrite>): CommentWrite {
  return { counterId: "c", path: "posts/1/comments/a", delta: 1, version: "2026-01-01T00:00:01.000000000Z", writtenAtUs: 1_000_000, deliveries: 1, ...over };
}

describe("the usual ±1 trigger's decision", () => {
  it("adds 1 when a published comment appears (created or published) and takes 1 when it goes (deleted or unpublished)", () => {
    expect(naiveDelta(undefined, published)).toBe(1);
    expect(naiveDelta(draft, published)).toBe(1);
    expect(naiveDelta(published, undefined)).toBe(-1);
    expect(naiveDelta(published, draft)).toBe(-1);
  });

  it("writes nothing for an edit, a draft created or deleted", () => {
    expect(naiveDelta(published, { ...published, text: "b" })).toBe(0);
    expect(naiveDelta(undefined, draft)).toBe(0);
    expect(naiveDelta(draft, undefined)).toBe(0);
  });
});

describe("the writer's mix", () => {
  it("creates a missing comment, and on an existing one deletes, toggles or edits it, each changing the count as the trigger sees it", () => {
    const random = seededRandom(7);
    const kinds = new Set<string>();
    let data: Record<string, unknown> | undefined;
    for (let i = 0; i < 400; i++) {
      const op = nextOperation(data, random);
      kinds.add(op.kind);
      if (data === undefined) expect(op.kind).toBe("create");
      else expect(op.kind).not.toBe("create");
      const next = applyOperation(data, op, `t${i}`);
      if (op.kind === "edit") expect(countOf(next)).toBe(countOf(data));
      if (op.kind === "toggle") expect(countOf(next)).toBe(1 - countOf(data));
      if (op.kind === "delete") expect(next).toBeUndefined();
      expect(countOf(next) - countOf(data)).toBe(naiveDelta(data, next));
      data = next;
    }
    expect([...kinds].sort()).toEqual(["create", "delete", "edit", "toggle"]);
  });
});

describe("drift against the documents", () => {
  it("counts each counter's published comments, and sets each total against them, net and in absolute value", () => {
    const truth = truthOf(
      new Map([
        ["p/1/comments/a", { counterId: "one", data: published }],
        ["p/1/comments/b", { counterId: "one", data: draft }],
        ["p/1/comments/c", { counterId: "one", data: undefined }],
        ["p/2/comments/a", { counterId: "two", data: published }],
      ]),
    );
    expect(truth).toEqual(new Map([["one", 1], ["two", 1]]));
    expect(driftOf(new Map([["one", 1], ["two", 1]]), truth)).toEqual({ net: 0, absolute: 0, counters: 0 });
    expect(driftOf(new Map([["one", 2], ["two", 0]]), truth)).toEqual({ net: 0, absolute: 2, counters: 2 });
    // A counter never created holds 0.
    expect(driftOf(new Map([["one", 1]]), truth)).toEqual({ net: -1, absolute: 1, counters: 1 });
  });

  it("expects the usual trigger off by every extra delivery of a counted change, a +1 and a −1 of one counter cancelling", () => {
    const expected = expectedNaiveDrift([
      write({ counterId: "one", delta: 1, deliveries: 2 }),
      write({ counterId: "one", delta: -1, deliveries: 2 }),
      write({ counterId: "two", delta: 1, deliveries: 3 }),
      write({ counterId: "two", delta: 0, deliveries: 2 }),
      write({ counterId: "three", delta: -1, deliveries: 1 }),
    ]);
    expect(expected.perCounter).toEqual(new Map([["one", 0], ["two", 2]]));
    expect(expected.absolute).toBe(2);
    expect(expected.duplicatedCounted).toBe(4);
  });
});

describe("lag of a counted change", () => {
  it("ours: to the first parent state whose read time covers the record state that applied it (its own, or a later write's)", () => {
    const w = write({ writtenAtUs: 1_000_000, version: "2026-01-01T00:00:01.000000000Z" });
    const records = new Map([["posts/1/comments/a", [{ path: "posts/1/comments/a", version: "2026-01-01T00:00:01.000000000Z", counted: 1, atUs: 1_400_000 }]]]);
    const parents = new Map([
      [
        "c",
        [
          { atUs: 1_300_000, total: 0, coveredUntilUs: 1_300_000 },
          { atUs: 2_100_000, total: 1, coveredUntilUs: 2_000_000 },
        ],
      ],
    ]);
    expect(oursLags([w], records, parents)).toMatchObject({ count: 1, p50: 1100, uncovered: 0 });
    // Applied by a later write's observation (a delete, versioned just after the create), the create's event covered.
    const later = new Map([["posts/1/comments/a", [{ path: "posts/1/comments/a", version: "2026-01-01T00:00:01.000000000Z+", counted: 1, atUs: 1_900_000 }]]]);
    expect(oursLags([w], later, parents)).toMatchObject({ count: 1, p50: 1100 });
    // No record of it yet, or no total that covers it: never in the total.
    expect(oursLags([w], new Map(), parents)).toMatchObject({ count: 0, uncovered: 1 });
    const older = new Map([["posts/1/comments/a", [{ path: "posts/1/comments/a", version: "2026-01-01T00:00:00.500000000Z", counted: 1, atUs: 900_000 }]]]);
    expect(oursLags([w], older, parents)).toMatchObject({ count: 0, uncovered: 1 });
    // Writes that change no count have no lag.
    expect(oursLags([{ ...w, delta: 0 }], records, parents)).toMatchObject({ count: 0, uncovered: 0 });
    // Undone before its events came (published, then unpublished; the unpublish applied first): the record never
    // counted it and no shard moved, so the total held it when the record did.
    const undone = new Map([["posts/1/comments/a", [{ path: "posts/1/comments/a", version: "2026-01-01T00:00:02.000000000Z", counted: 0, atUs: 2_500_000 }]]]);
    expect(oursLags([w], undone, parents)).toMatchObject({ count: 1, p50: 1500, uncovered: 0 });
    // A state that moved nothing after one that did: the total holds it once it covers the one that did, and not before it applied.
    const after = new Map([["posts/1/comments/a", [records.get("posts/1/comments/a")![0]!, { path: "posts/1/comments/a", version: "2026-01-01T00:00:03.000000000Z", counted: 1, atUs: 2_600_000 }]]]);
    expect(oursLags([{ ...w, version: "2026-01-01T00:00:02.500000000Z" }], after, parents)).toMatchObject({ count: 1, p50: 1600 });
    // The lag's two hops: to the shard write that applied it, and from there to the total.
    expect(oursHops([w], records, parents)).toMatchObject({ toShard: { count: 1, p50: 400 }, shardToTotal: { count: 1, p50: 700 } });
  });

  it("ours kept by recount: to the first parent state whose read time is at or after the write, with no record or shard", () => {
    const parents = new Map([
      [
        "c",
        [
          { atUs: 900_000, total: 0, coveredUntilUs: 899_000 },
          { atUs: 1_300_000, total: 1, coveredUntilUs: 1_000_000 },
          { atUs: 2_100_000, total: 2, coveredUntilUs: 2_000_000 },
        ],
      ],
    ]);
    // A read time equal to the write's commit time holds it (the count at that time sees the write).
    expect(recountLags([write({ writtenAtUs: 1_000_000 })], parents)).toMatchObject({ count: 1, p50: 300, uncovered: 0 });
    expect(recountLags([write({ writtenAtUs: 1_000_001 })], parents)).toMatchObject({ count: 1, p50: 1099.999, uncovered: 0 });
    // After the last read time, or on a counter no state was seen of: never in the total.
    expect(recountLags([write({ writtenAtUs: 2_000_001 }), write({ counterId: "other" })], parents)).toMatchObject({ count: 0, uncovered: 2 });
    // Writes that change no count have no lag.
    expect(recountLags([write({ delta: 0, writtenAtUs: 2_500_000 })], parents)).toMatchObject({ count: 0, uncovered: 0 });
  });

  it("every recounted version holds what existed before the load and the writes committed at or before its read time", () => {
    const writes = [write({ writtenAtUs: 1_000_000, delta: 1 }), write({ writtenAtUs: 1_500_000, delta: 1 }), write({ writtenAtUs: 1_700_000, delta: -1 }), write({ writtenAtUs: 1_800_000, delta: 0 })];
    const base = new Map([["c", 5]]);
    const exact = [
      { atUs: 800_000, total: 0, coveredUntilUs: null },
      { atUs: 1_100_000, total: 6, coveredUntilUs: 1_000_000 },
      { atUs: 1_600_000, total: 7, coveredUntilUs: 1_599_999 },
      { atUs: 2_000_000, total: 6, coveredUntilUs: 1_900_000 },
    ];
    expect(recountStatesOff(writes, new Map([["c", exact]]), base)).toEqual({ states: 3, off: 0 });
    // A total one off at its read time (the write at 1,500,000 µs not yet in it, though read after it) is counted.
    const wrong = exact.map((p) => (p.atUs === 1_600_000 ? { ...p, total: 6 } : p));
    expect(recountStatesOff(writes, new Map([["c", wrong]]), base)).toEqual({ states: 3, off: 1 });
    // Without what existed before, every version is off.
    expect(recountStatesOff(writes, new Map([["c", exact]]), new Map())).toEqual({ states: 3, off: 3 });
  });

  it("the usual trigger: to its update on the first delivery", () => {
    expect(naiveLags([write({ naiveAppliedAtUs: 1_250_000 }), write({ delta: 0 }), write({})])).toMatchObject({ count: 1, p50: 250, uncovered: 1 });
  });

  it("a total is exact from the first state of its last run of exact states", () => {
    const states = [
      { atUs: 1, total: 2, coveredUntilUs: null },
      { atUs: 2, total: 1, coveredUntilUs: null },
      { atUs: 3, total: 2, coveredUntilUs: null },
      { atUs: 4, total: 2, coveredUntilUs: null },
    ];
    expect(exactSinceUs(states, 2)).toBe(3);
    expect(exactSinceUs(states, 1)).toBeNull();
  });
});
