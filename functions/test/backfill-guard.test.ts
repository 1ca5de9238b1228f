// The backfill's guard against a typo in a rule (functions/src/documents/backfill-guard.ts): which dry runs it
// refuses, and the one line it says for each, naming the rule, what it would take out and the likely typo.
import { backfillNotices, backfillWarnings, type RuleSight } from "../src/documents/backfill-guard";
import { parseDocumentCounterRules } from "../src/model/document-rules";

function sight(rule: string, seen: Partial<RuleSight>): RuleSight {
  const [parsed] = parseDocumentCounterRules("DOCUMENT_COUNTERS", rule);
  return { rule, position: 1, conditions: parsed!.conditions, field: parsed!.field, listing: { group: "comments" }, oneCounter: false, seen: 0, held: 0, delta: 0, missing: new Map(), ...seen };
}

describe("backfillWarnings", () => {
  it("says nothing of a run that counts, or takes out less than half of what the rule's counters count", () => {
    expect(backfillWarnings([sight("posts/{p}/comments/{c}=p-{p}-c", { seen: 10, held: 0, delta: 10 })])).toEqual([]);
    expect(backfillWarnings([sight("posts/{p}/comments/{c}=p-{p}-c", { seen: 10, held: 10, delta: -5 })])).toEqual([]);
  });

  it("names a rule that finds no document at all, with what it would take out", () => {
    expect(backfillWarnings([sight("posts/{p}/coments/{c}=p-{p}-c", { listing: { group: "coments" }, held: 4384, delta: -4384 })])).toEqual([
      'rule 1 "posts/{p}/coments/{c}=p-{p}-c" finds no document at all (no collection coments holds one) and would take out 4384 of the 4384 its counters count: a typo in its document path?',
    ]);
  });

  it("only notes, without refusing, a rule that finds no document while its counters count nothing (an app without comments yet)", () => {
    const empty = sight("users/{u}=users", { listing: { collection: "user" } });
    expect(backfillWarnings([empty])).toEqual([]);
    expect(backfillNotices([empty])).toEqual(['rule 1 "users/{u}=users" finds no document at all (the collection user holds none): a typo in its document path? Its counters count nothing, so the run goes on']);
    expect(backfillNotices([sight("posts/{p}/coments/{c}=p-{p}-c", { held: 3, delta: -3 })])).toEqual([]);
    expect(backfillNotices([sight("posts/{p}/comments/{c}=p-{p}-c", { seen: 2, delta: 2 })])).toEqual([]);
  });

  it("lets one counter have no document when it counts nothing (a post without comments), but not when it would lose its count", () => {
    const one = { listing: { collection: "posts/p1/comments" }, oneCounter: true };
    expect(backfillWarnings([sight("posts/{p}/comments/{c}=p-{p}-c", one)])).toEqual([]);
    expect(backfillWarnings([sight("posts/{p}/comments/{c}=p-{p}-c", { ...one, held: 3, delta: -3 })])).toHaveLength(1);
  });

  it("names a field no document has, a condition's or the summed one, as the likely typo; else the conditions in general", () => {
    const condition = sight("posts/{p}/comments/{c}[state==published]=p-{p}-c", { seen: 50, held: 20, delta: -20, missing: new Map([["state", 50]]) });
    expect(backfillWarnings([condition])).toEqual([
      'rule 1 "posts/{p}/comments/{c}[state==published]=p-{p}-c" would take out 20 of the 20 its counters count (it saw 50 documents): none of them has the field state that its condition [state==published] reads: a typo in the rule?',
    ]);
    const sum = sight("products/{p}/ratings/{r}:strs=p-{p}-stars", { seen: 5, held: 17, delta: -17, missing: new Map([["strs", 5]]) });
    expect(backfillWarnings([sum])[0]).toContain("none of them has the field strs that it sums: a typo in the rule?");
    const some = sight("posts/{p}/comments/{c}[status==published]=p-{p}-c", { seen: 50, held: 20, delta: -15, missing: new Map([["status", 10]]) });
    expect(backfillWarnings([some])[0]).toContain("most of them no longer match [status==published]: a typo in the rule?");
    const gone = sight("posts/{p}/comments/{c}=p-{p}-c", { seen: 1, held: 20, delta: -19 });
    expect(backfillWarnings([gone])[0]).toContain("its documents are gone: deleted while no trigger counted them?");
  });
});
