// Counter-id patterns (model/patterns.ts), table-driven: what parses, what each pattern matches and
// binds, and that every bad pattern is refused with a message naming the param, its position and text.
import {
  fillTemplate,
  matchTemplate,
  matchesAny,
  matchesEveryIdOf,
  parseCounterIdPattern,
  parseCounterIdPatterns,
  parseTemplate,
  PatternError,
  splitList,
} from "../src/model/patterns";

describe("parseCounterIdPattern", () => {
  it.each([
    ["post-{id}-likes", { prefix: "post-", placeholder: "id", suffix: "-likes" }],
    ["{id}", { prefix: "", placeholder: "id", suffix: "" }],
    ["likes-{postId}", { prefix: "likes-", placeholder: "postId", suffix: "" }],
    ["{post_id}_votes", { prefix: "", placeholder: "post_id", suffix: "_votes" }],
    ["site-views", { prefix: "site-views", placeholder: null, suffix: "" }],
    ["A_b-9{_x1}Z", { prefix: "A_b-9", placeholder: "_x1", suffix: "Z" }],
  ])("parses %p", (text, expected) => {
    expect(parseCounterIdPattern(text)).toEqual({ source: text, ...expected });
  });

  it.each([
    ["", /is empty/],
    ["post-{id", /"\{" that is never closed/],
    ["post-id}", /"\}" without a "\{"/],
    ["post-}{id", /"\}" without a "\{"/],
    ["{a}-{b}", /more than one placeholder/],
    ["{a{b}}", /"\{" inside a placeholder/],
    ["post-{}-likes", /placeholder "\{\}" whose name is not an identifier/],
    ["post-{1d}-likes", /placeholder "\{1d\}"/],
    ["post-{i d}-likes", /placeholder "\{i d\}"/],
    ["posts/{id}", /"\/", which is not a counter-id character/],
    ["post.{id}", /"\.", which is not a counter-id character/],
    ["post {id}", /" ", which is not a counter-id character/],
    ["post-*", /"\*", which is not a counter-id character/],
    ["likes-é{id}", /"é"/],
    [`${"a".repeat(128)}{id}`, /can never match: it needs 129 characters/],
    ["a".repeat(129), /can never match/],
  ])("refuses %p", (text, message) => {
    expect(() => parseCounterIdPattern(text)).toThrow(message);
  });

  it("accepts the longest pattern that can still match a 128-character id", () => {
    expect(parseCounterIdPattern(`${"a".repeat(127)}{id}`).prefix).toHaveLength(127);
    expect(parseCounterIdPattern("a".repeat(128)).placeholder).toBeNull();
  });
});

describe("matchTemplate", () => {
  const likes = parseCounterIdPattern("post-{id}-likes");
  it.each([
    ["post-42-likes", { id: "42" }],
    ["post-a_B-9-likes", { id: "a_B-9" }],
    ["post---likes", { id: "-" }],
    ["post--likes", null], // the placeholder matches at least one character
    ["post-42-likes2", null],
    ["xpost-42-likes", null],
    ["post-4/2-likes", null],
    ["post-4.2-likes", null],
    ["post-42-views", null],
    ["", null],
  ])("post-{id}-likes against %p → %p", (id, expected) => {
    expect(matchTemplate(likes, id)).toEqual(expected);
  });

  it("matches a literal pattern exactly, with an empty binding", () => {
    const literal = parseCounterIdPattern("site-views");
    expect(matchTemplate(literal, "site-views")).toEqual({});
    expect(matchTemplate(literal, "site-views-2")).toBeNull();
    expect(matchTemplate(literal, "site-view")).toBeNull();
  });

  it("matches every id with {id} alone", () => {
    const all = parseCounterIdPattern("{id}");
    expect(matchTemplate(all, "x")).toEqual({ id: "x" });
    expect(matchTemplate(all, "AbC_-1")).toEqual({ id: "AbC_-1" });
    expect(matchTemplate(all, "")).toBeNull();
  });
});

describe("fillTemplate", () => {
  it("puts a binding's value where the placeholder is, and leaves a literal as it is", () => {
    const path = parseTemplate("posts/{id}", /^[^{}]$/, "a path character");
    expect(fillTemplate(path, { id: "42" })).toBe("posts/42");
    expect(fillTemplate(parseCounterIdPattern("site"), {})).toBe("site");
    expect(() => fillTemplate(path, { other: "1" })).toThrow(/no value for the placeholder \{id\}/);
  });

  it("round-trips a counter id through the binding it matched with", () => {
    const pattern = parseCounterIdPattern("c-{x}-y");
    expect(fillTemplate(pattern, matchTemplate(pattern, "c-123-y")!)).toBe("c-123-y");
  });
});

