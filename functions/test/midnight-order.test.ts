// Where a counter's `rollup.windowsMoveAt` lies after its midnight (model/midnight-order.ts): within the
// millisecond, the same for the same id and midnight, another one the next midnight, and spread evenly over
// ids that count up, so the midnight commit's query (ordered by it) visits them all over the key space.
import { midnightBoundUs, moveAtSpreadUs, SPREAD_US, storedMoveAtUs } from "../src/model/midnight-order";
import { dayStartMs } from "../src/model/windows";

const MIDNIGHT = dayStartMs("2027-03-15");
const ids = Array.from({ length: 10_000 }, (_, i) => `post-${String(i).padStart(6, "0")}-views`);

describe("the midnight commit's order", () => {
  it("puts every counter within the millisecond after its midnight, the same for the same id and midnight", () => {
    for (const id of ids.slice(0, 100)) {
      const spread = moveAtSpreadUs(id, MIDNIGHT);
      expect(spread).toBeGreaterThanOrEqual(0);
      expect(spread).toBeLessThan(SPREAD_US);
      expect(Number.isInteger(spread)).toBe(true);
      expect(moveAtSpreadUs(id, MIDNIGHT)).toBe(spread);
      expect(storedMoveAtUs(id, MIDNIGHT)).toBe(MIDNIGHT * 1000 + spread);
      // Every reader takes the stored value's millisecond: the midnight.
      expect(Math.floor(storedMoveAtUs(id, MIDNIGHT) / 1000)).toBe(MIDNIGHT);
    }
  });

  it("bounds the query at the whole millisecond of its time: every counter of that midnight, none of the next", () => {
    expect(Math.max(...ids.map((id) => storedMoveAtUs(id, MIDNIGHT)))).toBeLessThanOrEqual(midnightBoundUs(MIDNIGHT));
    expect(midnightBoundUs(MIDNIGHT - 1)).toBeLessThan(MIDNIGHT * 1000);
  });

  it("spreads ids that count up evenly over the spread, and in another order the next midnight", () => {
    const buckets = new Array<number>(10).fill(0);
    for (const id of ids) buckets[Math.floor(moveAtSpreadUs(id, MIDNIGHT) / (SPREAD_US / 10))]! += 1;
    for (const n of buckets) expect(Math.abs(n - ids.length / 10)).toBeLessThan(ids.length / 10 / 5);
    const order = (midnight: number) => [...ids].sort((a, b) => storedMoveAtUs(a, midnight) - storedMoveAtUs(b, midnight) || (a < b ? -1 : 1));
    const tonight = order(MIDNIGHT);
    // How far apart in the key space (the ids' own order) two counters visited one after the other lie: 1 in
    // document-name order; here half of them lie more than a twentieth of the ids apart (the ids of one
    // spread value are about a thousandth of all, spread over every id).
    const rank = new Map(ids.map((id, i) => [id, i]));
    const gaps = tonight.slice(1).map((id, i) => Math.abs(rank.get(id)! - rank.get(tonight[i]!)!)).sort((a, b) => a - b);
    expect(gaps[Math.floor(gaps.length / 2)]!).toBeGreaterThan(ids.length / 20);
    expect(order(MIDNIGHT + 86_400_000)).not.toEqual(tonight);
  });
});
