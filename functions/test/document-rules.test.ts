// DOCUMENT_COUNTERS (model/document-rules.ts, document-match.ts, document-triggers.ts, document-records.ts):
// what the rules accept and refuse (each refusal naming the rule), which counter a document counts in and
// what it contributes, the triggers' names and paths, and the one decision every writer of a record makes.
// Pure: no emulator.
import { bindingOfCounter, changesOf, contributionOf, counterOf, listingOf, matchDocument } from "../src/documents/match";
import { planObservations, supersedes, type CounterRead, type Observation, type RecordState } from "../src/documents/records";
import { versionAt, versionJustAfter } from "../src/model/time";
import { parseMirrorRules } from "../src/model/mirror-rules";
import { watchedMirrors } from "../src/model/mirror-watch";
import { documentRuleClashes, parseDocumentCounterRules, ruleNaming } from "../src/model/document-rules";
import { documentTriggers, triggerName, triggerPath } from "../src/model/document-triggers";
import { parseAutoCreateRules } from "../src/model/auto-create-rules";
import { documentRecordKey } from "../src/model/paths";
import { idsCanCoincide, parseCounterIdPattern, PatternError } from "../src/model/patterns";

const parse = (value: string) => parseDocumentCounterRules("DOCUMENT_COUNTERS", value);

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected it to throw");
}

const DESIGN_EXAMPLE =
  "posts/{post}/comments/{comment}=post-{post}-comments,users/{uid}=users-count," +
  "posts/{post}/comments/{comment}[status==published]=post-{post}-published,products/{p}/ratings/{r}:stars=product-{p}-stars";

