// Counter-id patterns: the one parser and matcher for params that name counters by their id
// (UNIQUE_COUNTERS, WINDOWED_COUNTERS, and the counter-id side of MIRRORS rules). A pattern is literal id characters with at
// most one placeholder `{name}` that matches 1+ characters of [A-Za-z0-9_-] (docs/mirrors.md).
// Pure, no Firebase import: the functions and `npm run preflight` share it, so a pattern means the same
// thing at deploy time and at run time.
import { CounterError } from "./errors";

/** What a placeholder matches, and what every literal character of a counter-id pattern must be. */
const ID_CHARS = /^[A-Za-z0-9_-]+$/;
/** A placeholder's name: an identifier, so `{id}`, `{postId}`, `{post_id}`. */
const PLACEHOLDER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** counterId is at most 128 characters (docs/api.md): a pattern that needs more can never match. */
const MAX_ID_LENGTH = 128;

/** A parsed template: `prefix{placeholder}suffix`, or a literal (placeholder null, suffix ""). */
export interface Template {
  /** The text as written (trimmed). */
  source: string;
  prefix: string;
  placeholder: string | null;
  suffix: string;
}

/** The placeholder's value in a matched id, by the placeholder's name; `{}` for a literal pattern. */
export type Binding = Record<string, string>;

/** A pattern list that does not parse. The message names the param and the offending pattern. */
export class PatternError extends Error {
  constructor(
    message: string,
    /** 1-based position of the offending pattern in the list. */
    readonly position: number,
  ) {
    super(message);
    this.name = "PatternError";
  }
}

/**
 * Splits `text` at its placeholder. Every literal character must match `literal` (one character class,
 * e.g. id characters); the placeholder must be `{name}` with an identifier name, at most once. Throws an
 * Error whose message says what is wrong (without context: callers add which rule).
 */
export function parseTemplate(text: string, literal: RegExp, literalName: string): Template {
  const open = text.indexOf("{");
  const close = text.indexOf("}");
  if (open === -1 && close === -1) {
    checkLiteral(text, literal, literalName);
    return { source: text, prefix: text, placeholder: null, suffix: "" };
  }
  if (close === -1) throw new Error('has a "{" that is never closed');
  if (open === -1 || close < open) throw new Error('has a "}" without a "{" before it');
  const placeholder = text.slice(open + 1, close);
  if (placeholder.includes("{")) throw new Error('has a "{" inside a placeholder');
  if (!PLACEHOLDER_NAME.test(placeholder)) {
    throw new Error(`has a placeholder "{${placeholder.slice(0, 40)}}" whose name is not an identifier (letters, digits, _)`);
  }
  const prefix = text.slice(0, open);
  const suffix = text.slice(close + 1);
  if (suffix.includes("{") || suffix.includes("}")) throw new Error("has more than one placeholder (at most one {name} is allowed)");
  checkLiteral(prefix, literal, literalName);
  checkLiteral(suffix, literal, literalName);
  return { source: text, prefix, placeholder, suffix };
}

function checkLiteral(part: string, literal: RegExp, literalName: string): void {
  for (const char of part) {
    if (!literal.test(char)) throw new Error(`has ${JSON.stringify(char)}, which is not ${literalName}`);
  }
}

/** Parses one counter-id pattern (e.g. `post-{id}-likes`); throws an Error saying what is wrong. */
export function parseCounterIdPattern(text: string): Template {
  if (text === "") throw new Error("is empty");
  const template = parseTemplate(text, /^[A-Za-z0-9_-]$/, "a counter-id character (A-Z, a-z, 0-9, _ or -)");
  const shortest = template.prefix.length + template.suffix.length + (template.placeholder === null ? 0 : 1);
  if (shortest > MAX_ID_LENGTH) {
    throw new Error(`can never match: it needs ${shortest} characters and a counterId has at most ${MAX_ID_LENGTH}`);
  }
  return template;
}

/** The binding if `value` matches `template`, else null. A placeholder matches 1+ id characters. */
export function matchTemplate(template: Template, value: string): Binding | null {
  if (template.placeholder === null) return value === template.prefix ? {} : null;
  const { prefix, suffix } = template;
  if (value.length <= prefix.length + suffix.length) return null;
  if (!value.startsWith(prefix) || !value.endsWith(suffix)) return null;
  const middle = value.slice(prefix.length, value.length - suffix.length);
  return ID_CHARS.test(middle) ? { [template.placeholder]: middle } : null;
}

/** `template` with its placeholder replaced by the binding's value (a literal template is returned as is). */
export function fillTemplate(template: Template, binding: Binding): string {
  if (template.placeholder === null) return template.prefix;
  const value = binding[template.placeholder];
  if (value === undefined) throw new Error(`no value for the placeholder {${template.placeholder}}`);
  return `${template.prefix}${value}${template.suffix}`;
}

/**
 * Splits a comma-separated param value into its entries, trimmed. An empty (or blank) value is an empty
 * list; an empty entry between commas is kept as "" so that the parser reports it with its position.
 */
export function splitList(value: string): string[] {
  if (value.trim() === "") return [];
  return value.split(",").map((entry) => entry.trim());
}

const memo = new Map<string, unknown[] | PatternError>();
const MEMO_MAX_ENTRIES = 64;

