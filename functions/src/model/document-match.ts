// What a DOCUMENT_COUNTERS rule (document-rules.ts) says of one document: whether its path is one the rule
// watches, which counter it counts in (or why it cannot: a wildcard's value that no counter id can hold),
// and what it contributes as its data stands (1, the field's value, or 0 while a condition fails or it is
// gone). And where a rule's documents are listed from (backfill, reconcile). Pure, no Firebase import.
import { allHold, fieldValue } from "./conditions";
import type { DocumentPattern, DocumentRule, Segment } from "./document-rules";
import { fillTemplate } from "./patterns";

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
 * The counter `path` counts in under `rule`; null when the rule does not watch that path. A document whose
 * wildcard value cannot be part of a counter id (a space, a dot, an id beyond 128 characters) counts in
 * none: the problem says why, for a warning.
 */
export function counterOf(rule: DocumentRule, path: string): CounterOf | null {
  const binding = matchDocument(rule.document, path);
  if (binding === null) return null;
  const { placeholder } = rule.counter;
  if (placeholder !== null && !ID_PART.test(binding[placeholder]!)) {
    return { problem: `its {${placeholder}} ${JSON.stringify(binding[placeholder]!.slice(0, 80))} cannot be part of a counter id (A-Z, a-z, 0-9, _ and -)` };
  }
  const counterId = fillTemplate(rule.counter, binding);
  if (counterId.length > MAX_ID_LENGTH) return { problem: `its counter id would have ${counterId.length} characters, more than ${MAX_ID_LENGTH}` };
  return { counterId };
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
  const shown = value === undefined ? "no value" : typeof value === "number" ? String(value) : `a ${value === null ? "null" : typeof value}`;
  return { value: 0, problem: `${rule.field} holds ${shown}, not a safe integer: it adds 0` };
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

/** The binding of a rule's counter wildcard for `counterId` (which the rule names): {} for a literal counter id. */
export function bindingOfCounter(rule: DocumentRule, counterId: string): Record<string, string> {
  const { prefix, placeholder, suffix } = rule.counter;
  if (placeholder === null) return {};
  return { [placeholder]: counterId.slice(prefix.length, counterId.length - suffix.length) };
}