describe("DOCUMENT_COUNTERS rules", () => {
  it("reads the contract's example: counts, a literal counter, a condition, a summed field", () => {
    const rules = parse(DESIGN_EXAMPLE);
    expect(rules.map((r) => [r.position, r.document.source, r.document.key, r.conditions.map((c) => c.source), r.field, r.counter.source])).toEqual([
      [1, "posts/{post}/comments/{comment}", "posts/*/comments/*", [], null, "post-{post}-comments"],
      [2, "users/{uid}", "users/*", [], null, "users-count"],
      [3, "posts/{post}/comments/{comment}", "posts/*/comments/*", ["[status==published]"], null, "post-{post}-published"],
      [4, "products/{p}/ratings/{r}", "products/*/ratings/*", [], "stars", "product-{p}-stars"],
    ]);
  });

  it("takes several conditions, a field after them, spaces around the parts, and is empty when blank", () => {
    const [rule] = parse(" products/{p}/ratings/{r}[visible==true][kind=='5'] : stars = product-{p}-stars ");
    expect(rule!.conditions.map((c) => [c.field, c.value])).toEqual([
      ["visible", true],
      ["kind", "5"],
    ]);
    expect(rule!.field).toBe("stars");
    expect(parse("  ")).toEqual([]);
  });

  it.each<[string, string]>([
    ["posts/{post}/comments/{c}", 'has no "=" outside its conditions'],
    ["posts/{p}/comments/{c}=a-{p}=b", 'more than one "="'],
    ["posts/{post}/comments=post-{post}", "with 3 segments"],
    ["posts/{post}=post-{post}-x", "the document's own id"],
    ["posts/{p}/comments/{c}=post-{x}-comments", "which is not a wildcard of posts/{p}/comments/{c}"],
    ["posts/latest=posts-count", "whose last segment is not a wildcard"],
    ["{c}/{d}=everything", "where a collection id goes"],
    ["posts/{p}/{sub}/{c}=p-{p}", "where a collection id goes"],
    ["posts/{p}/comments/{p}=p-{p}", "twice"],
    ["counters/{id}=c-{id}", "belongs to the counters themselves"],
    ["posts/p.1/comments/{c}=x", "with a character other than"],
    ["posts/x{p}/comments/{c}=x-{p}", "a wildcard is a whole segment"],
    ["posts//{c}=x", "empty segment"],
    ["posts/{p}:stars[a==1]=x-{p}", "before its conditions"],
    ["posts/{p}[a==1]stars=x-{p}", "where only :FIELD may follow them"],
    ["posts/{p}:star-count=x", "is not valid"],
    ["posts/{p}[a]=x", 'without "=="'],
    ["posts/{p}=x.y", "is not a counter-id character"],
    [", users/{u}=u", "is empty"],
  ])("refuses %s, naming the rule and why", (value, why) => {
    const error = errorOf(() => parse(value));
    expect(error).toBeInstanceOf(PatternError);
    expect(error.message).toContain("DOCUMENT_COUNTERS: rule 1");
    expect(error.message).toContain(why);
  });

  it("refuses a counter id that two rules can name, naming both", () => {
    const error = errorOf(() => parse("posts/{p}/comments/{c}=post-{p}-comments, videos/{v}/comments/{c}=post-{v}-comments"));
    expect(error.message).toContain("DOCUMENT_COUNTERS: rule 2");
    expect(error.message).toContain("can name the same counter as rule 1 (posts/{p}/comments/{c}=post-{p}-comments)");
    expect(() => parse("users/{u}=users-count,admins/{a}=users-count")).toThrow("rule 2");
    expect(() => parse("posts/{p}/likes/{u}=p-{p},posts/{p}/views/{u}=p-{p}-views")).toThrow("can name the same counter");
    // Ids no single counter can carry both ways are fine.
    expect(parse("posts/{p}/likes/{u}=post-{p}-likes,posts/{p}/views/{u}=post-{p}-views")).toHaveLength(2);
  });

  it("finds the rule that names a counter id, whether the counter exists or not", () => {
    const rules = parse(DESIGN_EXAMPLE);
    expect(ruleNaming(rules, "post-42-comments")?.position).toBe(1);
    expect(ruleNaming(rules, "users-count")?.position).toBe(2);
    expect(ruleNaming(rules, "post-42-likes")).toBeUndefined();
    expect(ruleNaming(rules, "post--comments")).toBeUndefined();
  });

  it("names the other params' patterns that a rule's counters clash with", () => {
    const rules = parse("posts/{p}/likes/{u}=post-{p}-likes,users/{u}=users-count");
    const unique = [{ source: "post-{id}-likes", counter: parseCounterIdPattern("post-{id}-likes") }];
    const autoCreate = parseAutoCreateRules("AUTO_CREATE", "post-{id}-views=posts/{id}");
    expect(documentRuleClashes(rules, { UNIQUE_COUNTERS: unique, AUTO_CREATE: autoCreate })).toEqual([
      'DOCUMENT_COUNTERS: rule 1 "posts/{p}/likes/{u}=post-{p}-likes" names counters that UNIQUE_COUNTERS\'s "post-{id}-likes" also names (post-{p}-likes and post-{id}-likes can be one id): only its documents may move a document counter',
    ]);
  });
});

describe("idsCanCoincide", () => {
  const t = parseCounterIdPattern;
  it.each<[string, string, boolean]>([
    ["a", "a", true],
    ["a", "b", false],
    ["post-{x}", "post-1", true],
    ["post-{x}", "post-", false],
    ["a{x}b", "{y}", true],
    ["ab{x}", "{y}ba", true],
    ["a-{x}", "b-{y}", false],
    ["{x}-likes", "{y}-views", false],
    ["post-{x}-likes", "post-{y}", true],
  ])("%s and %s: %s", (a, b, expected) => {
    expect(idsCanCoincide(t(a), t(b))).toBe(expected);
    expect(idsCanCoincide(t(b), t(a))).toBe(expected);
  });
});

