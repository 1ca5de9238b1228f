// Counter kinds: the shape the server declares for counters whose id matches a pattern, so that
// clients cannot choose it. The param COUNTER_KINDS holds rules `ID_PATTERN=SPEC`, comma-separated; SPEC
// is `key:value` pairs separated by `;`, with the keys `shards` (the counter's exact shard count),
// `maxDelta` (the largest |delta| of one increment) and `callers` (what the callables may do to it: `add`
// only adds, `none` nothing; the admin entry is not bound by it), e.g.
// `post-{id}-likes=shards:20,post-{id}-views=shards:50;maxDelta:1;callers:add`. ID_PATTERN is the one counter-id
// matcher of patterns.ts (UNIQUE_COUNTERS, MIRRORS). An id's kind is the first rule that matches it; a rule
// that an earlier one makes unreachable is refused, so every rule written is a rule that applies somewhere.
// Uniqueness is not part of a kind: UNIQUE_COUNTERS alone decides it (docs/unique-counters.md).
// Pure, no Firebase import: the functions and `npm run preflight` share it.
import { CounterError } from "./errors";
import { entryError, matchesEveryIdOf, matchTemplate, parseCounterIdPattern, parseListParam, splitList, splitRule, type PatternError, type Template } from "./patterns";

/**
 * What the callables (the app's clients) may do to a counter of a kind: `add`, only add (positive deltas,
 * joins of a unique counter); `none`, neither create nor move it (the app's own functions do, through the
 * admin entry). Absent: anything the other params allow.
 */
export type Callers = "add" | "none";

/** One parsed COUNTER_KINDS rule. At least one of `shards`, `maxDelta` and `callers` is set. */
export interface CounterKind {
  /** The rule as written (trimmed). */
  source: string;
  counter: Template;
  /** createCounter gives every counter of this kind exactly this many shards. */
  shards?: number;
  /** The largest |delta| one incrementCounter call may apply to a counter of this kind. */
  maxDelta?: number;
  callers?: Callers;
}

/** The deployed bounds a kind must stay within: a kind cannot declare more than any caller may ask for. */
export interface KindLimits {
  maxShards: number;
  maxDelta: number;
}

type Key = "shards" | "maxDelta" | "callers";
const KEYS: readonly Key[] = ["shards", "maxDelta", "callers"];
const LIMIT_PARAM: Record<"shards" | "maxDelta", string> = { shards: "MAX_SHARDS", maxDelta: "MAX_DELTA" };
const CALLERS: readonly Callers[] = ["add", "none"];

function isKey(key: string): key is Key {
  return (KEYS as readonly string[]).includes(key);
}

