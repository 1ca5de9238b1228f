// LEADERBOARDS: which counters are ranked together (docs/leaderboards.md). Rules `BOARD=COUNTER_ID_PATTERN`,
// comma-separated: `points=user-{uid}-points,posts=post-{id}-likes`. A counter whose id matches a rule is on
// that rule's board; several rules may name one board. The counter-id side is the one matcher of
// patterns.ts. No counter id may match two rules: a counter is on one board at most, and once on it (its
// entry is one document). Pure, no Firebase import: the functions and `npm run preflight` share it.
import { idsCanCoincide, matchTemplate, parseCounterIdPattern, parseListParam, splitRule, type Template } from "./patterns";

/** A board's name: what its summary document is called, and what `board` on a counter's parent holds. */
const BOARD_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** One parsed LEADERBOARDS rule. */
export interface BoardRule {
  /** The rule as written (trimmed). */
  source: string;
  board: string;
  counter: Template;
}

/** Whether `name` is a board's name (1–64 of [A-Za-z0-9_-]). */
export function isBoardName(name: string): boolean {
  return BOARD_NAME.test(name);
}

function parseBoardRule(text: string): BoardRule {
  const { left, right } = splitRule(text, "BOARD=COUNTER_ID_PATTERN (e.g. points=user-{uid}-points)");
  if (!isBoardName(left)) {
    throw new Error(`has a board name ${JSON.stringify(left.slice(0, 80))} that is not 1-64 characters of A-Z, a-z, 0-9, _ and -`);
  }
  try {
    return { source: text, board: left, counter: parseCounterIdPattern(right) };
  } catch (error) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(right.slice(0, 80))} that ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Parses a LEADERBOARDS value (comma-separated rules; empty = none), once per value. Throws a PatternError
 * naming the param, the rule's position and text, and what is wrong with it, including a rule whose
 * counter ids an earlier rule can also name (a counter is on one board at most).
 */
export function parseLeaderboardRules(param: string, value: string): BoardRule[] {
  // parseListParam parses the rules in order, so `earlier` holds the rules before the one being parsed.
  const earlier: BoardRule[] = [];
  return parseListParam(param, value, "rule", (entry) => {
    const rule = parseBoardRule(entry);
    const i = earlier.findIndex((e) => idsCanCoincide(e.counter, rule.counter));
    if (i !== -1) {
      const other = earlier[i]!;
      const where = other.board === rule.board ? `board ${rule.board} twice` : `two boards (${other.board} and ${rule.board})`;
      throw new Error(`names counter ids that rule ${i + 1} (${other.source}) names too: such a counter would be on ${where}; a counter is on one board at most`);
    }
    earlier.push(rule);
    return rule;
  });
}

/** The board `counterId` is on: the board of the rule that matches it; undefined when none does. */
export function boardOf(rules: readonly BoardRule[], counterId: string): string | undefined {
  return rules.find((rule) => matchTemplate(rule.counter, counterId) !== null)?.board;
}

/** The rules that put counters on `board` (none for a board no rule names). */
export function rulesOfBoard(rules: readonly BoardRule[], board: string): BoardRule[] {
  return rules.filter((rule) => rule.board === board);
}

/** A rule as the preflight shows it: `points <- user-{uid}-points`. */
export function describeBoardRule(rule: BoardRule): string {
  return `${rule.board} <- ${rule.counter.source}`;
}
