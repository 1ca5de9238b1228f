// DOCUMENT_COUNTERS: counters of an app's own documents (docs/documents.md). Rules, comma-separated, each
// `DOCUMENT_PATTERN[CONDITION]...[:FIELD]=ID_PATTERN`:
//   posts/{post}/comments/{comment}=post-{post}-comments       every comment of a post
//   posts/{post}/comments/{c}[status==published]=post-{post}-published
//   products/{p}/ratings/{r}:stars=product-{p}-stars            the sum of an integer field
//   users/{uid}=users-count                                     a literal counter id
//   posts/{p}[status==published]=author-{=author}-published     the counter id from a field
// DOCUMENT_PATTERN is a document path whose collection ids are literal and whose document ids are literal
// or `{name}` wildcards, the last one a wildcard (every document there is counted). ID_PATTERN is a counter
// id with at most one placeholder, a wildcard of the pattern other than the last, or a field of the document
// (`posts/{p}[status==published]=author-{=author}-published`: each author's published posts). Conditions are those of
// conditions.ts. A counter id two rules could name is refused: a counter counts the documents of one rule.
// Pure, no Firebase import: the functions, the preflight and the command line share it; what a rule says
// of one document (its counter, its contribution) is document-match.ts.
import { ruleSeparator, splitConditions, type Condition } from "./conditions";
import { checkFieldPath } from "./mirror-rules";
import { COUNTERS } from "./paths";
import { idsCanCoincide, parseCounterIdPattern, parseListParam, type Template } from "./patterns";

/** The param. */
export const DOCUMENT_COUNTERS = "DOCUMENT_COUNTERS";

/** One segment of a document pattern: a literal id, or a wildcard that matches any document id. */
export type Segment = { literal: string } | { wildcard: string };

export interface DocumentPattern {
  /** As written (`posts/{post}/comments/{comment}`). */
  source: string;
  segments: Segment[];
  /**
   * The pattern with each wildcard written as `*`, whatever its name: rules with the same key watch the same
   * documents, and share one trigger (document-triggers.ts).
   */
  key: string;
}

export interface DocumentRule {
  /** The rule as written (trimmed). */
  source: string;
  /** 1-based, in the param. */
  position: number;
  document: DocumentPattern;
  /** The document counts only while every one holds. */
  conditions: Condition[];
  /** The summed integer field (a dotted path); null: the rule counts documents. */
  field: string | null;
  /**
   * The counter id's placeholder, when it is a field of the document (`{=author}`: a dotted path); null when it
   * is a wildcard of the path or there is none. The template's placeholder is then `=FIELD` (no wildcard's name
   * starts with `=`), and a document counts toward the counter its field names now (document-match.ts).
   */
  idField: string | null;
  counter: Template;
}

const FORM = "DOCUMENT_PATTERN[CONDITION]...[:FIELD]=ID_PATTERN (e.g. posts/{post}/comments/{comment}=post-{post}-comments)";
const WILDCARD = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const LITERAL = /^[A-Za-z0-9_-]+$/;

/** Parses a document pattern; throws an Error saying what is wrong (callers add which rule). */
export function parseDocumentCounterPattern(text: string): DocumentPattern {
  const shown = JSON.stringify(text);
  if (text === "") throw new Error("has an empty document path");
  const parts = text.split("/");
  if (parts.some((part) => part === "")) throw new Error(`has a document path ${shown} with an empty segment`);
  if (parts.length % 2 !== 0) {
    throw new Error(`has a document path ${shown} with ${parts.length} segments: a document path has an even number (collection/document[/collection/document...])`);
  }
  const names = new Set<string>();
  const segments = parts.map((part, i): Segment => {
    const wildcard = WILDCARD.exec(part);
    if (wildcard === null) {
      if (part.includes("{") || part.includes("}")) throw new Error(`has a segment ${JSON.stringify(part)} in ${shown}: a wildcard is a whole segment, {name} with an identifier name`);
      if (!LITERAL.test(part)) throw new Error(`has a segment ${JSON.stringify(part)} in ${shown} with a character other than A-Z, a-z, 0-9, _ and -`);
      return { literal: part };
    }
    const name = wildcard[1]!;
    if (i % 2 === 0) throw new Error(`has {${name}} in ${shown} where a collection id goes: a wildcard stands for a document id only`);
    if (names.has(name)) throw new Error(`has the wildcard {${name}} twice in ${shown}`);
    names.add(name);
    return { wildcard: name };
  });
  if (!("wildcard" in segments[segments.length - 1]!)) {
    throw new Error(`has a document path ${shown} whose last segment is not a wildcard: write {name} there, and every document of that collection is counted`);
  }
  if (parts[0] === COUNTERS) throw new Error(`has a document path ${shown} in the ${COUNTERS} collection, which belongs to the counters themselves`);
  const key = segments.map((s) => ("literal" in s ? s.literal : "*")).join("/");
  return { source: text, segments, key };
}

