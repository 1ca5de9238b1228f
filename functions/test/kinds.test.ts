// COUNTER_KINDS rules (model/kinds.ts): what parses, what is refused with which message, which rule an
// id gets (the first that matches), and the decisions a kind makes: the shard count of a new counter, the
// largest delta of an increment, and what the callables may do (callers). Pure: no emulator.
import { callersKindFor, checkCallers, checkDelta, describeKind, kindFor, kindOf, parseCounterKindRules, parseCounterKinds, shardsFor, type KindLimits } from "../src/model/kinds";
import { CounterError } from "../src/model/errors";
import { PatternError } from "../src/model/patterns";

const LIMITS: KindLimits = { maxShards: 200, maxDelta: 1000 };
const parse = (value: string, limits = LIMITS) => parseCounterKinds("COUNTER_KINDS", value, limits);

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("parseCounterKinds", () => {
  it("reads the documented example: shards alone, and shards with maxDelta", () => {
    const kinds = parse("post-{id}-likes=shards:20,post-{id}-views=shards:50;maxDelta:1");
    expect(kinds.map((k) => [k.counter.source, k.shards, k.maxDelta])).toEqual([
      ["post-{id}-likes", 20, undefined],
      ["post-{id}-views", 50, 1],
    ]);
  });

  it("treats an empty or blank value as no rules", () => {
    expect(parse("")).toEqual([]);
    expect(parse("  ")).toEqual([]);
  });

  it("trims spaces around rules, keys and values, and takes the keys in any order", () => {
    expect(parse(" clicks-{id} = maxDelta : 5 ; shards : 3 ")[0]).toMatchObject({ shards: 3, maxDelta: 5, counter: { source: "clicks-{id}" } });
  });

  it("accepts maxDelta alone, a literal pattern, and the bounds themselves", () => {
    const [visits] = parse("site-visits=maxDelta:1");
    expect(visits).toMatchObject({ maxDelta: 1 });
    expect(visits!.shards).toBeUndefined();
    expect(parse("a-{id}=shards:1;maxDelta:1000,b-{id}=shards:200")).toHaveLength(2);
  });

  it.each([
    ["no =", "post-{id}-likes:shards:20", 'rule 1 "post-{id}-likes:shards:20" has no "="'],
    ["two =", "a-{id}=shards:2=3", 'has more than one "="'],
    ["a bad pattern", "posts/{id}=shards:2", 'has a counter-id pattern "posts/{id}" that has "/", which is not a counter-id character'],
    ["two placeholders", "{a}-{b}=shards:2", 'has a counter-id pattern "{a}-{b}" that has more than one placeholder'],
    ["an empty pattern", "=shards:2", 'has a counter-id pattern "" that is empty'],
    ["no key at all", "a-{id}=", "declares nothing"],
    ["no key after blanks", "a-{id}=  ", "declares nothing"],
    ["a key without a value", "a-{id}=shards", 'has "shards" without a ":"'],
    ["an empty key:value", "a-{id}=shards:2;;maxDelta:1", "has an empty key:value"],
    ["a trailing ;", "a-{id}=shards:2;", "has an empty key:value"],
    ["an unknown key", "a-{id}=shard:2", 'has an unknown key "shard" (the keys are shards, maxDelta and callers)'],
    ["callers of another value", "a-{id}=callers:read", 'sets callers to "read": it must be add (the callables only add) or none (only the admin entry creates and moves it)'],
    ["callers in the wrong case", "a-{id}=callers:Add", 'sets callers to "Add"'],
    ["callers empty", "a-{id}=callers:", 'sets callers to ""'],
    ["callers twice", "a-{id}=callers:add;callers:none", "declares callers twice"],
    ["a key in the wrong case", "a-{id}=maxdelta:2", 'has an unknown key "maxdelta"'],
    ["unique (UNIQUE_COUNTERS decides that)", "a-{id}=unique:true", 'has an unknown key "unique"'],
    ["a duplicate key", "a-{id}=shards:2;shards:3", "declares shards twice"],
    ["a float", "a-{id}=shards:2.5", 'sets shards to "2.5": it must be an integer from 1 to 200 (MAX_SHARDS)'],
    ["0 shards", "a-{id}=shards:0", 'sets shards to "0": it must be an integer from 1 to 200 (MAX_SHARDS)'],
    ["a negative maxDelta", "a-{id}=maxDelta:-1", 'sets maxDelta to "-1": it must be an integer from 1 to 1000 (MAX_DELTA)'],
    ["a word", "a-{id}=maxDelta:many", 'sets maxDelta to "many"'],
    ["an empty value", "a-{id}=shards:", 'sets shards to ""'],
    ["an exponent", "a-{id}=shards:1e2", 'sets shards to "1e2"'],
    ["shards above MAX_SHARDS", "a-{id}=shards:201", 'sets shards to "201": it must be an integer from 1 to 200 (MAX_SHARDS)'],
    ["maxDelta above MAX_DELTA", "a-{id}=maxDelta:1001", 'sets maxDelta to "1001": it must be an integer from 1 to 1000 (MAX_DELTA)'],
    ["an empty rule", "a-{id}=shards:2,,b-{id}=shards:2", 'rule 2 "" is empty'],
    ["a duplicate pattern", "a-{id}=shards:2,a-{x}=maxDelta:1", "rule 2 \"a-{x}=maxDelta:1\" can never apply: rule 1 (a-{id}) matches the same ids and comes first"],
    ["a rule behind a wider one", "{id}=maxDelta:10,post-{id}-likes=shards:20", 'rule 2 "post-{id}-likes=shards:20" can never apply: rule 1 ({id}) matches every id it matches and comes first (the first matching rule wins); put the narrower rule first'],
    ["a literal behind a pattern", "post-{id}=shards:5,post-1=shards:6", "rule 2 \"post-1=shards:6\" can never apply: rule 1 (post-{id})"],
  ])("refuses %s, naming the rule", (_name, value, message) => {
    const error = errorOf(() => parse(value));
    expect(error).toBeInstanceOf(PatternError);
    expect(error.message).toMatch(/^COUNTER_KINDS: rule \d+ /);
    expect(error.message).toContain(message);
  });

  it("reads callers:add and callers:none, alone or with the other keys", () => {
    const kinds = parse("post-{id}-views=callers:add;maxDelta:1,score-{id}=callers:none,post-{id}-likes=shards:20");
    expect(kinds.map((k) => [k.counter.source, k.shards, k.maxDelta, k.callers])).toEqual([
      ["post-{id}-views", undefined, 1, "add"],
      ["score-{id}", undefined, undefined, "none"],
      ["post-{id}-likes", 20, undefined, undefined],
    ]);
  });

  it("checks against the limits it is given, and remembers a parse per value and limits", () => {
    const value = "limits-{id}=shards:50;maxDelta:10";
    const wide = parse(value);
    expect(parse(value)).toBe(wide);
    expect(errorOf(() => parse(value, { maxShards: 40, maxDelta: 1000 })).message).toContain('sets shards to "50": it must be an integer from 1 to 40 (MAX_SHARDS)');
    expect(errorOf(() => parse(value, { maxShards: 200, maxDelta: 5 })).message).toContain('sets maxDelta to "10": it must be an integer from 1 to 5 (MAX_DELTA)');
    expect(parse(value)).toBe(wide);
  });

  it("keeps rules whose patterns overlap without one covering the other", () => {
    expect(parse("post-{id}=shards:5,{id}-likes=shards:20")).toHaveLength(2);
  });
});

