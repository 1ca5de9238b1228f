// The backfill's guard against a typo (docs/documents.md, "A typo in a rule"): a rule that names `coments`
// for `comments`, or a condition on `state` for `status`, passes every check of its syntax, and the backfill
// then takes every counted document out of its counters. So a backfill first reads what it would do (a dry
// run) and refuses to write, unless forced, when a rule finds no document at all while its counters count
// something, or would take out most of what they count; each refusal is one line naming the rule, what it
// would take out and the likely typo. A dry run shows the same lines first. A rule that finds no document
// and counts nothing (a new app without comments yet) loses nothing: it gets a note, not a refusal.
// Pure, no Firebase import.
import type { Condition } from "../model/conditions";
import type { Listing } from "./match";

/** What a dry run saw of one rule. */
export interface RuleSight {
  /** The rule as written, and its position in the param. */
  rule: string;
  position: number;
  conditions: readonly Condition[];
  /** The summed field; null for a count. */
  field: string | null;
  /** Where its documents are listed from (one counter's, with --counter). */
  listing: Listing;
  /** The run is of one counter (--counter): one with no document and nothing counted is no sign of a typo (a post without comments). */
  oneCounter: boolean;
  /** Documents of the rule seen. */
  seen: number;
  /** What its counters' records counted when the run listed them. */
  held: number;
  /** What its counters would gain (negative: lose). */
  delta: number;
  /** Of the documents seen, how many lack each field the rule reads (its conditions' and its summed field). */
  missing: ReadonlyMap<string, number>;
}

/** The lines that refuse a backfill (empty: nothing looks like a typo that would cost a count). */
export function backfillWarnings(sights: readonly RuleSight[]): string[] {
  return sights.flatMap((sight) => {
    const warning = warningOf(sight);
    return warning === null ? [] : [`rule ${sight.position} "${sight.rule}" ${warning}`];
  });
}

/**
 * The lines that note, without refusing, a rule that finds no document and whose counters count nothing: a
 * typo then costs no count (the run writes nothing for it), and a new app simply has no comments yet.
 */
export function backfillNotices(sights: readonly RuleSight[]): string[] {
  return sights.flatMap((s) => (s.seen === 0 && !s.oneCounter && takesOf(s) === null ? [`rule ${s.position} "${s.rule}" finds no document at all (${whereOf(s)}): a typo in its document path? Its counters count nothing, so the run goes on`] : []));
}

function takesOf(s: RuleSight): string | null {
  const lost = -s.delta;
  return s.held > 0 && lost > 0 ? `would take out ${lost} of the ${s.held} its counters count` : null;
}

function whereOf(s: RuleSight): string {
  return "collection" in s.listing ? `the collection ${s.listing.collection} holds none` : `no collection ${s.listing.group} holds one`;
}

function warningOf(s: RuleSight): string | null {
  const takes = takesOf(s);
  if (takes === null) return null;
  if (s.seen === 0) return `finds no document at all (${whereOf(s)}) and ${takes}: a typo in its document path?`;
  if (2 * -s.delta <= s.held) return null;
  return `${takes} (it saw ${s.seen} document${s.seen === 1 ? "" : "s"}): ${likelyTypo(s)}`;
}

/** A field the rule reads that no document seen has, if any: the likely typo; else its conditions or field in general. */
function likelyTypo(s: RuleSight): string {
  for (const condition of s.conditions) {
    if (s.missing.get(condition.field) === s.seen) return `none of them has the field ${condition.field} that its condition ${condition.source} reads: a typo in the rule?`;
  }
  if (s.field !== null && s.missing.get(s.field) === s.seen) return `none of them has the field ${s.field} that it sums: a typo in the rule?`;
  const reads = [...s.conditions.map((c) => c.source), ...(s.field === null ? [] : [`:${s.field}`])].join("");
  return reads === "" ? "its documents are gone: deleted while no trigger counted them?" : `most of them no longer match ${reads}: a typo in the rule?`;
}

/** The refusal's message: the lines, and the way past them. */
export function refusalOf(warnings: readonly string[], force: string): string {
  return `backfill refused, nothing written: ${warnings.join("; ")}. If that is what you mean, ${force}`;
}
