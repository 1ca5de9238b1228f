// LEADERBOARDS' rules (model/leaderboard-rules.ts) and a board's data (model/board.ts), table-driven: what
// parses, which board a counter is on, every refusal naming the param, the rule and what is wrong (a counter
// id two rules would name included), and the parts of a rank: the summary as read, the bucket of a total,
// what a rank counts and when a write of a total carries the counter's entry.
import { boardOf, describeBoardRule, parseLeaderboardRules, rulesOfBoard } from "../src/model/leaderboard-rules";
import { bucketOf, EMPTY_SUMMARY, entryDue, entryKey, rankFrom, rankQuery, summaryOf } from "../src/model/board";
import { PatternError } from "../src/model/patterns";

describe("parseLeaderboardRules", () => {
  it("parses rules, several of one board included, and puts each counter on the board of the rule that names it", () => {
    const rules = parseLeaderboardRules("LEADERBOARDS", " points=user-{uid}-points , posts=post-{id}-likes,points=team-{t}-points,solo=site-visits");
    expect(rules.map(describeBoardRule)).toEqual(["points <- user-{uid}-points", "posts <- post-{id}-likes", "points <- team-{t}-points", "solo <- site-visits"]);
    expect(boardOf(rules, "user-alice-points")).toBe("points");
    expect(boardOf(rules, "team-red-points")).toBe("points");
    expect(boardOf(rules, "post-42-likes")).toBe("posts");
    expect(boardOf(rules, "site-visits")).toBe("solo");
    expect(boardOf(rules, "user--points")).toBeUndefined();
    expect(boardOf(rules, "post-42-views")).toBeUndefined();
    expect(rulesOfBoard(rules, "points").map((r) => r.source)).toEqual(["points=user-{uid}-points", "points=team-{t}-points"]);
    expect(rulesOfBoard(rules, "none")).toEqual([]);
  });

  it("takes an empty value as no board", () => {
    expect(parseLeaderboardRules("LEADERBOARDS", "")).toEqual([]);
    expect(parseLeaderboardRules("LEADERBOARDS", "  ")).toEqual([]);
  });

  it.each([
    ["points", /rule 1 "points" has no "=": write BOARD=COUNTER_ID_PATTERN/],
    ["=user-{uid}-points", /rule 1 "=user-\{uid\}-points" has a board name "" that is not 1-64 characters/],
    ["my board=user-{uid}-points", /board name "my board"/],
    [`${"b".repeat(65)}=user-{uid}-points`, /board name "b{65}"/],
    ["points=user/{uid}", /rule 1 "points=user\/\{uid\}" has a counter-id pattern "user\/\{uid\}" that has "\/"/],
    ["points=", /counter-id pattern "" that is empty/],
    ["points=a=b", /more than one "="/],
    ["points=user-{uid}-points,", /rule 2 "" is empty/],
    ["points=user-{uid}-points,posts={id}-points", /rule 2 "posts=\{id\}-points" names counter ids that rule 1 \(points=user-\{uid\}-points\) names too: such a counter would be on two boards \(points and posts\)/],
    ["points=user-{uid}-points,points=user-{x}", /rule 2 .* board points twice/],
    ["a=site-visits,b=site-{x}", /rule 2 "b=site-\{x\}" names counter ids that rule 1 \(a=site-visits\)/],
  ])("refuses %p naming the param, the rule and the problem", (value, message) => {
    let error: unknown;
    try {
      parseLeaderboardRules("LEADERBOARDS", value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PatternError);
    expect((error as Error).message).toMatch(/^LEADERBOARDS: /);
    expect((error as Error).message).toMatch(message);
  });

  it("lets rules whose ids cannot coincide stand side by side", () => {
    expect(() => parseLeaderboardRules("LEADERBOARDS", "a=user-{uid}-points,b=user-{uid}-likes,c=post-{id}-points,d=user-x")).not.toThrow();
  });
});

describe("a board's summary", () => {
  it("reads what the rollup wrote, and anything else as a board before its first summary", () => {
    expect(summaryOf({ of: 5, bounds: [10, 20], counts: [1, 3, 1], rollup: {} })).toEqual({ of: 5, bounds: [10, 20], counts: [1, 3, 1] });
    expect(summaryOf({ of: 0, bounds: [], counts: [0] })).toEqual(EMPTY_SUMMARY);
    for (const bad of [undefined, null, 3, {}, { of: 2, bounds: [1], counts: [1] }, { of: 2, bounds: [2, 1], counts: [1, 1, 0] }, { of: 3, bounds: [1], counts: [1, 1] }, { of: 2, bounds: [1.5], counts: [1, 1] }, { of: 0, bounds: [1], counts: [1, -1] }]) {
      expect(summaryOf(bad)).toEqual(EMPTY_SUMMARY);
    }
  });

  it.each([
    [[], 7, 0],
    [[10, 20], -5, 0],
    [[10, 20], 9, 0],
    [[10, 20], 10, 1],
    [[10, 20], 19, 1],
    [[10, 20], 20, 2],
    [[10, 20], 1e9, 2],
  ])("puts a total in its bucket: bounds %p, total %p -> bucket %p", (bounds, total, bucket) => {
    expect(bucketOf(bounds, total)).toBe(bucket);
  });

  it("ranks by the buckets above and one count inside the total's own bucket, and counts nothing when nothing can be above within it", () => {
    const summary = { of: 10, bounds: [10, 20, 21], counts: [4, 3, 2, 1] };
    expect(rankQuery(summary, 12)).toEqual({ above: 3, count: { greaterThan: 12, lessThan: 20 } });
    expect(rankQuery(summary, 19)).toEqual({ above: 3, count: null });
    expect(rankQuery(summary, 20)).toEqual({ above: 1, count: null });
    expect(rankQuery(summary, 25)).toEqual({ above: 0, count: { greaterThan: 25, lessThan: null } });
    expect(rankQuery(summary, -3)).toEqual({ above: 6, count: { greaterThan: -3, lessThan: 10 } });
    expect(rankFrom(rankQuery(summary, 12), 2)).toBe(6);
    expect(rankQuery(EMPTY_SUMMARY, 0)).toEqual({ above: 0, count: { greaterThan: 0, lessThan: null } });
  });

  it("names an entry by a hash that is stable, 32 hex characters and not the counter id", () => {
    expect(entryKey("user-alice-points")).toMatch(/^[0-9a-f]{32}$/);
    expect(entryKey("user-alice-points")).toBe(entryKey("user-alice-points"));
    expect(entryKey("user-alice-points")).not.toBe(entryKey("user-bob-points"));
  });

  it.each([
    [undefined, undefined, 1, 2, false],
    ["points", "points", 3, 3, false],
    ["points", "points", 3, 4, true],
    ["points", undefined, 3, 3, true],
    ["points", null, 0, 0, true],
    ["points", "old", 3, 3, true],
    ["points", "points", null, 0, true],
  ])("carries the entry with a write of the total: board %p, parent's board %p, %p -> %p: %p", (board, parentBoard, before, after, due) => {
    expect(entryDue(board, parentBoard, before, after)).toBe(due);
  });
});