describe("a document under a rule", () => {
  const [comments, users, published, stars] = parse(DESIGN_EXAMPLE);

  it("matches its path, and names its counter", () => {
    expect(matchDocument(comments!.document, "posts/42/comments/c1")).toEqual({ post: "42", comment: "c1" });
    expect(matchDocument(comments!.document, "posts/42/likes/c1")).toBeNull();
    expect(matchDocument(comments!.document, "posts/42/comments/c1/replies/r1")).toBeNull();
    expect(counterOf(comments!, "posts/42/comments/c1", {})).toEqual({ counterId: "post-42-comments" });
    expect(counterOf(users!, "users/anyone at all", {})).toEqual({ counterId: "users-count" });
    expect(counterOf(comments!, "videos/42/comments/c1", {})).toBeNull();
  });

  it("counts in no counter when its wildcard value cannot be part of an id, and says why", () => {
    expect(counterOf(comments!, "posts/hello world/comments/c1", {})).toEqual({ problem: 'its {post} "hello world" cannot be part of a counter id (A-Z, a-z, 0-9, _ and -)' });
    expect(counterOf(comments!, `posts/${"x".repeat(120)}/comments/c1`, {})).toEqual({ problem: "its counter id would have 134 characters, more than 128" });
  });

  it("contributes 1, or its field, while it exists and its conditions hold", () => {
    expect(contributionOf(comments!, { text: "hi" })).toEqual({ value: 1 });
    expect(contributionOf(comments!, undefined)).toEqual({ value: 0 });
    expect(contributionOf(published!, { status: "published" })).toEqual({ value: 1 });
    expect(contributionOf(published!, { status: "draft" })).toEqual({ value: 0 });
    expect(contributionOf(published!, {})).toEqual({ value: 0 });
    expect(contributionOf(stars!, { stars: 4 })).toEqual({ value: 4 });
    expect(contributionOf(stars!, { stars: -2 })).toEqual({ value: -2 });
  });

  it("adds 0 for a summed field that is missing or not a safe integer, and says why", () => {
    expect(contributionOf(stars!, {})).toEqual({ value: 0, problem: "stars holds no value, not a safe integer: it adds 0" });
    expect(contributionOf(stars!, { stars: 4.5 })).toEqual({ value: 0, problem: "stars holds 4.5, not a safe integer: it adds 0" });
    expect(contributionOf(stars!, { stars: "5" })).toEqual({ value: 0, problem: "stars holds a string, not a safe integer: it adds 0" });
    expect(contributionOf(stars!, { stars: 2 ** 53 })).toMatchObject({ value: 0 });
  });

  it("is listed from one collection when every parent is known, else from its collection group", () => {
    expect(listingOf(comments!.document)).toEqual({ group: "comments" });
    expect(listingOf(comments!.document, bindingOfCounter(comments!, "post-42-comments"))).toEqual({ collection: "posts/42/comments" });
    expect(listingOf(users!.document)).toEqual({ collection: "users" });
    const [deep] = parse("sites/main/pages/{p}=pages");
    expect(listingOf(deep!.document)).toEqual({ collection: "sites/main/pages" });
  });

  it("has one record key per path, which fits a document id", () => {
    expect(documentRecordKey("posts/42/comments/c1")).toBe("posts%2F42%2Fcomments%2Fc1");
    expect(documentRecordKey("posts/42/comments/c 1")).not.toBe(documentRecordKey("posts/42/comments/c%201"));
    const long = `posts/${"p".repeat(1500)}/comments/c1`;
    expect(documentRecordKey(long)).toMatch(/^~[0-9a-f]{64}$/);
  });
});

