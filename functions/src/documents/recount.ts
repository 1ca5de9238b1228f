// Which document counters are kept by recount, and the query whose count() is such a counter's total
// (docs/documents.md, "Two ways to keep a count"). A count rule (no :FIELD) whose documents for one counter
// lie in one collection (every wildcard before the last is the counter's own, or literal) is recounted: its
// conditions become equality filters on that collection, with exactly the matching semantics of
// model/conditions.ts (Firestore's `==`: numbers by value, `null` only where the field holds null, a dotted
// path into maps, never across types); a counter id from a field (`{=author}`) adds the filter field == its id
// part. A sum (`:FIELD`: Firestore's sum() adds doubles and skips what is no
// number, where the counter adds safe integers only) and documents over several collections (a wildcard that is
// not the counter's: no single query holds them) are kept by records. Pure, no Firebase import.
import { bindingOfCounter, listingOf } from "./match";
import { ruleNaming, type DocumentRule } from "../model/document-rules";
import type { RecountQuery } from "../rollup/store";

/** The query of `counterId`'s documents under `rule` (which names it), or null when the rule's counters are kept by records. */
export function recountQueryOf(rule: DocumentRule, counterId: string): RecountQuery | null {
  if (rule.field !== null) return null;
  const binding = bindingOfCounter(rule, counterId);
  const listing = listingOf(rule.document, binding);
  if (!("collection" in listing)) return null;
  const filters = rule.conditions.map((c) => ({ field: c.field, value: c.value }));
  // A counter id from a field (`{=author}`): the counter's documents are those whose field holds its id part.
  if (rule.idField !== null) filters.push({ field: rule.idField, value: binding[`=${rule.idField}`]! });
  return { collection: listing.collection, filters };
}

/** Whether `rule`'s counters are kept by recount (the same for every counter of a rule). */
export function isRecountRule(rule: DocumentRule): boolean {
  if (rule.field !== null) return false;
  const { placeholder } = rule.counter;
  // Every wildcard but the document's own is the counter's: fixed by its id.
  return rule.document.segments.slice(0, -1).every((s) => "literal" in s || s.wildcard === placeholder);
}

/** The query of `counterId` under the rule of `rules` that names it; null when none does or that rule keeps by records. */
export function recountQueryFor(rules: readonly DocumentRule[], counterId: string): RecountQuery | null {
  const rule = ruleNaming(rules, counterId);
  return rule === undefined ? null : recountQueryOf(rule, counterId);
}
