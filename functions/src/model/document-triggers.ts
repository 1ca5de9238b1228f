// The triggers DOCUMENT_COUNTERS deploys: one onDocumentWritten per distinct document pattern that a rule
// names (rules whose patterns differ only in their wildcards' names share one), exported by the main entry
// in one group object, DOCUMENT_TRIGGER_GROUP, so that an app's one-line re-export deploys them as
// `documentCounters-<name>` whatever its module system (functions/src/index.ts). A trigger's name is stable
// for its pattern: the pattern's literal segments, then a short hash of the pattern (so two patterns never
// share a name), within the 63 characters a function id may have. The preflight, the docs and the benchmark
// name them from here. Pure, no Firebase import.
import type { DocumentPattern, DocumentRule } from "./document-rules";

/** The main entry's export that holds the document triggers; deployed names are `documentCounters-<name>`. */
export const DOCUMENT_TRIGGER_GROUP = "documentCounters";

/** A function id has at most 63 characters (firebase-tools: letters, digits, _ and -); the group and its "-" take 17. */
const MAX_NAME = 63 - DOCUMENT_TRIGGER_GROUP.length - 1;
const HASH_LENGTH = 7;

export interface DocumentTrigger {
  /** The key in the group: letters, digits and _ only (firebase-functions turns a "-" of an export into a "."). */
  name: string;
  /** The deployed function's id: `documentCounters-<name>`. */
  id: string;
  /** The pattern's key (document-rules.ts): `posts/*` + `/comments/*`. */
  key: string;
  /** The document path the trigger listens to: the pattern with wildcards named {d1}, {d2}, ... */
  path: string;
  /** The rules it serves, in the param's order. */
  rules: DocumentRule[];
}

/** The triggers for a list of rules: one per distinct pattern key, in the order the rules first name them. */
export function documentTriggers(rules: readonly DocumentRule[]): DocumentTrigger[] {
  const byKey = new Map<string, DocumentTrigger>();
  for (const rule of rules) {
    const existing = byKey.get(rule.document.key);
    if (existing !== undefined) {
      existing.rules.push(rule);
      continue;
    }
    const name = triggerName(rule.document);
    const clash = [...byKey.values()].find((t) => t.name === name);
    // 32 bits of hash: never seen, but a deploy must not merge two patterns' triggers if it ever happens.
    if (clash !== undefined) throw new Error(`DOCUMENT_COUNTERS: the patterns ${clash.rules[0]!.document.source} and ${rule.document.source} would share the trigger name ${name}; write one of them differently`);
    byKey.set(rule.document.key, { name, id: `${DOCUMENT_TRIGGER_GROUP}-${name}`, key: rule.document.key, path: triggerPath(rule.document), rules: [rule] });
  }
  return [...byKey.values()];
}

/** The trigger name of a pattern: `posts_comments_` and a hash of `posts/*` + `/comments/*`. */
export function triggerName(pattern: DocumentPattern): string {
  const literals = pattern.segments
    .flatMap((s) => ("literal" in s ? [s.literal.replace(/-/g, "_")] : []))
    .join("_")
    .slice(0, MAX_NAME - HASH_LENGTH - 1);
  return `${literals}_${hash(pattern.key)}`;
}

/** The path a trigger listens to: literal segments as they are, wildcards {d1}, {d2}, ... in order. */
export function triggerPath(pattern: DocumentPattern): string {
  let n = 0;
  return pattern.segments.map((s) => ("literal" in s ? s.literal : `{d${++n}}`)).join("/");
}

/** FNV-1a (32 bits) of the text, in base 36, HASH_LENGTH characters: stable across versions and machines. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (const char of text) {
    h ^= char.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36).padStart(HASH_LENGTH, "0");
}
