// Conditions on an app's document: `[FIELD==VALUE]`, one or more after a document pattern, in the rules of
// DOCUMENT_COUNTERS (a document counts only while they hold) and AUTO_CREATE (a counter creates itself only
// while its document exists and they hold): docs/api.md. FIELD is a dotted field path; VALUE is `true`,
// `false`, `null`, an integer, `'quoted text'` (a string even when it looks like a number or a boolean),
// else the text itself as a string. Numbers compare by value (1 equals 1.0). A value holds no `,`, `[`,
// `]` or `=`, so a rule list splits at its commas and a rule at its one `=` outside the brackets. Pure, no
// Firebase import: the functions and `npm run preflight` share it.
import { checkFieldPath } from "./mirror-rules";

/** What a condition compares the field with. */
export type ConditionValue = boolean | null | number | string;

/** One `[FIELD==VALUE]`. */
export interface Condition {
  /** As written, brackets included (`[status==published]`). */
  source: string;
  /** A dotted field path (`meta.status`). */
  field: string;
  value: ConditionValue;
}

/** A document pattern's text, the conditions that follow it, and what follows them (`:stars`, or ""). */
export interface WithConditions {
  path: string;
  conditions: Condition[];
  rest: string;
}

/**
 * Splits `posts/{id}[published==true][kind==post]:stars` into the path, its conditions and what follows
 * the last `]`. Throws an Error saying what is wrong (without context: callers add which rule).
 */
export function splitConditions(text: string): WithConditions {
  const open = text.indexOf("[");
  if (open === -1) {
    if (text.includes("]")) throw new Error('has a "]" without a "[" before it');
    return { path: text, conditions: [], rest: "" };
  }
  const path = text.slice(0, open).trim();
  const conditions: Condition[] = [];
  let at = open;
  while (at < text.length && text[at] === "[") {
    const close = text.indexOf("]", at);
    if (close === -1) throw new Error('has a "[" that is never closed');
    const inner = text.slice(at + 1, close);
    if (inner.includes("[")) throw new Error('has a "[" inside a condition');
    conditions.push(parseCondition(inner));
    at = close + 1;
    while (text[at] === " ") at += 1;
  }
  const rest = text.slice(at).trim();
  if (rest.includes("[") || rest.includes("]")) throw new Error("has text between its conditions: write them one after another, [A==1][B==2]");
  return { path, conditions, rest };
}

/** Parses `FIELD==VALUE` (the inside of one bracket); throws an Error saying what is wrong. */
export function parseCondition(inner: string): Condition {
  const source = `[${inner}]`;
  const eq = inner.indexOf("==");
  if (eq === -1) throw new Error(`has a condition ${JSON.stringify(source)} without "==": write [FIELD==VALUE]`);
  const field = inner.slice(0, eq).trim();
  const valueText = inner.slice(eq + 2).trim();
  if (valueText.includes("=")) throw new Error(`has a condition ${JSON.stringify(source)} with more than one "=="`);
  try {
    checkFieldPath(field);
  } catch (error) {
    throw new Error(`has a condition ${JSON.stringify(source)} that ${error instanceof Error ? error.message : String(error)}`);
  }
  if (valueText === "") throw new Error(`has a condition ${JSON.stringify(source)} with no value (write '' for the empty string)`);
  return { source, field, value: parseValue(valueText, source) };
}

function parseValue(text: string, source: string): ConditionValue {
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null") return null;
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    if (!Number.isSafeInteger(n)) throw new Error(`has a condition ${JSON.stringify(source)} whose number is not a safe integer (quote it for text: '${text}')`);
    return n;
  }
  if (text.startsWith("'")) {
    if (text.length < 2 || !text.endsWith("'")) throw new Error(`has a condition ${JSON.stringify(source)} whose quote is never closed`);
    return text.slice(1, -1);
  }
  if (text.endsWith("'")) throw new Error(`has a condition ${JSON.stringify(source)} whose quote is never opened`);
  return text;
}

/** The value at a dotted field path of a document's data, or undefined when a part is missing. */
export function fieldValue(data: unknown, field: string): unknown {
  let value: unknown = data;
  for (const segment of field.split(".")) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** Whether the document's data holds `condition`: the same type and value (numbers by value, so 1 equals 1.0). */
export function holds(condition: Condition, data: unknown): boolean {
  const actual = fieldValue(data, condition.field);
  if (condition.value === null) return actual === null;
  return actual === condition.value;
}

/** Whether every condition holds (no conditions: always). */
export function allHold(conditions: readonly Condition[], data: unknown): boolean {
  return conditions.every((condition) => holds(condition, data));
}

/** The conditions as written, for messages and docs (`[a==1][b==x]`). */
export function conditionsText(conditions: readonly Condition[]): string {
  return conditions.map((c) => c.source).join("");
}

/**
 * The index of the first `=` of `text` outside brackets and braces (a `{=FIELD}` placeholder) and not part of `==`, or -1: where a rule that may
 * hold conditions splits into its two sides.
 */
export function ruleSeparator(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (char === "[" || char === "{") depth += 1;
    else if (char === "]" || char === "}") depth = Math.max(0, depth - 1);
    else if (char === "=" && depth === 0) return i;
  }
  return -1;
}