describe("a counter id from a field of the document ({=FIELD})", () => {
  const [byAuthor, replies] = parse("posts/{p}[status==published]=author-{=author}-published,forums/{f}/replies/{r}=user-{=by.uid}-replies");

  it("reads the field, keeps the pattern as written, and refuses a second placeholder or a field path that is not one", () => {
    expect([byAuthor!.idField, byAuthor!.counter.source, byAuthor!.counter.prefix, byAuthor!.counter.suffix]).toEqual(["author", "author-{=author}-published", "author-", "-published"]);
    expect(replies!.idField).toBe("by.uid");
    expect(ruleNaming([byAuthor!], "author-ann-published")).toBe(byAuthor);
    expect(bindingOfCounter(byAuthor!, "author-ann-published")).toEqual({ "=author": "ann" });
    expect(errorOf(() => parse("forums/{f}/replies/{r}=user-{=by}-{f}")).message).toContain("with more than one placeholder: one, a wildcard of the path or {=FIELD}");
    expect(errorOf(() => parse("posts/{p}=author-{=}-posts")).message).toContain('whose {=FIELD} has an empty field path');
    expect(errorOf(() => parse("posts/{p}=author-{=a-b}-posts")).message).toContain('has a field path "a-b" that is not valid');
    expect(errorOf(() => parse("posts/{p}=author-{=author}-posts,posts/{q}/x/{y}=author-{q}-posts")).message).toContain("can name the same counter as rule 1");
  });

  it("names the counter its field holds now; a missing field, or one no id can hold, names none and says why", () => {
    expect(counterOf(byAuthor!, "posts/p1", { author: "ann" })).toEqual({ counterId: "author-ann-published" });
    expect(counterOf(replies!, "forums/f/replies/r", { by: { uid: "u_1" } })).toEqual({ counterId: "user-u_1-replies" });
    expect(counterOf(byAuthor!, "posts/p1", undefined)).toBeNull();
    expect(counterOf(byAuthor!, "comments/p1", { author: "ann" })).toBeNull();
    expect(counterOf(byAuthor!, "posts/p1", {})).toEqual({ problem: "its field author holds no value, which cannot be part of a counter id (a string of A-Z, a-z, 0-9, _ and -)" });
    expect(counterOf(byAuthor!, "posts/p1", { author: 7 })).toEqual({ problem: "its field author holds a number, which cannot be part of a counter id (a string of A-Z, a-z, 0-9, _ and -)" });
    expect(counterOf(byAuthor!, "posts/p1", { author: "a b" })).toMatchObject({ problem: expect.stringContaining('holds "a b"') as string });
    expect(counterOf(byAuthor!, "posts/p1", { author: "x".repeat(120) })).toEqual({ problem: "its counter id would have 137 characters, more than 128" });
  });

  it("moves a document from the counter its field named to the one it names: out of one, into the other", () => {
    const published = (author: unknown) => ({ status: "published", author });
    expect(changesOf(byAuthor!, "posts/p1", published("ann"), published("bob"))).toEqual({
      changes: [
        { counterId: "author-ann-published", was: { value: 1 }, now: { value: 0 } },
        { counterId: "author-bob-published", was: { value: 0 }, now: { value: 1 } },
      ],
    });
    expect(changesOf(byAuthor!, "posts/p1", published("ann"), { ...published("ann"), title: "x" })).toEqual({ changes: [{ counterId: "author-ann-published", was: { value: 1 }, now: { value: 1 } }] });
    expect(changesOf(byAuthor!, "posts/p1", published("ann"), undefined)).toEqual({ changes: [{ counterId: "author-ann-published", was: { value: 1 }, now: { value: 0 } }] });
    expect(changesOf(byAuthor!, "posts/p1", published("ann"), published(null))).toMatchObject({ changes: [{ counterId: "author-ann-published", was: { value: 1 }, now: { value: 0 } }], problem: expect.stringContaining("holds a null") as string });
    expect(changesOf(byAuthor!, "posts/p1", undefined, undefined)).toEqual({ changes: [] });
    expect(changesOf(byAuthor!, "users/p1", undefined, published("ann"))).toBeNull();
    // A counter named by the path: one counter whatever the data.
    const [comments] = parse(DESIGN_EXAMPLE);
    expect(changesOf(comments!, "posts/42/comments/c1", undefined, { text: "hi" })).toEqual({ changes: [{ counterId: "post-42-comments", was: { value: 0 }, now: { value: 1 } }] });
  });
});

