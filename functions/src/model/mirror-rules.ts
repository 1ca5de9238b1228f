// Mirrors: where a counter's total is also written, on the app's own documents (docs/mirrors.md).
// The param MIRRORS holds rules `COUNTER_ID_PATTERN=DOCUMENT_PATH_PATTERN:FIELD_PATH`, comma-separated,
// e.g. `post-{id}-likes=posts/{id}:likeCount`; a field may end with `@today`, `@last7Days` or `@last30Days`
// to hold that window of a windowed counter instead (docs/windows.md). This module parses them (once per value) and says, for a
// counter id, which document fields mirror it. Pure, no Firebase import: `npm run preflight` and the
// functions share it, so a rule means the same thing at deploy time and at run time. The counter-id side
// is the one matcher of patterns.ts, which UNIQUE_COUNTERS uses too.
//
// Who writes a mirror, and why it stays exact: every write of a counter's `total` (the rollup's commit,
// reset, create) writes the same value to each existing target in the same atomic write, so the target
// field can only ever hold a value the parent held at the same commit; after the rollup settles, target =
// total. A target document is never created (the write is an update, which needs it to exist). Two
// things would break that, and both are refused when the rules are parsed (so by the preflight and the
// functions alike): a target that can land in the counters' own collection (another counter's total, or
// its bookkeeping), and two rules that can name one field of one document (or a field and the map that
// holds it), where two counters' totals would overwrite each other.
import { COUNTERS } from "./paths";
import { fillTemplate, matchTemplate, parseCounterIdPattern, parseListParam, parseTemplate, splitRule, type Template } from "./patterns";
import { WINDOW_NAMES, type WindowName } from "./windows";

/** One parsed MIRRORS rule. */
export interface MirrorRule {
  /** The rule as written (trimmed). */
  source: string;
  counter: Template;
  document: Template;
  /** The target field, as a dotted path (`stats.views`). */
  field: string;
  /** What the field holds: the total, or one window of a windowed counter (the suffix `@today`, …). */
  value: MirrorValue;
}

/** What a mirror holds: `total` (no suffix), or `windows.today`, `.last7Days`, `.last30Days` (`@today`, …). */
export type MirrorValue = "total" | WindowName;

/** Where one counter's total (or one of its windows) is mirrored: a document path, a field path, which value. */
export interface MirrorTarget {
  path: string;
  field: string;
  value: MirrorValue;
}

/** A field path segment: an identifier, so that a dotted path means exactly its segments in update(). */
const FIELD_SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Characters a document path pattern may hold outside its placeholder: id characters and `/`. */
const PATH_CHAR = /^[A-Za-z0-9_\-/]$/;

