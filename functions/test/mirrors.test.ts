// MIRRORS rules (model/mirror-rules.ts): what parses, what is refused with which message, and which targets
// a counter id maps to. Pure: no emulator.
import { mirrorTargets, parseMirrorRules } from "../src/model/mirror-rules";
import { PatternError } from "../src/model/patterns";

const parse = (value: string) => parseMirrorRules("MIRRORS", value);

/** What parsing `value` throws. */
function errorOf(value: string): unknown {
  try {
    parse(value);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("parseMirrorRules", () => {
  it("reads the docs/mirrors.md example: two rules, a placeholder on both sides, a nested field", () => {
    const rules = parse("post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:stats.views");
    expect(rules.map((r) => [r.counter.source, r.document.source, r.field])).toEqual([
      ["post-{id}-likes", "posts/{id}", "likeCount"],
      ["post-{id}-views", "posts/{id}", "stats.views"],
    ]);
  });

  it("treats an empty or blank value as no rules", () => {
    expect(parse("")).toEqual([]);
    expect(parse("   ")).toEqual([]);
  });

  it("trims spaces around rules and their parts", () => {
    expect(parse(" a-{x} = stats/{x} : n ")[0]).toMatchObject({ field: "n", document: { source: "stats/{x}" } });
  });

  it("accepts literal rules and deeper document paths", () => {
    expect(parse("site-visits=stats/site:visits")).toHaveLength(1);
    expect(parse("c-{id}=users/u1/posts/{id}:n")).toHaveLength(1);
    expect(parse("c-{id}=posts/p-{id}-x:n")).toHaveLength(1);
  });

  it.each([
    ["no =", "post-{id}-likes:posts/{id}:n", 'rule 1 "post-{id}-likes:posts/{id}:n" has no "="'],
    ["two =", "a={id}=b/{id}:n", 'has more than one "="'],
    ["no :", "post-{id}=posts/{id}", 'has no ":" between the document path and the field path'],
    ["two :", "post-{id}=posts/{id}:a:b", 'has more than one ":"'],
    ["a placeholder only on the counter side", "post-{id}-likes=posts/p1:n", "uses {id} in the counter-id pattern but not in the document path"],
    ["a placeholder only on the path side", "post-likes=posts/{id}:n", "uses {id} in the document path but not in the counter-id pattern"],
    ["different placeholder names", "post-{id}=posts/{postId}:n", "names the placeholder {id} in the counter-id pattern but {postId} in the document path"],
    ["an odd number of segments", "post-{id}=posts/{id}/likes:n", 'has a document path "posts/{id}/likes" with 3 segments'],
    ["an empty segment", "post-{id}=posts//{id}:n", "with an empty segment"],
    ["a target among the counters", "c-{id}=counters/{id}:n", "in the counters collection"],
    ["a bad counter-id pattern", "post {id}=posts/{id}:n", 'has a counter-id pattern "post {id}" that has " "'],
    ["a bad path character", "post-{id}=posts/{id}.x:n", 'has a document path "posts/{id}.x" that has "."'],
    ["an empty field path", "post-{id}=posts/{id}:", "has an empty field path"],
    ["an invalid field path", "post-{id}=posts/{id}:stats..views", 'has a field path "stats..views" that is not valid'],
    ["a field starting with a digit", "post-{id}=posts/{id}:1st", 'has a field path "1st" that is not valid'],
    ["an empty rule", "a-{x}=b/{x}:n,,c-{x}=d/{x}:n", 'rule 2 "" is empty'],
    // A placeholder in the first segment can be filled to read "counters": counter `counters-likes` would
    // write counters/summary.total, the total of the counter `summary`.
    ["a placeholder that can fill the first segment with counters", "{c}-likes={c}/summary:total", 'whose first segment becomes "counters" when {c} is "counters"'],
    ["a first segment that a placeholder can complete to counters", "x-{c}=count{c}/s:n", 'first segment becomes "counters" when {c} is "ers"'],
    ["a first segment that a placeholder can start as counters", "x-{c}={c}ers/s:n", 'when {c} is "count"'],
  ])("refuses %s, naming the rule", (_name, value, message) => {
    const error = errorOf(value);
    expect(error).toBeInstanceOf(PatternError);
    expect((error as Error).message).toContain("MIRRORS: rule ");
    expect((error as Error).message).toContain(message);
  });
});

describe("rules that could write one field for two counters", () => {
  it.each([
    ["the same field for two counter patterns", "post-{id}-likes=posts/{id}:n,post-{id}-views=posts/{id}:n", 2, 1, "the field n"],
    ["a field and the map holding it", "post-{id}-views=posts/{id}:stats.views,post-{id}-stats=posts/{id}:stats", 2, 1, "the fields stats.views and stats (one holds the other)"],
    ["a literal document a pattern can name", "site=posts/home:n,post-{id}=posts/{id}:n", 2, 1, "the field n"],
    ["placeholders in different segments", "a-{x}=u/{x}/p/1:n,b-{y}=u/1/p/{y}:n", 2, 1, "the field n"],
    ["placeholders in one segment, one prefix starting the other", "a-{x}=posts/p{x}:n,b-{x}=posts/{x}:n", 2, 1, "the field n"],
    ["placeholders in one segment, one suffix ending the other", "x=z/y:k,a-{x}=posts/{x}-a:n,b-{x}=posts/{x}:n", 3, 2, "the field n"],
    ["a later rule against the first of three", "a-{x}=p/{x}:n,b-{x}=q/{x}:n,c-{x}=p/{x}:n.m", 3, 1, "the fields n and n.m (one holds the other)"],
  ])("refuses %s, naming both rules", (_name, value, position, earlier, what) => {
    const error = errorOf(value);
    expect(error).toBeInstanceOf(PatternError);
    expect((error as PatternError).position).toBe(position);
    const message = (error as Error).message;
    expect(message).toContain(`MIRRORS: rule ${position} `);
    expect(message).toContain(`can write ${what} of the same document as rule ${earlier} (`);
    expect(message).toContain("two counters' totals would overwrite each other");
  });

  it.each([
    ["different fields of one document", "a-{x}=posts/{x}:likes,b-{x}=posts/{x}:views"],
    ["sibling fields of one map", "a-{x}=posts/{x}:stats.likes,b-{x}=posts/{x}:stats.views"],
    ["a field whose name starts with another's", "a=p/1:stats,b=p/1:statsViews"],
    ["different collections", "a-{x}=posts/{x}:n,b-{x}=feeds/{x}:n"],
    ["documents that can never be the same", "a-{x}=posts/p-{x}:n,b-{x}=posts/q-{x}:n"],
    ["paths of different depths", "a-{x}=p/{x}:n,b-{x}=p/{x}/c/d:n"],
    ["a literal document no pattern can name", "site=posts/home:n,post-{id}=posts/p-{id}:n"],
    ["the same rule written twice (one counter, one target)", "a-{x}=p/{x}:n, a-{x} = p/{x} : n"],
    ["a first segment no filling makes counters", "x-{c}=c{c}x/s:n"],
  ])("accepts %s", (_name, value) => {
    expect(() => parse(value)).not.toThrow();
  });
});

describe("mirrorTargets", () => {
  const rules = parse("post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:stats.views,post-{id}-likes=feeds/{id}:likes,site=stats/site:n");

  it("fills the placeholder into the document path", () => {
    expect(mirrorTargets(rules, "post-42-likes")).toEqual([
      { path: "posts/42", field: "likeCount", value: "total" },
      { path: "feeds/42", field: "likes", value: "total" },
    ]);
    expect(mirrorTargets(rules, "post-a_b-views")).toEqual([{ path: "posts/a_b", field: "stats.views", value: "total" }]);
    expect(mirrorTargets(rules, "site")).toEqual([{ path: "stats/site", field: "n", value: "total" }]);
  });

  it("matches nothing for other ids, and needs 1+ characters in the placeholder", () => {
    expect(mirrorTargets(rules, "post--likes")).toEqual([]);
    expect(mirrorTargets(rules, "comment-1-likes")).toEqual([]);
    expect(mirrorTargets(rules, "site2")).toEqual([]);
  });

  it("lists a target once even if two rules name it", () => {
    expect(mirrorTargets(parse("a-{x}=p/{x}:n,a-{x}=p/{x}:n"), "a-1")).toEqual([{ path: "p/1", field: "n", value: "total" }]);
  });
});

describe("mirrors of a window", () => {
  it("reads the suffix @today, @last7Days or @last30Days as the value the field holds", () => {
    const rules = parseMirrorRules("MIRRORS", "post-{id}-views=posts/{id}:views7d@last7Days,post-{id}-views=posts/{id}:stats.today @today,post-{id}-views=posts/{id}:views");
    expect(mirrorTargets(rules, "post-1-views")).toEqual([
      { path: "posts/1", field: "views7d", value: "last7Days" },
      { path: "posts/1", field: "stats.today", value: "today" },
      { path: "posts/1", field: "views", value: "total" },
    ]);
  });

  it("refuses any other suffix, naming the rule", () => {
    expect(() => parseMirrorRules("MIRRORS", "a-{x}=p/{x}:n@week")).toThrow('MIRRORS: rule 1 "a-{x}=p/{x}:n@week" has the suffix "@week": a window is @today, @last7Days, @last30Days (or no suffix for the total)');
    expect(() => parseMirrorRules("MIRRORS", "a-{x}=p/{x}:n@today,a-{x}=p/{x}:n@last7Days")).toThrow(/the field n/);
  });
});