describe("the document triggers", () => {
  it("are one per distinct pattern, whatever its wildcards' names, with stable names that fit a function id", () => {
    const triggers = documentTriggers(parse(`${DESIGN_EXAMPLE},posts/{p}/comments/{c}:likes=post-{p}-comment-likes`));
    expect(triggers.map((t) => [t.name, t.id, t.path, t.rules.map((r) => r.position)])).toEqual([
      ["posts_comments_0a61rcx", "documentCounters-posts_comments_0a61rcx", "posts/{d1}/comments/{d2}", [1, 3, 5]],
      ["users_14yprsq", "documentCounters-users_14yprsq", "users/{d1}", [2]],
      ["products_ratings_0a7poek", "documentCounters-products_ratings_0a7poek", "products/{d1}/ratings/{d2}", [4]],
    ]);
    for (const t of triggers) expect(t.id).toMatch(/^[a-zA-Z][a-zA-Z0-9_-]{0,62}$/);
    expect(documentTriggers([])).toEqual([]);
  });

  it("keep a long pattern's name within 63 characters, and two patterns' names apart", () => {
    const [long] = parse(`${"a".repeat(60)}/{x}/${"b".repeat(60)}/{y}=long`);
    expect(`documentCounters-${triggerName(long!.document)}`.length).toBeLessThanOrEqual(63);
    const [one, other] = parse("a_b/{x}=one,a-b/{x}=other");
    expect(triggerName(one!.document)).not.toBe(triggerName(other!.document));
    expect(triggerPath(one!.document)).toBe("a_b/{d1}");
  });
});

describe("a record's decision", () => {
  const t = (seconds: number, nanoseconds = 0) => versionAt({ seconds, nanoseconds });
  const read = (records: [string, RecordState | null][], counter: CounterRead = { exists: true, unique: false, since: null }) => ({ counter, records: new Map(records) });
  const obs = (document: string, counted: number, version: string): Observation => ({ document, counted, version });

  it("orders versions as their times, a delete just after the version it removes", () => {
    expect(t(1_800_000_000, 5)).toBe("2027-01-15T08:00:00.000000005Z");
    expect(t(10, 999_999_999) < t(11)).toBe(true);
    expect(t(10) < versionJustAfter({ seconds: 10, nanoseconds: 0 })).toBe(true);
    expect(versionJustAfter({ seconds: 10, nanoseconds: 0 }) < t(10, 1)).toBe(true);
  });

  it("writes a newer observation with its delta, and covers an older or equal one", () => {
    const plan = planObservations(read([["a", { counted: 1, version: t(10) }], ["b", null]]), [obs("a", 0, t(11)), obs("b", 1, t(5))], "event");
    expect(plan.writes.map((w) => [w.document, w.counted, w.previous, w.existed])).toEqual([
      ["a", 0, 1, true],
      ["b", 1, 0, false],
    ]);
    expect([plan.delta, plan.counter, plan.covered]).toEqual([0, "shard", 0]);
    const covered = planObservations(read([["a", { counted: 1, version: t(10) }]]), [obs("a", 0, t(9))], "event");
    expect([covered.writes.length, covered.covered, covered.counter]).toEqual([0, 1, "none"]);
    expect(supersedes(obs("a", 1, t(10)), { counted: 1, version: t(10) })).toBe(false);
    // The same version counted otherwise: a rule changed in between; the newest reader's rule wins.
    expect(supersedes(obs("a", 0, t(10)), { counted: 1, version: t(10) })).toBe(true);
  });

  it("writes records that count nothing without touching the counter, and creates a missing counter for one that counts", () => {
    expect(planObservations(read([["a", null]]), [obs("a", 0, t(3))], "event").counter).toBe("none");
    const missing: CounterRead = { exists: false, deleting: false, deletedAt: null };
    expect(planObservations(read([["a", null]], missing), [obs("a", 0, t(3))], "event").counter).toBe("none");
    expect(planObservations(read([["a", null]], missing), [obs("a", 1, t(3))], "event").counter).toBe("create");
    expect(planObservations(read([["a", null]], { exists: false, deleting: true, deletedAt: null }), [obs("a", 1, t(3))], "event").counter).toBe("retry-later");
    expect(planObservations(read([["a", null]], { exists: true, unique: true, since: null }), [obs("a", 1, t(3))], "event").counter).toBe("unique");
  });

  it("covers events from before the counter's last deletion, but never the backfill's observations", () => {
    const deleted: CounterRead = { exists: false, deleting: false, deletedAt: t(20) };
    expect(planObservations(read([["a", null]], deleted), [obs("a", 1, t(19))], "event").covered).toBe(1);
    expect(planObservations(read([["a", null]], deleted), [obs("a", 1, t(21))], "event").counter).toBe("create");
    expect(planObservations(read([["a", null]], deleted), [obs("a", 1, t(19))], "backfill").counter).toBe("create");
    const recreated: CounterRead = { exists: true, unique: false, since: t(20) };
    expect(planObservations(read([["a", null]], recreated), [obs("a", 1, t(20))], "event").covered).toBe(1);
    expect(planObservations(read([["a", null]], recreated), [obs("a", 1, t(19))], "backfill").delta).toBe(1);
  });

  it("lets an event that counts nothing take out what the backfill counted again after a deletion, however old its version", () => {
    // A comment written at 10, the counter deleted at 20, the backfill counting the comment again at 10; then
    // the comment is deleted: its event's version is just after 10, before the deletion's time.
    const recreated: CounterRead = { exists: true, unique: false, since: t(20) };
    const gone = planObservations(read([["a", { counted: 1, version: t(10) }]], recreated), [obs("a", 0, versionJustAfter({ seconds: 10, nanoseconds: 0 }))], "event");
    expect([gone.delta, gone.counter, gone.covered]).toEqual([-1, "shard", 0]);
    const stars = planObservations(read([["r", { counted: 5, version: t(10) }]], recreated), [obs("r", 0, versionJustAfter({ seconds: 10, nanoseconds: 0 }))], "event");
    expect(stars.delta).toBe(-5);
    // Without a record, it writes one that counts 0 and moves nothing; an event that counts something stays covered.
    const late = planObservations(read([["a", null]], recreated), [obs("a", 0, t(15))], "event");
    expect([late.writes.map((w) => w.counted), late.delta, late.counter]).toEqual([[0], 0, "none"]);
    expect(planObservations(read([["a", { counted: 0, version: t(15) }]], recreated), [obs("a", 1, t(12))], "event").covered).toBe(1);
  });
});