/** Parses one rule; throws an Error saying what is wrong (callers add which rule). */
function parseMirrorRule(text: string): MirrorRule {
  const { left, right } = splitRule(text, "COUNTER_ID_PATTERN=DOCUMENT_PATH_PATTERN:FIELD_PATH");
  const colon = right.indexOf(":");
  if (colon === -1) throw new Error('has no ":" between the document path and the field path');
  if (right.indexOf(":", colon + 1) !== -1) throw new Error('has more than one ":"');
  const pathText = right.slice(0, colon).trim();
  const { field, value } = parseFieldAndValue(right.slice(colon + 1).trim());

  let counter: Template;
  try {
    counter = parseCounterIdPattern(left);
  } catch (error) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(left)} that ${message(error)}`);
  }
  const document = parseDocumentPattern(pathText);
  if (counter.placeholder !== document.placeholder) {
    if (counter.placeholder === null) throw new Error(`uses {${document.placeholder}} in the document path but not in the counter-id pattern`);
    if (document.placeholder === null) throw new Error(`uses {${counter.placeholder}} in the counter-id pattern but not in the document path`);
    throw new Error(`names the placeholder {${counter.placeholder}} in the counter-id pattern but {${document.placeholder}} in the document path`);
  }
  checkFieldPath(field);
  return { source: text, counter, document, field, value };
}

/** `views7d@last7Days`: the field, and which value it mirrors (no suffix: the total). */
function parseFieldAndValue(text: string): { field: string; value: MirrorValue } {
  const at = text.indexOf("@");
  if (at === -1) return { field: text, value: "total" };
  const suffix = text.slice(at + 1).trim();
  if (!(WINDOW_NAMES as readonly string[]).includes(suffix)) {
    throw new Error(`has the suffix ${JSON.stringify("@" + suffix.slice(0, 20))}: a window is @${WINDOW_NAMES.join(", @")} (or no suffix for the total)`);
  }
  return { field: text.slice(0, at).trim(), value: suffix as WindowName };
}

/**
 * Parses a document path pattern (`posts/{id}`): an even number of segments, not in the counters'
 * collection (also not when its placeholder is filled). Shared with AUTO_CREATE (auto-create-rules.ts) and EXTENSION_COUNTERS (extension-rules.ts).
 */
export function parseDocumentPattern(text: string): Template {
  if (text === "") throw new Error("has an empty document path");
  let template: Template;
  try {
    template = parseTemplate(text, PATH_CHAR, "a document path character (A-Z, a-z, 0-9, _, - or /)");
  } catch (error) {
    throw new Error(`has a document path ${JSON.stringify(text)} that ${message(error)}`);
  }
  // Check the shape with a stand-in value: a placeholder fills 1+ id characters, never a `/`.
  const segments = fillTemplate(template, template.placeholder === null ? {} : { [template.placeholder]: "x" }).split("/");
  if (segments.some((segment) => segment === "")) throw new Error(`has a document path ${JSON.stringify(text)} with an empty segment`);
  if (segments.length % 2 !== 0) {
    throw new Error(
      `has a document path ${JSON.stringify(text)} with ${segments.length} segments: a document path has an even number (collection/document[/collection/document...])`,
    );
  }
  if (segments[0] === COUNTERS) {
    throw new Error(`has a document path ${JSON.stringify(text)} in the ${COUNTERS} collection, which belongs to the counters themselves`);
  }
  const first = segmentsOf(template)[0]!;
  if (typeof first !== "string" && segmentCanBe(first, COUNTERS)) {
    throw new Error(
      `has a document path ${JSON.stringify(text)} whose first segment becomes "${COUNTERS}" when {${template.placeholder}} is ` +
        `${JSON.stringify(COUNTERS.slice(first.prefix.length, COUNTERS.length - first.suffix.length))}: the ${COUNTERS} collection belongs to the counters themselves`,
    );
  }
  return template;
}

/**
 * A document path pattern as its segments: literal text, or the one segment that holds the placeholder
 * (`p-{id}-x` is prefix "p-", suffix "-x"). A placeholder never fills a `/`, so a filled path has exactly
 * these segments, each literal one as written.
 */
export type PathSegment = string | { prefix: string; suffix: string };

export function segmentsOf(template: Template): PathSegment[] {
  if (template.placeholder === null) return template.prefix.split("/");
  const before = template.prefix.split("/");
  const after = template.suffix.split("/");
  return [...before.slice(0, -1), { prefix: before[before.length - 1]!, suffix: after[0]! }, ...after.slice(1)];
}

/** Whether a placeholder segment can be filled (1+ id characters) to read exactly `text`. */
export function segmentCanBe(segment: { prefix: string; suffix: string }, text: string): boolean {
  if (text.length <= segment.prefix.length + segment.suffix.length) return false;
  if (!text.startsWith(segment.prefix) || !text.endsWith(segment.suffix)) return false;
  return /^[A-Za-z0-9_-]+$/.test(text.slice(segment.prefix.length, text.length - segment.suffix.length));
}

/**
 * Whether two document path patterns can name the same document (for some value of each placeholder).
 * Exact: the filled paths must have the same segments; a literal segment against a placeholder segment
 * must be a filling of it; two placeholder segments (id characters only, each filled with 1+ of them)
 * share a filling if and only if one prefix starts the other and one suffix ends the other.
 */
export function documentsCanCoincide(a: Template, b: Template): boolean {
  const sa = segmentsOf(a);
  const sb = segmentsOf(b);
  if (sa.length !== sb.length) return false;
  return sa.every((x, i) => {
    const y = sb[i]!;
    if (typeof x === "string" && typeof y === "string") return x === y;
    if (typeof x === "string") return segmentCanBe(y as { prefix: string; suffix: string }, x);
    if (typeof y === "string") return segmentCanBe(x, y);
    const prefixes = x.prefix.startsWith(y.prefix) || y.prefix.startsWith(x.prefix);
    const suffixes = x.suffix.endsWith(y.suffix) || y.suffix.endsWith(x.suffix);
    return prefixes && suffixes;
  });
}

/** The same rule written twice (spaces aside): it maps every counter to the same target, harmlessly. */
function sameRule(a: MirrorRule, b: MirrorRule): boolean {
  return a.counter.source === b.counter.source && a.document.source === b.document.source && a.field === b.field && a.value === b.value;
}

/** Whether writing one field path can change the other: the same field, or one is a map holding the other. */
export function fieldsOverlap(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

/** Refuses a field path whose dot-separated parts are not identifiers (so that a dotted path means exactly its segments). */
export function checkFieldPath(field: string): void {
  if (field === "") throw new Error("has an empty field path");
  for (const segment of field.split(".")) {
    if (!FIELD_SEGMENT.test(segment)) {
      throw new Error(
        `has a field path ${JSON.stringify(field)} that is not valid: each dot-separated part must be letters, digits and _, not starting with a digit`,
      );
    }
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Parses a MIRRORS value (comma-separated rules; empty = none), once per value. Throws a PatternError
 * naming the param, the rule's position and the rule, and what is wrong with it.
 */
export function parseMirrorRules(param: string, value: string): MirrorRule[] {
  // parseListParam parses the rules in order, so `earlier` holds the rules before the one being parsed.
  const earlier: MirrorRule[] = [];
  return parseListParam(param, value, "rule", (entry) => {
    const rule = parseMirrorRule(entry);
    const i = earlier.findIndex((e) => !sameRule(e, rule) && documentsCanCoincide(e.document, rule.document) && fieldsOverlap(e.field, rule.field));
    if (i !== -1) {
      const other = earlier[i]!;
      const what = other.field === rule.field ? `the field ${rule.field}` : `the fields ${other.field} and ${rule.field} (one holds the other)`;
      throw new Error(
        `can write ${what} of the same document as rule ${i + 1} (${other.source}): ${other.document.source} and ` +
          `${rule.document.source} can name one document, where two counters' totals would overwrite each other; give each counter a field of its own`,
      );
    }
    earlier.push(rule);
    return rule;
  });
}

/** The targets that mirror `counterId`: one per matching rule, in the rules' order, without repeats. */
export function mirrorTargets(rules: readonly MirrorRule[], counterId: string): MirrorTarget[] {
  const targets: MirrorTarget[] = [];
  for (const rule of rules) {
    const binding = matchTemplate(rule.counter, counterId);
    if (binding === null) continue;
    const target = { path: fillTemplate(rule.document, binding), field: rule.field, value: rule.value };
    if (!targets.some((t) => t.path === target.path && t.field === target.field)) targets.push(target);
  }
  return targets;
}
