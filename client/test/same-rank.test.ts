// One table, two implementations: the client's reading of a leaderboard's summary and its rank query
// (client/src/board.ts) and the functions' (functions/src/model/board.ts), which the client cannot import
// (docs/development.md, "One day module, two copies held together"). The same summary read from what a board
// document may hold, the same bucket for a total, the same query and the same rank.
import * as functionsBoard from "../../functions/src/model/board";
import * as client from "../src/board";

const DOCUMENTS: unknown[] = [
  undefined,
  null,
  7,
  {},
  { of: 0, bounds: [], counts: [0] },
  { of: 9, bounds: [10, 20, 21], counts: [4, 3, 1, 1], rollup: {} },
  { of: 5, bounds: [-3], counts: [2, 3] },
  { of: 2, bounds: [1], counts: [1] },
  { of: 2, bounds: [2, 1], counts: [1, 1, 0] },
  { of: 3, bounds: [1], counts: [1, 1] },
  { of: 2, bounds: [1.5], counts: [1, 1] },
  { of: 0, bounds: [1], counts: [1, -1] },
  { of: "2", bounds: [1], counts: [1, 1] },
];

const TOTALS = [-1e15, -4, -3, 0, 1, 9, 10, 11, 19, 20, 21, 22, 1e15];

describe("the client's rank and the functions' agree", () => {
  it.each(DOCUMENTS.map((d) => [JSON.stringify(d), d]))("on %s", (_text, data) => {
    const mine = client.summaryOf(data);
    expect(mine).toEqual(functionsBoard.summaryOf(data));
    for (const total of TOTALS) {
      expect(client.bucketOf(mine.bounds, total)).toBe(functionsBoard.bucketOf(mine.bounds, total));
      const query = client.rankQuery(mine, total);
      expect(query).toEqual(functionsBoard.rankQuery(mine, total));
      for (const counted of [0, 1, 7]) expect(client.rankFrom(query, counted)).toBe(functionsBoard.rankFrom(query, counted));
    }
  });

  it("read an empty board alike", () => {
    expect(client.EMPTY_SUMMARY).toEqual(functionsBoard.EMPTY_SUMMARY);
  });
});