describe("a mirror onto documents a rule watches", () => {
  const pairs = (mirrors: string, rules: string) =>
    watchedMirrors(parseMirrorRules("MIRRORS", mirrors), parseDocumentCounterRules("DOCUMENT_COUNTERS", rules)).map(({ mirror, rule }) => [mirror.source, rule.source]);

  it("names each MIRRORS rule whose target documents a DOCUMENT_COUNTERS rule watches, whatever field it writes", () => {
    expect(pairs("post-{id}-comments=posts/{id}:commentCount", "posts/{p}[published==true]=published-posts,posts/{p}/comments/{c}=post-{p}-comments")).toEqual([
      ["post-{id}-comments=posts/{id}:commentCount", "posts/{p}[published==true]=published-posts"],
    ]);
    // A literal document of the pattern, a placeholder segment that can fill a literal one, a literal target.
    expect(pairs("page-{id}=pages/p-{id}:n", "pages/p-home/visits/{v}=x,pages/{x}=y")).toEqual([["page-{id}=pages/p-{id}:n", "pages/{x}=y"]]);
    expect(pairs("page-{id}=pages/p-{id}/visits/all:n", "pages/p-home/visits/{v}=home-visits")).toEqual([["page-{id}=pages/p-{id}/visits/all:n", "pages/p-home/visits/{v}=home-visits"]]);
    expect(pairs("page-{id}=pages/p-{id}/visits/all:n", "pages/home/visits/{v}=home-visits")).toEqual([]);
    expect(pairs("site=stats/site:views", "stats/{s}=stat-docs")).toEqual([["site=stats/site:views", "stats/{s}=stat-docs"]]);
  });

  it("leaves a mirror onto a document no rule watches: another collection, or a document of a subcollection", () => {
    expect(pairs("post-{id}-comments=posts/{id}/stats/counts:comments", "posts/{p}=posts-count,posts/{p}/comments/{c}=post-{p}-comments")).toEqual([]);
    expect(pairs("post-{id}-comments=articles/{id}:commentCount", "posts/{p}=posts-count")).toEqual([]);
  });
});