/** The wildcards' names of a pattern, in order. */
export function wildcardsOf(pattern: DocumentPattern): string[] {
  return pattern.segments.flatMap((s) => ("wildcard" in s ? [s.wildcard] : []));
}

/** Parses one rule; throws an Error saying what is wrong (callers add which rule). */
function parseRule(text: string, position: number): DocumentRule {
  if (text === "") throw new Error("is empty");
  const eq = ruleSeparator(text);
  if (eq === -1) throw new Error(`has no "=" outside its conditions: write ${FORM}`);
  const left = text.slice(0, eq).trim();
  const right = text.slice(eq + 1).trim();
  if (ruleSeparator(right) !== -1) throw new Error('has more than one "=" outside its conditions');
  const split = splitConditions(left);
  let path = split.path;
  let field: string | null = null;
  if (split.conditions.length === 0) {
    const colon = path.indexOf(":");
    if (colon !== -1) {
      field = path.slice(colon + 1).trim();
      path = path.slice(0, colon).trim();
    }
  } else {
    if (path.includes(":")) throw new Error("has a :FIELD before its conditions: write it after them, posts/{p}/ratings/{r}[visible==true]:stars");
    if (split.rest !== "") {
      if (!split.rest.startsWith(":")) throw new Error(`has ${JSON.stringify(split.rest)} after its conditions, where only :FIELD may follow them`);
      field = split.rest.slice(1).trim();
    }
  }
  if (field !== null) {
    if (field.includes(":")) throw new Error('has more than one ":"');
    checkFieldPath(field);
  }
  const document = parseDocumentCounterPattern(path);
  const { idField, idText } = fieldPlaceholder(right);
  let counter: Template;
  try {
    counter = parseCounterIdPattern(idText);
  } catch (error) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(right)} that ${error instanceof Error ? error.message : String(error)}`);
  }
  const wildcards = wildcardsOf(document);
  if (idField !== null) return { source: text, position, document, conditions: split.conditions, field, idField, counter: { ...counter, source: right, placeholder: `=${idField}` } };
  if (counter.placeholder !== null && !wildcards.slice(0, -1).includes(counter.placeholder)) {
    const last = wildcards[wildcards.length - 1]!;
    throw new Error(
      counter.placeholder === last
        ? `uses {${last}}, the document's own id, in the counter-id pattern: that would make one counter per document; use a wildcard of a parent (${wildcards.slice(0, -1).map((w) => `{${w}}`).join(", ") || "none here"}) or a literal id`
        : `uses {${counter.placeholder}} in the counter-id pattern, which is not a wildcard of ${document.source}`,
    );
  }
  return { source: text, position, document, conditions: split.conditions, field, idField: null, counter };
}

const FIELD_PLACEHOLDER = /\{=([^{}]*)\}/;

/**
 * A counter-id pattern's `{=FIELD}` (the id part from a field of the document): the field, and the pattern with
 * a plain placeholder in its place for the id pattern's own checks; no field when it has none.
 */
function fieldPlaceholder(right: string): { idField: string | null; idText: string } {
  const match = FIELD_PLACEHOLDER.exec(right);
  if (match === null) return { idField: null, idText: right };
  const idText = right.replace(match[0], "{field}");
  if (idText.includes("{=") || idText.replace("{field}", "").includes("{")) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(right)} with more than one placeholder: one, a wildcard of the path or {=FIELD}`);
  }
  const idField = match[1]!.trim();
  try {
    checkFieldPath(idField);
  } catch (error) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(right)} whose {=FIELD} ${error instanceof Error ? error.message : String(error)}`);
  }
  return { idField, idText };
}