describe("splitList", () => {
  it.each([
    ["", []],
    ["   ", []],
    ["a", ["a"]],
    ["a,b", ["a", "b"]],
    [" a , b ", ["a", "b"]],
    ["a,,b", ["a", "", "b"]],
    ["a,", ["a", ""]],
  ])("%p → %p", (value, expected) => {
    expect(splitList(value)).toEqual(expected);
  });
});

describe("parseCounterIdPatterns (a param's value)", () => {
  it("parses an empty value as no patterns", () => {
    expect(parseCounterIdPatterns("UNIQUE_COUNTERS", "")).toEqual([]);
  });

  it("parses comma-separated patterns, trimmed", () => {
    const patterns = parseCounterIdPatterns("UNIQUE_COUNTERS", "post-{id}-likes, comment-{c}-votes ,poll");
    expect(patterns.map((p) => p.source)).toEqual(["post-{id}-likes", "comment-{c}-votes", "poll"]);
    expect(matchesAny(patterns, "comment-7-votes")).toBe(true);
    expect(matchesAny(patterns, "poll")).toBe(true);
    expect(matchesAny(patterns, "post-7-views")).toBe(false);
    expect(matchesAny([], "anything")).toBe(false);
  });

  it.each([
    ["post-{id", 1, /UNIQUE_COUNTERS: pattern 1 "post-\{id" has a "\{" that is never closed/],
    ["ok-{id},posts/{id}", 2, /UNIQUE_COUNTERS: pattern 2 "posts\/\{id\}" has "\/"/],
    ["a,,b", 2, /UNIQUE_COUNTERS: pattern 2 "" is empty/],
    ["a,", 2, /pattern 2 "" is empty/],
    ["a,b,{x}{y}", 3, /pattern 3 "\{x\}\{y\}" has more than one placeholder/],
  ])("refuses %p, naming pattern %p", (value, position, message) => {
    let error: unknown;
    try {
      parseCounterIdPatterns("UNIQUE_COUNTERS", value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PatternError);
    expect((error as PatternError).position).toBe(position);
    expect((error as PatternError).message).toMatch(message);
  });

  it("names the param it was given", () => {
    expect(() => parseCounterIdPatterns("MIRRORS", "x{")).toThrow(/^MIRRORS: pattern 1/);
  });

  it("parses a value once and answers again from memory, errors included", () => {
    const first = parseCounterIdPatterns("UNIQUE_COUNTERS", "memo-{id}");
    expect(parseCounterIdPatterns("UNIQUE_COUNTERS", "memo-{id}")).toBe(first);
    let a: unknown;
    let b: unknown;
    try {
      parseCounterIdPatterns("UNIQUE_COUNTERS", "bad{");
    } catch (e) {
      a = e;
    }
    try {
      parseCounterIdPatterns("UNIQUE_COUNTERS", "bad{");
    } catch (e) {
      b = e;
    }
    expect(a).toBeInstanceOf(PatternError);
    expect(b).toBe(a);
  });

  it("cuts a very long bad pattern short in the message", () => {
    expect(() => parseCounterIdPatterns("UNIQUE_COUNTERS", `${"x".repeat(500)}/`)).toThrow(
      new RegExp(`pattern 1 "${"x".repeat(80)}" has "/"`),
    );
  });
});

describe("matchesEveryIdOf", () => {
  const p = (text: string) => parseCounterIdPattern(text);

  it.each([
    ["{id}", "post-{x}-likes", true],
    ["post-{id}", "post-{x}-likes", true],
    ["{id}-likes", "post-{x}-likes", true],
    ["post-{id}-likes", "post-{x}-likes", true],
    ["post-{id}-likes", "post-{x}-old-likes", true],
    ["post-{id}-likes", "post-42-likes", true],
    ["site", "site", true],
    ["post-{id}-likes", "post-{x}", false],
    ["post-{id}-likes", "{x}-likes", false],
    ["post-{id}", "pos{x}", false],
    ["post-{id}-likes", "post--likes", false],
    ["site", "{x}", false],
    ["site", "site2", false],
    ["a{id}", "a", false],
  ])("%s matches every id of %s: %s", (wide, narrow, expected) => {
    expect(matchesEveryIdOf(p(wide), p(narrow))).toBe(expected);
  });

  it("agrees with matchTemplate on sample ids (a placeholder takes 1+ id characters)", () => {
    const patterns = ["{a}", "p-{a}", "{a}-l", "p-{a}-l", "p-{a}-x-l", "p-1-l", "p-{a}x", "p{a}"].map(p);
    const samples = ["p-1-l", "p--l", "p-x-l", "p-1-x-l", "p-_-l", "p-1-lx", "q-1-l", "p-", "p-1x", "p1"];
    for (const wide of patterns) {
      for (const narrow of patterns) {
        const ids = samples.filter((id) => matchTemplate(narrow, id) !== null);
        if (matchesEveryIdOf(wide, narrow)) expect(ids.filter((id) => matchTemplate(wide, id) === null)).toEqual([]);
      }
    }
  });
});