describe("kindOf", () => {
  const kinds = parse("post-{id}-views=shards:50;maxDelta:1,post-{id}=shards:5,{id}-likes=shards:20,site=maxDelta:3");

  it("answers the first rule that matches the id", () => {
    expect(kindOf(kinds, "post-1-views")).toMatchObject({ shards: 50, maxDelta: 1 });
    expect(kindOf(kinds, "post-1-likes")).toMatchObject({ shards: 5 }); // post-{id} comes before {id}-likes
    expect(kindOf(kinds, "comment-1-likes")).toMatchObject({ shards: 20 });
    expect(kindOf(kinds, "site")).toMatchObject({ maxDelta: 3 });
  });

  it("answers undefined for ids no rule matches (a placeholder needs 1+ characters)", () => {
    expect(kindOf(kinds, "site2")).toBeUndefined();
    expect(kindOf(kinds, "post-")).toBeUndefined();
    expect(kindOf(kinds, "-likes")).toBeUndefined();
    expect(kindOf([], "post-1-views")).toBeUndefined();
  });
});

describe("kindFor, with a bad rule among good ones (the functions' reading: parseCounterKindRules)", () => {
  const rules = (value: string, limits = LIMITS) => parseCounterKindRules("COUNTER_KINDS", value, limits);

  it("refuses only the ids the bad rule could match, with the preflight's own message naming it", () => {
    const value = "post-{id}-likes=shards:20,post-{id}-views=shards:fifty,{id}-clicks=maxDelta:5";
    const read = rules(value);
    expect(kindFor(read, "post-1-likes")).toMatchObject({ shards: 20 });
    expect(kindFor(read, "ad-1-clicks")).toMatchObject({ maxDelta: 5 });
    expect(kindFor(read, "site")).toBeUndefined();
    const error = errorOf(() => kindFor(read, "post-1-views"));
    expect(error).toBeInstanceOf(PatternError);
    expect(error.message).toBe(errorOf(() => parse(value)).message);
  });

  it("refuses a rule's ids when the deployed limits no longer allow it (MAX_SHARDS, MAX_DELTA lowered), and nothing else", () => {
    const read = rules("post-{id}-views=shards:50;maxDelta:10,post-{id}-likes=shards:4", { maxShards: 40, maxDelta: 5 });
    expect(errorOf(() => kindFor(read, "post-1-views")).message).toContain('sets shards to "50": it must be an integer from 1 to 40 (MAX_SHARDS)');
    expect(kindFor(read, "post-1-likes")).toMatchObject({ shards: 4 });
    expect(kindFor(read, "anything-else")).toBeUndefined();
  });

  it("refuses every id that reaches a rule whose pattern does not parse (it could be any), none an earlier rule decides", () => {
    const read = rules("post-{id}-likes=shards:20,post {id}=shards:5,site=maxDelta:3");
    expect(kindFor(read, "post-1-likes")).toMatchObject({ shards: 20 });
    expect(errorOf(() => kindFor(read, "site")).message).toContain('rule 2 "post {id}=shards:5"');
    expect(errorOf(() => kindFor(read, "x")).message).toContain("rule 2");
  });

  it("reads a good value exactly as parseCounterKinds does", () => {
    const value = "post-{id}-views=shards:50;maxDelta:1,post-{id}=shards:5";
    expect(rules(value)).toEqual(parse(value));
  });
});

