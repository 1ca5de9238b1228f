// The firestore-counter extension's layout and the rules that move it (functions/src/extension/): what
// EXTENSION_COUNTERS and migrate-extension's patterns accept and refuse, which counter a document's count
// moves to, what each kind of shard document holds for a field and how that amount leaves it, how a
// missing counter is shaped, and how a param is read while firebase-tools loads the code for its
// manifest. Pure: no emulator.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { paramAtLoad } from "../src/config/at-load";
import { shardAmount } from "../src/extension/amounts";
import { fieldAmount } from "../src/model/extension-data";
import { newCounterRuleOf } from "../src/model/new-counter";
import { collectionIdOf, collectionOf, extensionRule, nearMiss, parseExtensionRules, sourceFor, sourcesFor } from "../src/model/extension-rules";
import { PatternError } from "../src/model/patterns";

const parse = (value: string) => parseExtensionRules("EXTENSION_COUNTERS", value);

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected it to throw");
}

describe("EXTENSION_COUNTERS", () => {
  it("reads the guide's rules: a placeholder on both sides, a dotted field, two fields of one document", () => {
    const rules = parse("pages/{id}:visits=page-{id}-visits, pages/{id}:stats.likes=page-{id}-likes");
    expect(rules.map((r) => [r.document.source, r.field, r.counter.source])).toEqual([
      ["pages/{id}", "visits", "page-{id}-visits"],
      ["pages/{id}", "stats.likes", "page-{id}-likes"],
    ]);
    expect(sourcesFor(rules, "pages/home")).toEqual([
      { document: "pages/home", field: "visits", counterId: "page-home-visits" },
      { document: "pages/home", field: "stats.likes", counterId: "page-home-likes" },
    ]);
  });

  it("is empty when blank, and accepts a literal rule (one document, one counter)", () => {
    expect(parse("  ")).toEqual([]);
    expect(sourcesFor(parse("stats/site:visits=site-visits"), "stats/site")).toEqual([{ document: "stats/site", field: "visits", counterId: "site-visits" }]);
  });

  it.each<[string, string]>([
    ["pages/{id}=page-{id}", 'has no ":" between the document path and the field'],
    ["pages/{id}:visits", 'has no "="'],
    ["pages/{id}:a:b=p-{id}", 'has more than one ":"'],
    ["pages:visits=p", "with 1 segments"],
    ["sites/main/pages/{id}:visits=p-{id}", "the fold trigger serves documents of top-level collections (collection/document) only"],
    ["{c}x/doc:visits=p-{c}", "in a collection id"],
    ["counters/{id}:visits=p-{id}", "belongs to the counters themselves"],
    ["pages/{id}:visit-count=p-{id}", "is not valid"],
    ["pages/{id}:visits=p-{slug}", "names the placeholder {id} in the document path but {slug}"],
    ["pages/{id}:visits=p-all", "uses {id} in the document path but not in the counter-id pattern"],
    ["pages/{id}:visits=p.{id}", "is not a counter-id character"],
  ])("refuses %s, naming the rule and why", (value, why) => {
    const error = errorOf(() => parse(value));
    expect(error).toBeInstanceOf(PatternError);
    expect(error.message).toContain("EXTENSION_COUNTERS: rule 1");
    expect(error.message).toContain(why);
  });

  it("refuses two rules that can count one field of one document, or a field and the map holding it", () => {
    expect(errorOf(() => parse("pages/{id}:visits=a-{id},pages/{p}:visits=b-{p}")).message).toContain("rule 2");
    expect(errorOf(() => parse("pages/{id}:stats=a-{id},pages/{id}:stats.visits=b-{id}")).message).toContain("one holds the other");
    expect(parse("pages/{id}:visits=a-{id},posts/{id}:visits=b-{id}")).toHaveLength(2);
  });

  it("names only documents whose id a counter id can hold", () => {
    const [rule] = parse("pages/{id}:visits=page-{id}-visits");
    expect(sourceFor(rule!, "pages/hello world")).toBeNull();
    expect(nearMiss(rule!, "pages/hello world")).toBe(true);
    expect(nearMiss(rule!, "posts/x")).toBe(false);
    expect(sourceFor(rule!, `pages/${"x".repeat(120)}`)).toBeNull();
    expect(sourceFor(rule!, "pages/a/b/c")).toBeNull();
  });
});

describe("migrate-extension's rule", () => {
  it("takes deeper documents than the trigger serves, and knows where to list them", () => {
    const deep = extensionRule("sites/main/pages/p-{id}", "visits", "p-{id}");
    expect(collectionOf(deep)).toBe("sites/main/pages");
    expect(sourceFor(deep, "sites/main/pages/p-7")).toMatchObject({ counterId: "p-7" });
    const inner = extensionRule("users/{uid}/stats/main", "visits", "u-{uid}");
    expect(collectionOf(inner)).toBeNull();
    expect(collectionIdOf(inner)).toBe("stats");
    expect(collectionOf(extensionRule("stats/site", "visits", "site"))).toBe("stats");
  });

  it("refuses a placeholder in a collection id", () => {
    expect(errorOf(() => extensionRule("users/u/{c}/x", "n", "c-{c}")).message).toContain("in a collection id");
  });
});

