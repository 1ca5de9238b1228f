// AUTO_CREATE's rules (model/auto-create-rules.ts), and the two sources of the one settings type
// (model/settings.ts): the callables' (declared params) and the admin entry's (an environment), which
// must read the same values the same way, each param once per call.
import { autoCreateDocument, autoCreateTarget, parseAutoCreateRules } from "../src/model/auto-create-rules";
import { newCounter, settingsOf } from "../src/model/settings";
import { envSettings } from "../src/model/env-settings";
import { deployedSettings } from "../src/config/read";
import { COUNTER_PARAM_DEFAULTS, COUNTER_PARAM_NAMES } from "../src/model/params";
import * as params from "../src/config/params";

describe("parseAutoCreateRules", () => {
  it("parses rules with the same placeholder on both sides, and literal ones", () => {
    const rules = parseAutoCreateRules("AUTO_CREATE", "post-{id}-likes=posts/{id}, site-visits=config/site ,u-{uid}-follows=users/{uid}/public/profile");
    expect(rules.map((r) => [r.counter.source, r.document.source])).toEqual([
      ["post-{id}-likes", "posts/{id}"],
      ["site-visits", "config/site"],
      ["u-{uid}-follows", "users/{uid}/public/profile"],
    ]);
    expect(parseAutoCreateRules("AUTO_CREATE", "")).toEqual([]);
  });

  it.each([
    ["post-{id}-likes", 'AUTO_CREATE: rule 1 "post-{id}-likes" has no "=": write ID_PATTERN=DOCUMENT_PATTERN'],
    ["post-{id}-likes=posts", 'AUTO_CREATE: rule 1 "post-{id}-likes=posts" has a document path "posts" with 1 segments'],
    ["post-{id}-likes=posts/{postId}", "names the placeholder {id} in the counter-id pattern but {postId} in the document path"],
    ["post-{id}-likes=posts/latest", "uses {id} in the counter-id pattern but not in the document path"],
    ["likes=posts/{id}", "uses {id} in the document path but not in the counter-id pattern"],
    ["post-{id}-likes=counters/{id}", "in the counters collection, which belongs to the counters themselves"],
    ["post/{id}=posts/{id}", 'has a counter-id pattern "post/{id}" that has "/"'],
    ["a-{id}=posts/{id},a-{id}-likes=posts/{id}", 'rule 2 "a-{id}-likes=posts/{id}" can never apply: rule 1 (a-{id}=posts/{id}) matches every id it matches'],
    ["a=posts/1,,b=posts/2", 'AUTO_CREATE: rule 2 "" is empty'],
  ])("refuses %j, naming the rule", (value, message) => {
    expect(() => parseAutoCreateRules("AUTO_CREATE", value)).toThrow(message);
  });
});

