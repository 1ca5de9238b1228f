// The instance's memos (rollup/commit.ts, BoundedMemo): a leading edge and a remembered parent per counter,
// at most MEMO_MAX counters, the least recently set forgotten first, so a long-lived instance that sees many
// counters never holds more than the bound, and the counters it is busy with stay.
import { BoundedMemo, MEMO_MAX } from "../src/rollup/commit";

describe("BoundedMemo", () => {
  it("keeps at most its bound, forgetting the counter set longest ago", () => {
    const memo = new BoundedMemo<number>(3);
    for (const id of ["a", "b", "c", "d"]) memo.set(id, 1);
    expect([...memo.keys()]).toEqual(["b", "c", "d"]);
  });

  it("makes a counter set again the most recent, without forgetting another", () => {
    const memo = new BoundedMemo<number>(3);
    for (const id of ["a", "b", "c"]) memo.set(id, 1);
    memo.set("a", 2);
    expect([...memo.entries()]).toEqual([["b", 1], ["c", 1], ["a", 2]]);
    memo.set("d", 1);
    expect([...memo.keys()]).toEqual(["c", "a", "d"]);
  });

  it("is bounded by MEMO_MAX unless told otherwise", () => {
    const memo = new BoundedMemo<number>();
    for (let i = 0; i < MEMO_MAX + 10; i++) memo.set(`counter-${i}`, i);
    expect(memo.size).toBe(MEMO_MAX);
    expect(memo.has("counter-9")).toBe(false);
    expect(memo.has(`counter-${MEMO_MAX + 9}`)).toBe(true);
  });
});