/**
 * Parses a DOCUMENT_COUNTERS value (comma-separated rules; empty = none), once per value. Throws a
 * PatternError naming the param, the rule's position and the rule, and what is wrong with it, including a
 * counter id an earlier rule could name too.
 */
export function parseDocumentCounterRules(param: string, value: string): DocumentRule[] {
  // parseListParam parses the rules in order, so `earlier` holds the rules before the one being parsed.
  const earlier: DocumentRule[] = [];
  return parseListParam(param, value, "rule", (entry) => {
    const rule = parseRule(entry, earlier.length + 1);
    const i = earlier.findIndex((e) => idsCanCoincide(e.counter, rule.counter));
    if (i !== -1) {
      throw new Error(
        `can name the same counter as rule ${i + 1} (${earlier[i]!.source}): ${earlier[i]!.counter.source} and ${rule.counter.source} can be one id, ` +
          "and a counter counts the documents of one rule; give each rule counters of its own",
      );
    }
    earlier.push(rule);
    return rule;
  });
}

/** The rule that names `counterId`, if any (at most one can: parseDocumentCounterRules). */
export function ruleNaming(rules: readonly DocumentRule[], counterId: string): DocumentRule | undefined {
  return rules.find((rule) => matchesCounter(rule, counterId));
}

function matchesCounter(rule: DocumentRule, counterId: string): boolean {
  const { prefix, placeholder, suffix } = rule.counter;
  if (placeholder === null) return counterId === prefix;
  return counterId.length > prefix.length + suffix.length && counterId.startsWith(prefix) && counterId.endsWith(suffix) && LITERAL.test(counterId.slice(prefix.length, counterId.length - suffix.length));
}

/** The rule whose counters a counter-id pattern (another param's, or migrate-extension's --counter) can name, if any. */
export function ruleSharingIds(rules: readonly DocumentRule[], counter: Template): DocumentRule | undefined {
  return rules.find((rule) => idsCanCoincide(rule.counter, counter));
}

/**
 * Why the firestore-counter extension's amounts never move into a document counter (migrate-extension, the
 * fold): the counter counts its documents, and a count of documents that the extension kept needs no
 * migration (the backfill counts the documents themselves).
 */
export function noExtensionAmounts(rule: DocumentRule): string {
  return (
    `they count documents (DOCUMENT_COUNTERS rule ${rule.position} "${rule.source}"), and only their documents move them: ` +
    "a count of documents that the extension kept needs no migration, the backfill counts the documents themselves (docs/from-the-extension.md)"
  );
}

/** A rule as the preflight and the docs show it. */
export function describeDocumentRule(rule: DocumentRule): string {
  const what = rule.field === null ? "counts" : `sums ${rule.field} of`;
  const conditions = rule.conditions.length === 0 ? "" : ` while ${rule.conditions.map((c) => c.source).join("")}`;
  return `${rule.counter.source} ${what} ${rule.document.source}${conditions}`;
}

/**
 * Other params' patterns that can name a counter a rule names: UNIQUE_COUNTERS (a unique counter counts
 * members), AUTO_CREATE (it would create the counter empty) and EXTENSION_COUNTERS (its amounts would add to
 * the count). One message per clash, naming both; empty when none. Pure: the preflight's check.
 */
export function documentRuleClashes(rules: readonly DocumentRule[], others: Record<string, readonly { source: string; counter: Template }[]>): string[] {
  const clashes: string[] = [];
  for (const rule of rules) {
    for (const [param, list] of Object.entries(others)) {
      for (const other of list) {
        if (!idsCanCoincide(rule.counter, other.counter)) continue;
        clashes.push(
          `${DOCUMENT_COUNTERS}: rule ${rule.position} "${rule.source}" names counters that ${param}'s ${JSON.stringify(other.source)} also names ` +
            `(${rule.counter.source} and ${other.counter.source} can be one id): only its documents may move a document counter`,
        );
      }
    }
  }
  return clashes;
}