describe("AUTO_CREATE's conditions on the document", () => {
  it("parses [FIELD==VALUE] after the document pattern, in the syntax of DOCUMENT_COUNTERS (model/conditions.ts)", () => {
    const [rule] = parseAutoCreateRules("AUTO_CREATE", "post-{id}-likes=posts/{id}[published==true][meta.kind=='post']");
    expect(rule!.document.source).toBe("posts/{id}");
    expect(rule!.conditions).toEqual([
      { source: "[published==true]", field: "published", value: true },
      { source: "[meta.kind=='post']", field: "meta.kind", value: "post" },
    ]);
    expect(parseAutoCreateRules("AUTO_CREATE", "post-{id}-views=posts/{id}")[0]!.conditions).toEqual([]);
  });

  it("fills the document and keeps the conditions for the id", () => {
    const rules = parseAutoCreateRules("AUTO_CREATE", "post-{id}-likes=posts/{id}[published==true],post-{id}-views=posts/{id}");
    expect(autoCreateTarget(rules, "post-7-likes")).toEqual({ document: "posts/7", conditions: [{ source: "[published==true]", field: "published", value: true }] });
    expect(autoCreateTarget(rules, "post-7-views")).toEqual({ document: "posts/7", conditions: [] });
    expect(autoCreateTarget(rules, "post-7-shares")).toBeUndefined();
    expect(autoCreateDocument(rules, "post-7-likes")).toBe("posts/7");
  });

  it.each([
    ["post-{id}-likes=posts/{id}[published]", 'AUTO_CREATE: rule 1 "post-{id}-likes=posts/{id}[published]" has a condition "[published]" without "==": write [FIELD==VALUE]'],
    ["post-{id}-likes=posts/{id}[published==true", 'rule 1 "post-{id}-likes=posts/{id}[published==true" has a "[" that is never closed'],
    ["post-{id}-likes=posts/{id}[published==true]:likes", 'rule 1 "post-{id}-likes=posts/{id}[published==true]:likes" has ":likes" after its conditions'],
    ["post-{id}-likes=posts/{id}[a..b==1]", 'rule 1 "post-{id}-likes=posts/{id}[a..b==1]" has a condition "[a..b==1]" that'],
    ["post-{id}-likes=posts/{id}[published==]", "with no value"],
    ["post-{id}-likes=posts/{id}=x", 'has more than one "="'],
    ["post-{id}-likes[a==1]=posts/{id}", 'has a counter-id pattern "post-{id}-likes[a==1]"'],
  ])("refuses %j, naming the rule", (value, message) => {
    expect(() => parseAutoCreateRules("AUTO_CREATE", value)).toThrow(message);
  });
});

describe("autoCreateDocument", () => {
  const rules = parseAutoCreateRules("AUTO_CREATE", "post-{id}-likes=posts/{id},post-{id}-views=posts/{id},g-{id}=groups/{id}/meta/counts");

  it("fills the first matching rule's document with the id's placeholder value", () => {
    expect(autoCreateDocument(rules, "post-42-likes")).toBe("posts/42");
    expect(autoCreateDocument(rules, "post-a_b-views")).toBe("posts/a_b");
    expect(autoCreateDocument(rules, "g-x")).toBe("groups/x/meta/counts");
  });

  it("names no document for an id no rule matches (a missing counter stays not-found)", () => {
    expect(autoCreateDocument(rules, "post-42-like")).toBeUndefined();
    expect(autoCreateDocument(rules, "post--likes")).toBeUndefined();
    expect(autoCreateDocument([], "post-42-likes")).toBeUndefined();
  });
});