/**
 * Splits one rule of a list param, `ID_PATTERN=REST`, at its one "=" (both sides trimmed); throws an Error
 * saying what is wrong, with `form` (how to write a rule) when there is no "=".
 */
export function splitRule(text: string, form: string): { left: string; right: string } {
  if (text === "") throw new Error("is empty");
  const eq = text.indexOf("=");
  if (eq === -1) throw new Error(`has no "=": write ${form}`);
  const left = text.slice(0, eq).trim();
  const right = text.slice(eq + 1).trim();
  if (right.includes("=")) throw new Error('has more than one "="');
  return { left, right };
}

/**
 * Parses a param that holds a comma-separated list (UNIQUE_COUNTERS patterns, MIRRORS rules, COUNTER_KINDS
 * rules) with `parseOne`, which throws an Error saying what is wrong with one entry; it is called on the
 * entries in order. Memoized per param and value: a param's value is fixed for an instance's lifetime, so
 * it is parsed once, not once per request. A parse that depends on more than the value (COUNTER_KINDS
 * checks against MAX_SHARDS and MAX_DELTA) names that in `variant`, which is part of the memo's key.
 * Throws a PatternError naming the param, the first bad entry (`noun` and its 1-based position) and the
 * problem.
 */
export function parseListParam<T>(param: string, value: string, noun: string, parseOne: (entry: string) => T, variant = ""): T[] {
  const key = `${param}\u0000${noun}\u0000${variant}\u0000${value}`;
  let parsed = memo.get(key);
  if (parsed === undefined) {
    parsed = parseList(param, value, noun, parseOne);
    if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
    memo.set(key, parsed);
  }
  if (parsed instanceof PatternError) throw parsed;
  return parsed as T[];
}

function parseList<T>(param: string, value: string, noun: string, parseOne: (entry: string) => T): T[] | PatternError {
  const parsed: T[] = [];
  for (const [i, entry] of splitList(value).entries()) {
    try {
      parsed.push(parseOne(entry));
    } catch (error) {
      return entryError(param, noun, i + 1, entry, error);
    }
  }
  return parsed;
}

/** The error of a list entry that does not parse: the param, the entry's noun, position and text, and what is wrong. */
export function entryError(param: string, noun: string, position: number, entry: string, error: unknown): PatternError {
  const reason = error instanceof Error ? error.message : String(error);
  return new PatternError(`${param}: ${noun} ${position} ${JSON.stringify(entry.slice(0, 80))} ${reason}`, position);
}

/** A param of comma-separated counter-id patterns (e.g. UNIQUE_COUNTERS), parsed once per value. */
export function parseCounterIdPatterns(param: string, value: string): Template[] {
  return parseListParam(param, value, "pattern", parseCounterIdPattern);
}

/** Whether `counterId` matches any of `patterns`. */
export function matchesAny(patterns: readonly Template[], counterId: string): boolean {
  return patterns.some((pattern) => matchTemplate(pattern, counterId) !== null);
}

/**
 * A flag of a new counter that a param of counter-id patterns can reserve (UNIQUE_COUNTERS,
 * WINDOWED_COUNTERS): as requested, or, when omitted, whether the id matches. An id that matches can never
 * be created without the flag (`false` is invalid-argument, naming the field and the param, never the id).
 */
export function reservedFlag(field: string, param: string, counterId: string, requested: boolean | undefined, patterns: readonly Template[]): boolean {
  const reserved = matchesAny(patterns, counterId);
  if (reserved && requested === false) {
    throw new CounterError("invalid-argument", `${field} must be true or omitted: this counter id is reserved for ${field} counters (${param})`);
  }
  return requested ?? reserved;
}

/**
 * Whether every id that `narrow` matches also matches `wide` (so a rule on `narrow` listed after one on
 * `wide` can never be the first match). Exact for these patterns: a placeholder takes 1+ id characters,
 * so `narrow`'s ids all match `wide` if and only if `narrow` keeps `wide`'s prefix and suffix around its own
 * placeholder (a shorter prefix would let the placeholder put any character where `wide` needs one).
 */
export function matchesEveryIdOf(wide: Template, narrow: Template): boolean {
  if (narrow.placeholder === null) return matchTemplate(wide, narrow.prefix) !== null;
  if (wide.placeholder === null) return false;
  return narrow.prefix.startsWith(wide.prefix) && narrow.suffix.endsWith(wide.suffix);
}

/**
 * Whether some counter id matches both patterns (DOCUMENT_COUNTERS refuses a counter two rules could
 * name). Exact for these patterns: two literals must be equal; a literal must match the other pattern;
 * two placeholders (each 1+ id characters) share an id if and only if one prefix starts the other and one
 * suffix ends the other (fill the middle with enough characters that each placeholder takes 1+ of them).
 */
export function idsCanCoincide(a: Template, b: Template): boolean {
  if (a.placeholder === null) return matchTemplate(b, a.prefix) !== null;
  if (b.placeholder === null) return matchTemplate(a, b.prefix) !== null;
  const prefixes = a.prefix.startsWith(b.prefix) || b.prefix.startsWith(a.prefix);
  const suffixes = a.suffix.endsWith(b.suffix) || b.suffix.endsWith(a.suffix);
  return prefixes && suffixes;
}