describe("shardAmount", () => {
  it("reads a client's shard at a dotted path and removes only that field, or the document when nothing else is left", () => {
    expect(shardAmount("uuid-1", { stats: { visits: 5 } }, "stats.visits")).toEqual({ kind: "amount", amount: 5, partial: false, removal: { op: "delete" } });
    expect(shardAmount("uuid-1", { stats: { visits: 5, likes: 2 } }, "stats.visits")).toMatchObject({ amount: 5, removal: { op: "deleteField", path: ["stats", "visits"] } });
    // The map that only held the amount goes with it; the document's other fields stay.
    expect(shardAmount("uuid-1", { stats: { visits: -3 }, likes: 1 }, "stats.visits")).toMatchObject({ amount: -3, removal: { op: "deleteField", path: ["stats"] } });
    expect(shardAmount("uuid-1", { likes: 1 }, "stats.visits")).toEqual({ kind: "absent" });
  });

  it("sums a worker's partial over its _updates_ entries (negative ones too) and keeps the other fields' amounts", () => {
    const data = {
      _updates_: [
        { _id_: "a", _data_: { visits: 7, likes: 2 } },
        { _id_: "b", _data_: { visits: -3 } },
        { _id_: "c", _data_: { likes: 4 } },
      ],
    };
    const found = shardAmount("\t\tab", data, "visits");
    expect(found).toEqual({
      kind: "amount",
      amount: 4,
      partial: true,
      removal: { op: "setUpdates", updates: [{ _id_: "a", _data_: { likes: 2 } }, { _id_: "c", _data_: { likes: 4 } }] },
    });
    expect(shardAmount("\t\tab", { _updates_: [{ _id_: "a", _data_: { visits: 7 } }] }, "visits")).toMatchObject({ amount: 7, removal: { op: "delete" } });
    expect(shardAmount("\tabcd", { _updates_: [{ _id_: "a", _data_: { likes: 1 } }] }, "visits")).toEqual({ kind: "absent" });
  });

  it.each<[string, Record<string, unknown>]>([
    ["a fraction", { visits: 1.5 }],
    ["a string", { visits: "3" }],
    ["a map at the field", { visits: { x: 1 } }],
    ["beyond 2^53", { visits: 2 ** 60 }],
  ])("leaves %s where it is and says why", (_what, data) => {
    expect(shardAmount("uuid", data, "visits")).toMatchObject({ kind: "bad" });
  });

  it("refuses a partial whose _updates_ is not a list, or whose entries are not integers", () => {
    expect(shardAmount("\tx", { _updates_: 3 }, "visits")).toMatchObject({ kind: "bad" });
    expect(shardAmount("\tx", { _updates_: [{ _id_: "a", _data_: { visits: 0.5 } }] }, "visits")).toMatchObject({ kind: "bad" });
  });
});

describe("fieldAmount", () => {
  it("reads the counted field of the app's document: 0 when absent, or the reason it is not an integer", () => {
    expect(fieldAmount({ stats: { visits: 12 } }, "stats.visits")).toBe(12);
    expect(fieldAmount(undefined, "visits")).toBe(0);
    expect(fieldAmount({ title: "x" }, "visits")).toBe(0);
    expect(fieldAmount({ visits: 2.5 }, "visits")).toContain("not an integer");
  });
});

describe("a counter a fold creates", () => {
  it("has DEFAULT_SHARDS, or the shards COUNTER_KINDS declares, and is windowed when WINDOWED_COUNTERS names it", () => {
    const rule = newCounterRuleOf({ DEFAULT_SHARDS: "2", COUNTER_KINDS: "page-{id}-views=shards:5", WINDOWED_COUNTERS: "page-{id}-views" });
    expect(rule("page-a-visits")).toEqual({ numShards: 2, windowed: false });
    expect(rule("page-a-views")).toEqual({ numShards: 5, windowed: true });
    expect(newCounterRuleOf({})("x")).toEqual({ numShards: 1, windowed: false });
  });

  it("cannot be a unique counter: an id UNIQUE_COUNTERS reserves is refused, naming it", () => {
    expect(() => newCounterRuleOf({ UNIQUE_COUNTERS: "page-{id}-likes" })("page-a-likes")).toThrow(/matches UNIQUE_COUNTERS/);
  });

  it("refuses a pattern param that does not parse, naming it", () => {
    expect(() => newCounterRuleOf({ WINDOWED_COUNTERS: "a-{" })).toThrow(/WINDOWED_COUNTERS/);
  });
});

describe("paramAtLoad", () => {
  const dir = mkdtempSync(join(tmpdir(), "at-load-"));
  writeFileSync(join(dir, ".env"), "# comment\nEXTENSION_COUNTERS=\nOTHER=1\n");
  writeFileSync(join(dir, ".env.demo-p"), 'EXTENSION_COUNTERS="pages/{id}:visits=page-{id}-visits"  # quoted\n');
  writeFileSync(join(dir, ".env.local"), "export EXTENSION_COUNTERS=local/{id}:n=l-{id}\n");
  const discovery = { FUNCTIONS_CONTROL_API: "true", GCLOUD_PROJECT: "demo-p" };

  it("is the environment's value at run time, and nothing more", () => {
    expect(paramAtLoad("EXTENSION_COUNTERS", { EXTENSION_COUNTERS: "x" }, dir)).toBe("x");
    expect(paramAtLoad("EXTENSION_COUNTERS", {}, dir)).toBeUndefined();
  });

  it("reads the codebase's .env, then .env.<project> while firebase-tools loads the code for its manifest", () => {
    expect(paramAtLoad("EXTENSION_COUNTERS", discovery, dir)).toBe("pages/{id}:visits=page-{id}-visits");
    expect(paramAtLoad("EXTENSION_COUNTERS", { ...discovery, GCLOUD_PROJECT: "demo-other" }, dir)).toBe("");
  });

  it("reads .env.local last, in the emulator only", () => {
    expect(paramAtLoad("EXTENSION_COUNTERS", { ...discovery, FUNCTIONS_EMULATOR: "true" }, dir)).toBe("local/{id}:n=l-{id}");
  });
});