/** Parses one rule; throws an Error saying what is wrong (callers add which rule). */
function parseCounterKind(text: string, limits: KindLimits): CounterKind {
  const { left, right } = splitRule(text, "ID_PATTERN=shards:N;maxDelta:N;callers:add|none");

  let counter: Template;
  try {
    counter = parseCounterIdPattern(left);
  } catch (error) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(left)} that ${message(error)}`);
  }
  if (right === "") throw new Error("declares nothing: write shards:N, maxDelta:N, callers:add or callers:none (several separated by ;) after the =");

  const kind: CounterKind = { source: text, counter };
  for (const pair of right.split(";").map((p) => p.trim())) {
    if (pair === "") throw new Error('has an empty key:value (two ";" in a row, or one at an end)');
    const colon = pair.indexOf(":");
    if (colon === -1) throw new Error(`has ${JSON.stringify(pair)} without a ":": write key:value`);
    const key = pair.slice(0, colon).trim();
    const raw = pair.slice(colon + 1).trim();
    if (!isKey(key)) throw new Error(`has an unknown key ${JSON.stringify(key)} (the keys are shards, maxDelta and callers)`);
    if (kind[key] !== undefined) throw new Error(`declares ${key} twice`);
    if (key === "callers") kind.callers = callersOf(raw);
    else kind[key] = integerUpTo(key, raw, key === "shards" ? limits.maxShards : limits.maxDelta);
  }
  return kind;
}

function callersOf(raw: string): Callers {
  if ((CALLERS as readonly string[]).includes(raw)) return raw as Callers;
  throw new Error(`sets callers to ${JSON.stringify(raw)}: it must be add (the callables only add) or none (only the admin entry creates and moves it)`);
}

function integerUpTo(key: "shards" | "maxDelta", raw: string, max: number): number {
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new Error(`sets ${key} to ${JSON.stringify(raw)}: it must be an integer from 1 to ${max} (${LIMIT_PARAM[key]})`);
  }
  return n;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Parses a COUNTER_KINDS value (comma-separated rules; empty = none), once per value and limits. Throws a
 * PatternError naming the param, the rule's position and the rule, and what is wrong with it, including a
 * rule that can never apply because an earlier rule matches every id it matches (the first match wins).
 */
export function parseCounterKinds(param: string, value: string, limits: KindLimits): CounterKind[] {
  // parseListParam parses the rules in order, so `earlier` holds the rules before the one being parsed.
  const earlier: CounterKind[] = [];
  const parseOne = (entry: string): CounterKind => {
    const kind = parseCounterKind(entry, limits);
    checkReachable(kind, earlier);
    earlier.push(kind);
    return kind;
  };
  return parseListParam(param, value, "rule", parseOne, `${limits.maxShards}:${limits.maxDelta}`);
}

/** Throws if an earlier rule matches every id `kind` matches: the first matching rule wins, so it could never apply. */
function checkReachable(kind: CounterKind, earlier: readonly CounterKind[]): void {
  const i = earlier.findIndex((e) => matchesEveryIdOf(e.counter, kind.counter));
  if (i === -1) return;
  const first = earlier[i]!.counter;
  const same = matchesEveryIdOf(kind.counter, first);
  throw new Error(
    same
      ? `can never apply: rule ${i + 1} (${first.source}) matches the same ids and comes first (the first matching rule wins); merge the two`
      : `can never apply: rule ${i + 1} (${first.source}) matches every id it matches and comes first (the first matching rule wins); put the narrower rule first`,
  );
}

/** The kind of `counterId`: the first rule whose pattern matches it, or undefined (no declared shape). */
export function kindOf(kinds: readonly CounterKind[], counterId: string): CounterKind | undefined {
  return kinds.find((kind) => matchTemplate(kind.counter, counterId) !== null);
}

/**
 * A rule of a COUNTER_KINDS value that does not parse, as the functions keep it: the error naming it, and
 * its counter-id pattern when that much parses (null: which ids it was meant for cannot be told).
 */
export interface BadKindRule {
  error: PatternError;
  counter: Template | null;
  /** Whether the rule may have meant to declare callers (its spec names the key): then it decides what callables may do. */
  namesCallers: boolean;
}

const ruleMemo = new Map<string, (CounterKind | BadKindRule)[]>();
const RULE_MEMO_MAX_ENTRIES = 64;

/**
 * The functions' reading of a COUNTER_KINDS value: every rule in order, each parsed or kept as bad (once
 * per value and limits). A bad rule (a typo, or a bound the deployed MAX_SHARDS / MAX_DELTA no longer
 * allows) must not stop the counters it has nothing to do with: kindFor refuses only the ids it could
 * match. `npm run preflight` refuses the whole value (parseCounterKinds), before a deploy.
 */
export function parseCounterKindRules(param: string, value: string, limits: KindLimits): (CounterKind | BadKindRule)[] {
  const key = `${param}\u0000${limits.maxShards}:${limits.maxDelta}\u0000${value}`;
  let rules = ruleMemo.get(key);
  if (rules === undefined) {
    rules = [];
    const good: CounterKind[] = [];
    for (const [i, entry] of splitList(value).entries()) {
      try {
        const kind = parseCounterKind(entry, limits);
        checkReachable(kind, good);
        good.push(kind);
        rules.push(kind);
      } catch (error) {
        rules.push({ error: entryError(param, "rule", i + 1, entry, error), counter: patternOf(entry), namesCallers: /callers/i.test(entry.slice(entry.indexOf("=") + 1)) });
      }
    }
    if (ruleMemo.size >= RULE_MEMO_MAX_ENTRIES) ruleMemo.clear();
    ruleMemo.set(key, rules);
  }
  return rules;
}

/** The counter-id pattern of a rule, if that part parses. */
function patternOf(entry: string): Template | null {
  const eq = entry.indexOf("=");
  if (eq === -1) return null;
  try {
    return parseCounterIdPattern(entry.slice(0, eq).trim());
  } catch {
    return null;
  }
}

/**
 * The kind of `counterId` under rules that may hold bad ones: the first rule that matches decides, as
 * with kindOf. An id that reaches a bad rule whose pattern could match it (any id, when the bad rule's
 * pattern does not parse) throws that rule's error, naming it: the call answers internal rather than run
 * without the shape the rule meant to declare. An id a valid rule before it decides, or that the bad
 * rule's pattern cannot match, is not affected.
 */
export function kindFor(rules: readonly (CounterKind | BadKindRule)[], counterId: string): CounterKind | undefined {
  for (const rule of rules) {
    if ("error" in rule) {
      if (rule.counter === null || matchTemplate(rule.counter, counterId) !== null) throw rule.error;
    } else if (matchTemplate(rule.counter, counterId) !== null) {
      return rule;
    }
  }
  return undefined;
}

/**
 * The kind whose `callers` decides what a callable may do to `counterId`, under rules that may hold bad
 * ones: kindFor, except that a bad rule that names no callers key cannot have meant to restrict callers,
 * so it stops no call (setMember, which no other part of a kind bounds, goes on). Such a rule whose pattern
 * parses and matches the id is the id's kind, with no callers; one whose pattern does not parse may or may
 * not be, and the later rules are read on (the stricter reading). A bad rule that names callers throws,
 * as in kindFor.
 */
export function callersKindFor(rules: readonly (CounterKind | BadKindRule)[], counterId: string): CounterKind | undefined {
  for (const rule of rules) {
    if (!("error" in rule)) {
      if (matchTemplate(rule.counter, counterId) !== null) return rule;
    } else if (rule.counter === null || matchTemplate(rule.counter, counterId) !== null) {
      if (rule.namesCallers) throw rule.error;
      if (rule.counter !== null) return undefined;
    }
  }
  return undefined;
}

/**
 * The shard count of a new counter: the kind's `shards` when it declares one, else what the caller asked
 * for (undefined: the default). A caller asking for another count is refused rather than overruled, so a
 * client that believes it chose the count learns at once that it did not.
 */
export function shardsFor(counterId: string, requested: number | undefined, kind: CounterKind | undefined): number | undefined {
  if (kind?.shards === undefined) return requested;
  if (requested !== undefined && requested !== kind.shards) {
    throw new CounterError("invalid-argument", `numShards: counter "${counterId}" is declared with ${kind.shards} shards (COUNTER_KINDS); omit numShards`);
  }
  return kind.shards;
}

/** Refuses a delta beyond the kind's `maxDelta` (MAX_DELTA, checked by the schema, bounds every counter). */
export function checkDelta(counterId: string, delta: number, kind: CounterKind | undefined): void {
  const max = kind?.maxDelta;
  if (max !== undefined && Math.abs(delta) > max) {
    throw new CounterError("invalid-argument", `delta must be a non-zero integer from -${max} to ${max} for counter "${counterId}" (COUNTER_KINDS)`);
  }
}

/** What a callable asks of a counter (the admin entry asks nothing: it is the app's own code). */
export type ClientCall = { op: "create" } | { op: "increment"; delta: number } | { op: "setMember"; member: boolean };

/**
 * Refuses a callable's call that the kind's `callers` does not allow: any create or change of a `none`
 * counter (permission-denied, naming COUNTER_KINDS), and a subtraction from an `add` counter (a negative
 * delta, or leaving a unique counter: invalid-argument, naming the field). `maxDelta` is the largest
 * delta the counter takes (the kind's, else MAX_DELTA), for the message.
 */
export function checkCallers(counterId: string, call: ClientCall, kind: CounterKind | undefined, maxDelta: number): void {
  if (kind?.callers === "none") {
    const verb = call.op === "create" ? "created" : "moved";
    throw new CounterError("permission-denied", `counter "${counterId}" is ${verb} only by the app's own functions (COUNTER_KINDS ${kind.counter.source}: callers:none)`);
  }
  if (kind?.callers !== "add") return;
  if (call.op === "increment" && call.delta < 0) {
    const max = kind.maxDelta ?? maxDelta;
    throw new CounterError("invalid-argument", `delta must be a positive integer up to ${max} for counter "${counterId}": callers only add to it (COUNTER_KINDS callers:add)`);
  }
  if (call.op === "setMember" && !call.member) {
    throw new CounterError("invalid-argument", `member must be true for counter "${counterId}": callers only join it (COUNTER_KINDS callers:add)`);
  }
}

/** One line per rule for humans (the preflight): `post-{id}-views: 50 shards, |delta| <= 1, callers add only`. */
export function describeKind(kind: CounterKind): string {
  const parts: string[] = [];
  if (kind.shards !== undefined) parts.push(`${kind.shards} shards`);
  if (kind.maxDelta !== undefined) parts.push(`|delta| <= ${kind.maxDelta}`);
  if (kind.callers === "add") parts.push("callers only add");
  if (kind.callers === "none") parts.push("callers none (the admin entry only)");
  return `${kind.counter.source}: ${parts.join(", ")}`;
}
