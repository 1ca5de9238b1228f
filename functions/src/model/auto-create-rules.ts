// AUTO_CREATE: which counters create themselves on their first call, and which app document must exist
// for that (docs/api.md, "Counters that create themselves"). Rules `ID_PATTERN=DOCUMENT_PATTERN`,
// comma-separated, the same single placeholder on both sides: `post-{id}-likes=posts/{id}` lets the first
// incrementCounter or setMember on a missing `post-42-likes` create it while `posts/42` exists. The
// counter-id side is the one matcher of patterns.ts, the document side the one of MIRRORS
// (mirror-rules.ts). Pure, no Firebase import: the functions and `npm run preflight` share it.
import { parseDocumentPattern } from "./mirror-rules";
import { fillTemplate, matchesEveryIdOf, matchTemplate, parseCounterIdPattern, parseListParam, splitRule, type Template } from "./patterns";

/** One parsed AUTO_CREATE rule. */
export interface AutoCreateRule {
  /** The rule as written (trimmed). */
  source: string;
  counter: Template;
  document: Template;
}

function parseAutoCreateRule(text: string): AutoCreateRule {
  const { left, right } = splitRule(text, "ID_PATTERN=DOCUMENT_PATTERN");
  let counter: Template;
  try {
    counter = parseCounterIdPattern(left);
  } catch (error) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(left)} that ${error instanceof Error ? error.message : String(error)}`);
  }
  const document = parseDocumentPattern(right);
  if (counter.placeholder !== document.placeholder) {
    if (counter.placeholder === null) throw new Error(`uses {${document.placeholder}} in the document path but not in the counter-id pattern`);
    // A literal document for a pattern of ids would let one document vouch for every id the pattern matches.
    if (document.placeholder === null) throw new Error(`uses {${counter.placeholder}} in the counter-id pattern but not in the document path`);
    throw new Error(`names the placeholder {${counter.placeholder}} in the counter-id pattern but {${document.placeholder}} in the document path`);
  }
  return { source: text, counter, document };
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

/** The document whose existence lets `counterId` create itself: the first rule that matches it, filled; else undefined. */
export function autoCreateDocument(rules: readonly AutoCreateRule[], counterId: string): string | undefined {
  for (const rule of rules) {
    const binding = matchTemplate(rule.counter, counterId);
    if (binding !== null) return fillTemplate(rule.document, binding);
  }
  return undefined;
}