describe("the admin entry's settings (an environment) and the callables' (declared params)", () => {
  const VALUES: Record<string, string> = {
    DEFAULT_SHARDS: "2",
    MAX_SHARDS: "40",
    MAX_GROWN_SHARDS: "500",
    MAX_DELTA: "9",
    REQUEST_TTL_HOURS: "3",
    UNIQUE_COUNTERS: "post-{id}-likes",
    WINDOWED_COUNTERS: "post-{id}-views",
    COUNTER_KINDS: "post-{id}-views=shards:7;maxDelta:1",
    MIRRORS: "post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:views7d@last7Days",
    AUTO_CREATE: "post-{id}-likes=posts/{id}",
    // Read by the callables' gate (Settings.gate), not by the operations: the unit tier loads no .env.
    RATE_LIMIT_PER_MINUTE: "0",
    RATE_LIMIT_BURST: "60",
  };
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const [name, value] of Object.entries(VALUES)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("read the same values the same way: limits, new counters' shapes, mirrors and AUTO_CREATE", () => {
    const env = envSettings();
    const deployed = deployedSettings();
    expect(env.limits()).toEqual(deployed.limits());
    expect(env.limits()).toEqual({ defaultShards: 2, maxShards: 40, maxGrownShards: 500, maxDelta: 9, requestTtlMs: 3 * 3_600_000 });
    for (const id of ["post-1-likes", "post-1-views", "post-1-shares", "x"]) {
      expect(newCounter(id, {}, env, env.limits())).toEqual(newCounter(id, {}, deployed, deployed.limits()));
      expect(env.autoCreateFor(id)).toEqual(deployed.autoCreateFor(id));
    }
    expect(newCounter("post-1-views", {}, env, env.limits())).toEqual({
      numShards: 7,
      unique: false,
      windowed: true,
      mirrors: [{ path: "posts/1", field: "views7d", value: "last7Days" }],
    });
  });

  it("reads a passed environment, with the params' defaults for what it does not set", () => {
    const env = envSettings({});
    expect(env.limits()).toEqual({ defaultShards: 1, maxShards: 200, maxGrownShards: 1000, maxDelta: 1000, requestTtlMs: 24 * 3_600_000 });
    expect(env.databaseId()).toBe("(default)");
    expect(newCounter("post-1-likes", {}, env, env.limits())).toEqual({ numShards: 1, unique: false, windowed: false, mirrors: [] });
    expect(env.autoCreateFor("post-1-likes")).toBeUndefined();
  });

  it("refuses a bad value when an operation reads it, naming the param and where to set it", () => {
    expect(() => envSettings({ MAX_SHARDS: "lots" }).limits()).toThrow('MAX_SHARDS must be an integer from 1 to 200');
    expect(() => envSettings({ MAX_SHARDS: "lots" }).limits()).toThrow("the same value as in the counters codebase's .env");
    expect(() => envSettings({ DEFAULT_SHARDS: "5", MAX_SHARDS: "4" }).limits()).toThrow("DEFAULT_SHARDS (5) must not exceed MAX_SHARDS (4)");
    expect(() => envSettings({ UNIQUE_COUNTERS: "a/b" }).uniquePatterns()).toThrow('UNIQUE_COUNTERS: pattern 1 "a/b"');
    expect(() => envSettings({ AUTO_CREATE: "x-{id}=posts" }).autoCreateFor("x-1")).toThrow('AUTO_CREATE: rule 1 "x-{id}=posts"');
    // Nothing else stops over it.
    expect(envSettings({ AUTO_CREATE: "x-{id}=posts" }).limits().maxShards).toBe(200);
  });

  it("read each param from their source once, when a call first needs it", () => {
    const reads: string[] = [];
    const settings = settingsOf(
      (name) => {
        reads.push(name);
        return VALUES[name] ?? String(params.DECLARED[name].value());
      },
      (problem) => new Error(problem),
    );
    expect(reads).toEqual([]);
    const limits = settings.limits();
    settings.limits();
    for (const id of ["post-1-likes", "post-1-views"]) {
      newCounter(id, {}, settings, limits);
      settings.autoCreateFor(id);
      settings.callersKindFor(id, limits);
    }
    expect(settings.gate()).toEqual(deployedSettings().gate());
    expect([...reads].sort()).toEqual(
      [
        "DEFAULT_SHARDS",
        "MAX_SHARDS",
        "MAX_GROWN_SHARDS",
        "MAX_DELTA",
        "REQUEST_TTL_HOURS",
        "UNIQUE_COUNTERS",
        "WINDOWED_COUNTERS",
        "COUNTER_KINDS",
        "MIRRORS",
        "AUTO_CREATE",
        "LEADERBOARDS",
        "RATE_LIMIT_PER_MINUTE",
        "RATE_LIMIT_BURST",
        "ALLOW_UNAUTHENTICATED",
        "ENFORCE_APP_CHECK",
      ].sort(),
    );
  });

  it("has a default for every param it reads, the one the declared param has", () => {
    const declared = Object.fromEntries(
      Object.values(params.DECLARED as Record<string, { name: string; options?: { default?: unknown } }>).map((p) => [p.name, p.options?.default]),
    );
    for (const name of COUNTER_PARAM_NAMES) expect([name, declared[name]]).toEqual([name, COUNTER_PARAM_DEFAULTS[name]]);
  });
});