describe("callersKindFor (what decides a callable's call, bad rules among the good ones)", () => {
  const rules = (value: string) => parseCounterKindRules("COUNTER_KINDS", value, LIMITS);

  it("answers as kindFor on good rules", () => {
    const read = rules("c-{id}-score=callers:none,c-{id}-views=callers:add;maxDelta:1");
    expect(callersKindFor(read, "c-1-score")).toMatchObject({ callers: "none" });
    expect(callersKindFor(read, "c-1-views")).toMatchObject({ callers: "add", maxDelta: 1 });
    expect(callersKindFor(read, "free")).toBeUndefined();
  });

  it("throws, naming the rule, for an id a bad rule that names callers could match", () => {
    const read = rules("c-{id}-score=callers:nobody,c-{id}-x=maxDelta:2");
    expect(errorOf(() => callersKindFor(read, "c-1-score")).message).toContain('rule 1 "c-{id}-score=callers:nobody" sets callers to "nobody"');
    expect(callersKindFor(read, "c-1-x")).toMatchObject({ maxDelta: 2 });
    expect(errorOf(() => callersKindFor(rules("c {id}=Callers:none,c-{id}-x=maxDelta:2"), "c-1-x")).message).toContain("rule 1");
  });

  it("lets a bad rule that names no callers stop nothing: its own ids have no callers, and past a pattern that does not parse the later rules decide", () => {
    expect(callersKindFor(rules("c-{id}-likes=shards:fifty,{id}=callers:none"), "c-1-likes")).toBeUndefined();
    expect(callersKindFor(rules("c {id}=shards:5,c-{id}-score=callers:none"), "c-1-score")).toMatchObject({ callers: "none" });
    expect(callersKindFor(rules("c {id}=shards:5,c-{id}-score=callers:none"), "c-1-likes")).toBeUndefined();
  });
});

describe("shardsFor", () => {
  const [views, clicks] = parse("k-{id}-views=shards:50,k-{id}-clicks=maxDelta:1");

  it("gives a kind's declared shards when numShards is omitted or the same", () => {
    expect(shardsFor("k-1-views", undefined, views)).toBe(50);
    expect(shardsFor("k-1-views", 50, views)).toBe(50);
  });

  it("refuses another numShards with invalid-argument naming numShards, the id and the declared count", () => {
    for (const requested of [1, 49, 200]) {
      const error = errorOf(() => shardsFor("k-1-views", requested, views));
      expect(error).toBeInstanceOf(CounterError);
      expect(error).toMatchObject({ code: "invalid-argument" });
      expect(error.message).toBe('numShards: counter "k-1-views" is declared with 50 shards (COUNTER_KINDS); omit numShards');
    }
  });

  it("leaves the choice to the caller without a kind, or with a kind that declares no shards", () => {
    expect(shardsFor("free", 7, undefined)).toBe(7);
    expect(shardsFor("free", undefined, undefined)).toBeUndefined();
    expect(shardsFor("k-1-clicks", 7, clicks)).toBe(7);
  });
});

