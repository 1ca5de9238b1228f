// MIRRORS rules (counters/mirrors.ts): what parses, what is refused with which message, and which targets
// a counter id maps to. Pure: no emulator.
import { mirrorTargets, parseMirrorRules } from "../../src/counters/mirrors";
import { PatternError } from "../../src/counters/patterns";

const parse = (value: string) => parseMirrorRules("MIRRORS", value);

describe("parseMirrorRules", () => {
  it("reads the DESIGN.md example: two rules, a placeholder on both sides, a nested field", () => {
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
  ])("refuses %s, naming the rule", (_name, value, message) => {
    let error: unknown;
    try {
      parse(value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PatternError);
    expect((error as Error).message).toContain("MIRRORS: rule ");
    expect((error as Error).message).toContain(message);
  });
});

describe("mirrorTargets", () => {
  const rules = parse("post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:stats.views,post-{id}-likes=feeds/{id}:likes,site=stats/site:n");

  it("fills the placeholder into the document path", () => {
    expect(mirrorTargets(rules, "post-42-likes")).toEqual([
      { path: "posts/42", field: "likeCount" },
      { path: "feeds/42", field: "likes" },
    ]);
    expect(mirrorTargets(rules, "post-a_b-views")).toEqual([{ path: "posts/a_b", field: "stats.views" }]);
    expect(mirrorTargets(rules, "site")).toEqual([{ path: "stats/site", field: "n" }]);
  });

  it("matches nothing for other ids, and needs 1+ characters in the placeholder", () => {
    expect(mirrorTargets(rules, "post--likes")).toEqual([]);
    expect(mirrorTargets(rules, "comment-1-likes")).toEqual([]);
    expect(mirrorTargets(rules, "site2")).toEqual([]);
  });

  it("lists a target once even if two rules name it", () => {
    expect(mirrorTargets(parse("a-{x}=p/{x}:n,a-{x}=p/{x}:n"), "a-1")).toEqual([{ path: "p/1", field: "n" }]);
  });
});
