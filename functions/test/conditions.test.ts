// Conditions on an app's document (model/conditions.ts): `[FIELD==VALUE]` as DOCUMENT_COUNTERS and
// AUTO_CREATE write them, parsed and held against a document's data.
import { allHold, holds, parseCondition, ruleSeparator, splitConditions } from "../src/model/conditions";

describe("splitConditions", () => {
  it("splits a path, its conditions and what follows them", () => {
    const split = splitConditions("posts/{post}/comments/{c}[status==published][meta.flags.hidden==false]:stars");
    expect(split.path).toBe("posts/{post}/comments/{c}");
    expect(split.conditions.map((c) => [c.field, c.value, c.source])).toEqual([
      ["status", "published", "[status==published]"],
      ["meta.flags.hidden", false, "[meta.flags.hidden==false]"],
    ]);
    expect(split.rest).toBe(":stars");
  });

  it("leaves a path without conditions whole", () => {
    expect(splitConditions("posts/{id}")).toEqual({ path: "posts/{id}", conditions: [], rest: "" });
  });

  it.each([
    ["true", true],
    ["false", false],
    ["null", null],
    ["0", 0],
    ["-12", -12],
    ["'12'", "12"],
    ["'true'", "true"],
    ["''", ""],
    ["published", "published"],
    ["draft-2", "draft-2"],
  ])("reads the value %s as %p", (text, value) => {
    expect(parseCondition(`status==${text}`).value).toBe(value);
  });

  it.each([
    ["posts/{id}[published]", 'has a condition "[published]" without "==": write [FIELD==VALUE]'],
    ["posts/{id}[published==true", 'has a "[" that is never closed'],
    ["posts/{id}published==true]", 'has a "]" without a "[" before it'],
    ["posts/{id}[a==1]x[b==2]", "has text between its conditions"],
    ["posts/{id}[==1]", 'has a condition "[==1]" that has an empty field path'],
    ["posts/{id}[1a==1]", 'has a condition "[1a==1]" that has a field path "1a" that is not valid'],
    ["posts/{id}[a==]", "with no value (write '' for the empty string)"],
    ["posts/{id}[a===1]", 'with more than one "=="'],
    ["posts/{id}[a=='x]", "whose quote is never closed"],
    ["posts/{id}[a==99999999999999999999]", "whose number is not a safe integer"],
    ["posts/{id}[a==[b]]", 'has a "[" inside a condition'],
  ])("refuses %s, saying why", (text, message) => {
    expect(() => splitConditions(text)).toThrow(message);
  });
});

describe("holds", () => {
  const data = { status: "published", n: 1.0, ok: true, gone: null, meta: { kind: "post", n: 3 }, list: ["a"] };

  it.each([
    ["status==published", true],
    ["status=='published'", true],
    ["status==draft", false],
    ["n==1", true],
    ["n=='1'", false],
    ["ok==true", true],
    ["ok=='true'", false],
    ["gone==null", true],
    ["missing==null", false],
    ["meta.kind==post", true],
    ["meta.n==3", true],
    ["meta.kind.deeper==post", false],
    ["list==a", false],
  ])("[%s] on the document is %p", (inner, expected) => {
    expect(holds(parseCondition(inner), data)).toBe(expected);
  });

  it("needs every condition (and none holds on a missing document's data)", () => {
    const { conditions } = splitConditions("p/{id}[status==published][meta.kind==post]");
    expect(allHold(conditions, data)).toBe(true);
    expect(allHold(conditions, { ...data, meta: { kind: "page" } })).toBe(false);
    expect(allHold(conditions, undefined)).toBe(false);
    expect(allHold([], undefined)).toBe(true);
  });
});

describe("ruleSeparator", () => {
  it("finds the rule's own = outside the brackets", () => {
    expect(ruleSeparator("post-{id}-likes=posts/{id}[published==true]")).toBe("post-{id}-likes".length);
    const rule = "posts/{p}/comments/{c}[status==published]:n=post-{p}-comments";
    expect(rule.slice(0, ruleSeparator(rule))).toBe("posts/{p}/comments/{c}[status==published]:n");
    expect(ruleSeparator("posts/{id}[a==b]")).toBe(-1);
  });
});
