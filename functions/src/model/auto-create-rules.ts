// AUTO_CREATE: which counters create themselves on their first call, and which app document must exist
// for that (docs/api.md, "Counters that create themselves"). Rules `ID_PATTERN=DOCUMENT_PATTERN`,
// comma-separated, the same single placeholder on both sides: `post-{id}-likes=posts/{id}` lets the first
// incrementCounter or setMember on a missing `post-42-likes` create it while `posts/42` exists. The document
// pattern may be followed by conditions in the syntax DOCUMENT_COUNTERS uses (model/conditions.ts):
// `post-{id}-likes=posts/{id}[published==true]` creates it only while the post exists and is published. The
// counter-id side is the one matcher of patterns.ts, the document side the one of MIRRORS
// (mirror-rules.ts). Pure, no Firebase import: the functions and `npm run preflight` share it.
import { conditionsText, ruleSeparator, splitConditions, type Condition } from "./conditions";
import { parseDocumentPattern } from "./mirror-rules";
import { fillTemplate, matchesEveryIdOf, matchTemplate, parseCounterIdPattern, parseListParam, type Template } from "./patterns";

/** One parsed AUTO_CREATE rule. */
export interface AutoCreateRule {
  /** The rule as written (trimmed). */
  source: string;
  counter: Template;
  document: Template;
  /** What must hold on the document's data too (`[published==true]`); none: its existence is enough. */
  conditions: Condition[];
}

/** What lets one missing counter create itself: its document, filled in, and the conditions on it. */
export interface AutoCreateTarget {
  document: string;
  conditions: Condition[];
}

/** Splits a rule at its own "=" (ruleSeparator: not one inside a condition's brackets or its "=="). */
function splitAutoCreateRule(text: string): { left: string; right: string } {
  if (text === "") throw new Error("is empty");
  const eq = ruleSeparator(text);
  if (eq === -1) throw new Error('has no "=": write ID_PATTERN=DOCUMENT_PATTERN (optionally followed by conditions: [FIELD==VALUE])');
  const left = text.slice(0, eq).trim();
  const right = text.slice(eq + 1).trim();
  if (ruleSeparator(right) !== -1) throw new Error('has more than one "="');
  return { left, right };
}

function parseAutoCreateRule(text: string): AutoCreateRule {
  const { left, right } = splitAutoCreateRule(text);
  let counter: Template;
  try {
    counter = parseCounterIdPattern(left);
  } catch (error) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(left)} that ${error instanceof Error ? error.message : String(error)}`);
  }
  const { path, conditions, rest } = splitConditions(right);
  if (rest !== "") throw new Error(`has ${JSON.stringify(rest)} after its conditions: write ID_PATTERN=DOCUMENT_PATTERN[FIELD==VALUE]...`);
  const document = parseDocumentPattern(path);
  if (counter.placeholder !== document.placeholder) {
    if (counter.placeholder === null) throw new Error(`uses {${document.placeholder}} in the document path but not in the counter-id pattern`);
    // A literal document for a pattern of ids would let one document vouch for every id the pattern matches.
    if (document.placeholder === null) throw new Error(`uses {${counter.placeholder}} in the counter-id pattern but not in the document path`);
    throw new Error(`names the placeholder {${counter.placeholder}} in the counter-id pattern but {${document.placeholder}} in the document path`);
  }
  return { source: text, counter, document, conditions };
}

/**
 * Parses an AUTO_CREATE value (comma-separated rules; empty = none), once per value. Throws a PatternError
 * naming the param, the rule's position and the rule, and what is wrong with it, including a rule that can
 * never apply because an earlier one matches every id it matches (the first matching rule decides).
 */
export function parseAutoCreateRules(param: string, value: string): AutoCreateRule[] {
  // parseListParam parses the rules in order, so `earlier` holds the rules before the one being parsed.
  const earlier: AutoCreateRule[] = [];
  return parseListParam(param, value, "rule", (entry) => {
    const rule = parseAutoCreateRule(entry);
    const i = earlier.findIndex((e) => matchesEveryIdOf(e.counter, rule.counter));
    if (i !== -1) {
      throw new Error(`can never apply: rule ${i + 1} (${earlier[i]!.source}) matches every id it matches and comes first (the first matching rule decides)`);
    }
    earlier.push(rule);
    return rule;
  });
}

/** What lets `counterId` create itself: the first rule that matches it, its document filled, and its conditions; else undefined. */
export function autoCreateTarget(rules: readonly AutoCreateRule[], counterId: string): AutoCreateTarget | undefined {
  for (const rule of rules) {
    const binding = matchTemplate(rule.counter, counterId);
    if (binding !== null) return { document: fillTemplate(rule.document, binding), conditions: rule.conditions };
  }
  return undefined;
}

/** The document whose existence lets `counterId` create itself (autoCreateTarget's, without its conditions). */
export function autoCreateDocument(rules: readonly AutoCreateRule[], counterId: string): string | undefined {
  return autoCreateTarget(rules, counterId)?.document;
}

/** A rule as the preflight shows it: `post-{id}-likes <- posts/{id}[published==true]`. */
export function describeAutoCreateRule(rule: AutoCreateRule): string {
  return `${rule.counter.source} <- ${rule.document.source}${conditionsText(rule.conditions)}`;
}