describe("checkDelta", () => {
  const [views, likes] = parse("d-{id}-views=shards:50;maxDelta:1,d-{id}-likes=shards:20");

  it("accepts deltas within the kind's maxDelta, both signs", () => {
    expect(() => checkDelta("d-1-views", 1, views)).not.toThrow();
    expect(() => checkDelta("d-1-views", -1, views)).not.toThrow();
  });

  it("refuses |delta| > maxDelta with invalid-argument naming delta, the limit and the id", () => {
    for (const delta of [2, -2, 1000]) {
      const error = errorOf(() => checkDelta("d-1-views", delta, views));
      expect(error).toBeInstanceOf(CounterError);
      expect(error).toMatchObject({ code: "invalid-argument" });
      expect(error.message).toBe('delta must be a non-zero integer from -1 to 1 for counter "d-1-views" (COUNTER_KINDS)');
    }
  });

  it("does not bound deltas without a kind or with a kind that declares no maxDelta", () => {
    expect(() => checkDelta("free", 1000, undefined)).not.toThrow();
    expect(() => checkDelta("d-1-likes", -1000, likes)).not.toThrow();
  });
});

describe("checkCallers (what the callables may do; the admin entry never asks)", () => {
  const [views, score, capped, free] = parse("c-{id}-views=callers:add,c-{id}-score=callers:none,c-{id}-stars=callers:add;maxDelta:5,c-{id}-x=maxDelta:3");

  it("lets callers add to a callers:add counter, create it and join it, and refuses a subtraction with invalid-argument naming the field", () => {
    expect(() => checkCallers("c-1-views", { op: "create" }, views, 1000)).not.toThrow();
    expect(() => checkCallers("c-1-views", { op: "increment", delta: 1000 }, views, 1000)).not.toThrow();
    expect(() => checkCallers("c-1-views", { op: "setMember", member: true }, views, 1000)).not.toThrow();
    const minus = errorOf(() => checkCallers("c-1-views", { op: "increment", delta: -1 }, views, 1000));
    expect(minus).toBeInstanceOf(CounterError);
    expect(minus).toMatchObject({ code: "invalid-argument", message: 'delta must be a positive integer up to 1000 for counter "c-1-views": callers only add to it (COUNTER_KINDS callers:add)' });
    expect(errorOf(() => checkCallers("c-1-stars", { op: "increment", delta: -5 }, capped, 1000)).message).toMatch(/^delta must be a positive integer up to 5 /);
    expect(errorOf(() => checkCallers("c-1-views", { op: "setMember", member: false }, views, 1000))).toMatchObject({
      code: "invalid-argument",
      message: 'member must be true for counter "c-1-views": callers only join it (COUNTER_KINDS callers:add)',
    });
  });

  it("refuses every create, increment and membership change of a callers:none counter with permission-denied naming COUNTER_KINDS and the rule", () => {
    const calls = [{ op: "create" }, { op: "increment", delta: 1 }, { op: "increment", delta: -1 }, { op: "setMember", member: true }, { op: "setMember", member: false }] as const;
    for (const call of calls) {
      const error = errorOf(() => checkCallers("c-1-score", call, score, 1000));
      expect(error).toBeInstanceOf(CounterError);
      expect(error).toMatchObject({ code: "permission-denied" });
      expect(error.message).toBe(`counter "c-1-score" is ${call.op === "create" ? "created" : "moved"} only by the app's own functions (COUNTER_KINDS c-{id}-score: callers:none)`);
    }
  });

  it("lets callers do anything else to a kind without callers, or an id without a kind", () => {
    for (const kind of [free, undefined]) {
      expect(() => checkCallers("c-1-x", { op: "increment", delta: -3 }, kind, 1000)).not.toThrow();
      expect(() => checkCallers("c-1-x", { op: "setMember", member: false }, kind, 1000)).not.toThrow();
      expect(() => checkCallers("c-1-x", { op: "create" }, kind, 1000)).not.toThrow();
    }
  });
});

describe("describeKind", () => {
  it("says what a rule declares", () => {
    expect(parse("p-{id}-views=shards:50;maxDelta:1,p-{id}-likes=shards:20,p-{id}-x=maxDelta:2,p-{id}-y=callers:add;maxDelta:1,p-{id}-z=callers:none").map(describeKind)).toEqual([
      "p-{id}-views: 50 shards, |delta| <= 1",
      "p-{id}-likes: 20 shards",
      "p-{id}-x: |delta| <= 2",
      "p-{id}-y: |delta| <= 1, callers only add",
      "p-{id}-z: callers none (the admin entry only)",
    ]);
  });
});
