// What a DOCUMENT_COUNTERS rule (document-rules.ts) says of one document: whether its path is one the rule
// watches, which counter it counts in (from its path, or from a field as its data stands; or why it cannot:
// a value that no counter id can hold), what it contributes as its data stands (1, the field's value, or 0
// while a condition fails or it is gone), and what a write changes per counter (changesOf). And where a rule's documents are listed from (backfill, reconcile). Pure, no Firebase import.
import { allHold, fieldValue } from "../model/conditions";
import type { DocumentPattern, DocumentRule, Segment } from "../model/document-rules";
import { fillTemplate } from "../model/patterns";

/** counterId is 1-128 characters of these (docs/api.md). */
const ID_PART = /^[A-Za-z0-9_-]+$/;
const MAX_ID_LENGTH = 128;

/** The wildcards' values if `path` is one of the pattern's documents, else null. */
export function matchDocument(pattern: DocumentPattern, path: string): Record<string, string> | null {
  const parts = path.split("/");
  if (parts.length !== pattern.segments.length) return null;
  const binding: Record<string, string> = {};
  for (const [i, segment] of pattern.segments.entries()) {
    const part = parts[i]!;
    if (part === "") return null;
    if ("literal" in segment) {
      if (part !== segment.literal) return null;
    } else binding[segment.wildcard] = part;
  }
  return binding;
}

/** The counter a document of the rule counts in, or why it counts in none. */
export type CounterOf = { counterId: string } | { problem: string };

/**
 * The counter `path` counts in under `rule`, its data being `data` (undefined: it does not exist); null when
 * the rule does not watch that path, or, for a counter id from a field (`{=author}`), when the document does
 * not exist. A document whose wildcard value or field cannot be part of a counter id (a space, a dot, a
 * missing field, a number, an id beyond 128 characters) counts in none: the problem says why, for a warning.
 */
export function counterOf(rule: DocumentRule, path: string, data: Record<string, unknown> | undefined): CounterOf | null {
  const binding = matchDocument(rule.document, path);
  if (binding === null) return null;
  const { placeholder } = rule.counter;
  if (rule.idField !== null) {
    if (data === undefined) return null;
    const value = fieldValue(data, rule.idField);
    if (typeof value !== "string" || !ID_PART.test(value)) {
      const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 80)) : shownValue(value);
      return { problem: `its field ${rule.idField} holds ${shown}, which cannot be part of a counter id (a string of A-Z, a-z, 0-9, _ and -)` };
    }
    binding[`=${rule.idField}`] = value;
  } else if (placeholder !== null && !ID_PART.test(binding[placeholder]!)) {
    return { problem: `its {${placeholder}} ${JSON.stringify(binding[placeholder]!.slice(0, 80))} cannot be part of a counter id (A-Z, a-z, 0-9, _ and -)` };
  }
  const counterId = fillTemplate(rule.counter, binding);
  if (counterId.length > MAX_ID_LENGTH) return { problem: `its counter id would have ${counterId.length} characters, more than ${MAX_ID_LENGTH}` };
  return { counterId };
}

/** What a write changes in one counter: the document's contribution to it before and after. */
export interface CounterChange {
  counterId: string;
  was: Contribution;
  now: Contribution;
}

/**
 * What a write of `path` (its data before and after; undefined: absent) changes under `rule`, per counter it
 * counts in before or after: one counter, or two when a counter id from a field (`{=author}`) changed (the
 * document leaves one and enters the other); null when the rule does not watch the path. `problem`: why the
 * document, as it is after the write, counts in no counter (for a warning).
 */
export function changesOf(rule: DocumentRule, path: string, before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): { changes: CounterChange[]; problem?: string } | null {
  if (matchDocument(rule.document, path) === null) return null;
  const from = counterOf(rule, path, before);
  const to = counterOf(rule, path, after);
  const problem = to !== null && "problem" in to ? { problem: to.problem } : {};
  const ids = [from, to].flatMap((c) => (c !== null && "counterId" in c ? [c.counterId] : []));
  const changes = [...new Set(ids)].map((counterId): CounterChange => ({
    counterId,
    was: from !== null && "counterId" in from && from.counterId === counterId ? contributionOf(rule, before) : { value: 0 },
    now: to !== null && "counterId" in to && to.counterId === counterId ? contributionOf(rule, after) : { value: 0 },
  }));
  return { changes, ...problem };
}

/** What a document contributes to its counter, and, for a summed field that is not a safe integer, why it adds 0. */
export interface Contribution {
  value: number;
  problem?: string;
}

/**
 * What a document with `data` (undefined: it does not exist) contributes under `rule`: 0 while it does not
 * exist or a condition fails; else 1, or the summed field's value (0 when missing or not a safe integer).
 */
export function contributionOf(rule: DocumentRule, data: Record<string, unknown> | undefined): Contribution {
  if (data === undefined || !allHold(rule.conditions, data)) return { value: 0 };
  if (rule.field === null) return { value: 1 };
  const value = fieldValue(data, rule.field);
  if (typeof value === "number" && Number.isSafeInteger(value)) return { value };
  const shown = typeof value === "number" ? String(value) : shownValue(value);
  return { value: 0, problem: `${rule.field} holds ${shown}, not a safe integer: it adds 0` };
}

/** A field's value as a warning names it by its kind: "no value" when missing, "a null", "a string", "a boolean"… */
function shownValue(value: unknown): string {
  return value === undefined ? "no value" : `a ${value === null ? "null" : typeof value}`;
}

/**
 * Where the documents of a rule (and of one of its counters, when `binding` fixes the counter's wildcard)
 * are listed from: one collection when every segment before the last is literal or bound, else the
 * collection group of the last collection id, whose documents are then matched against the pattern.
 */
export type Listing = { collection: string } | { group: string };

export function listingOf(pattern: DocumentPattern, binding: Record<string, string> = {}): Listing {
  const parents = pattern.segments.slice(0, -1);
  const filled = parents.map((s: Segment) => ("literal" in s ? s.literal : binding[s.wildcard]));
  if (filled.every((s) => s !== undefined)) return { collection: filled.join("/") };
  return { group: (parents[parents.length - 1] as { literal: string }).literal };
}

/** The binding of a rule's counter placeholder for `counterId` (which the rule names): {} for a literal counter id; `=FIELD` for a field's. */
export function bindingOfCounter(rule: DocumentRule, counterId: string): Record<string, string> {
  const { prefix, placeholder, suffix } = rule.counter;
  if (placeholder === null) return {};
  return { [placeholder]: counterId.slice(prefix.length, counterId.length - suffix.length) };
}
