// The params that name counters by id, read together: typos that each param's own parser accepts. A
// window's mirror (`…:views7d@last7Days`) on ids that WINDOWED_COUNTERS does not make windowed would never
// be written (refused); a mirrored or AUTO_CREATE pattern one character away from another param's pattern
// (`post-{id}-likes` / `post-{id}-like`) is most likely a typo that leaves those counters plain, unbounded
// or unmirrored (warned). Parsed by the functions' own parsers; a param that does not parse is its own
// check's failure and is left out here.
import { parseAutoCreateRules } from "../../../functions/src/model/auto-create-rules";
import { parseCounterKinds, type KindLimits } from "../../../functions/src/model/kinds";
import { parseMirrorRules, type MirrorRule } from "../../../functions/src/model/mirror-rules";
import { matchesEveryIdOf, parseCounterIdPatterns, type Template } from "../../../functions/src/model/patterns";
import { editDistance } from "../../../functions/src/model/near-names";
import { envFiles, userEnvs } from "./context";
import type { CheckResult, Context } from "./types";

/** The values of the params that name counters, as a deploy would use them. */
export interface IdParams {
  UNIQUE_COUNTERS: string;
  WINDOWED_COUNTERS: string;
  COUNTER_KINDS: string;
  MIRRORS: string;
  AUTO_CREATE: string;
}

/** The widest bounds: COUNTER_KINDS' own check refuses a rule beyond the deployed ones. */
const ANY_LIMITS: KindLimits = { maxShards: Number.MAX_SAFE_INTEGER, maxDelta: Number.MAX_SAFE_INTEGER };

export function checkIdPatterns(ctx: Context): CheckResult {
  const check = "id patterns";
  const envs = userEnvs(ctx, check);
  if ("failed" in envs) return envs.failed;
  const v = (name: keyof IdParams) => envs.values[name] ?? "";
  const { failures, warnings } = idPatternProblems({
    UNIQUE_COUNTERS: v("UNIQUE_COUNTERS"),
    WINDOWED_COUNTERS: v("WINDOWED_COUNTERS"),
    COUNTER_KINDS: v("COUNTER_KINDS"),
    MIRRORS: v("MIRRORS"),
    AUTO_CREATE: v("AUTO_CREATE"),
  });
  const env = envFiles(ctx);
  if (failures.length > 0) return { check, status: "fail", message: `${[...failures, ...warnings].join("; ")}; fix it in ${env.base} or ${env.project}` };
  if (warnings.length > 0) return { check, status: "warn", message: `${warnings.join("; ")} (${env.base}, ${env.project})` };
  return { check, status: "ok", message: "every window mirrored is of windowed ids; no pattern is one character away from another param's" };
}

/** What is wrong with the params read together: failures (refused) and warnings. Pure. */
export function idPatternProblems(values: IdParams): { failures: string[]; warnings: string[] } {
  const lists: Record<keyof IdParams, Template[]> = {
    UNIQUE_COUNTERS: parsed(() => parseCounterIdPatterns("UNIQUE_COUNTERS", values.UNIQUE_COUNTERS)),
    WINDOWED_COUNTERS: parsed(() => parseCounterIdPatterns("WINDOWED_COUNTERS", values.WINDOWED_COUNTERS)),
    COUNTER_KINDS: parsed(() => parseCounterKinds("COUNTER_KINDS", values.COUNTER_KINDS, ANY_LIMITS).map((k) => k.counter)),
    MIRRORS: parsed(() => parseMirrorRules("MIRRORS", values.MIRRORS).map((r) => r.counter)),
    AUTO_CREATE: parsed(() => parseAutoCreateRules("AUTO_CREATE", values.AUTO_CREATE).map((r) => r.counter)),
  };
  const mirrors = parsed(() => parseMirrorRules("MIRRORS", values.MIRRORS));
  return { failures: windowMirrorProblems(mirrors, lists.WINDOWED_COUNTERS), warnings: nearMisses(lists) };
}

function parsed<T>(parse: () => T[]): T[] {
  try {
    return parse();
  } catch {
    return [];
  }
}

/** A window mirrored for ids that WINDOWED_COUNTERS does not all make windowed: that field would never be written. */
function windowMirrorProblems(mirrors: readonly MirrorRule[], windowed: readonly Template[]): string[] {
  const problems: string[] = [];
  mirrors.forEach((rule, i) => {
    if (rule.value === "total" || windowed.some((w) => matchesEveryIdOf(w, rule.counter))) return;
    const near = windowed.find((w) => distance(w, rule.counter) === 1);
    problems.push(
      `MIRRORS: rule ${i + 1} "${rule.source}" mirrors the window @${rule.value} of ${rule.counter.source}, but WINDOWED_COUNTERS ` +
        `(${values(windowed)}) does not make every such id windowed: on a counter that is not windowed the field is never written. ` +
        `Add ${rule.counter.source} to WINDOWED_COUNTERS${near === undefined ? "" : ` (it has ${near.source}, one character away: a typo?)`}`,
    );
  });
  return problems;
}

/** Which params the patterns of MIRRORS and AUTO_CREATE are compared with, and what a typo there leaves undone. */
const WHAT_IT_DECIDES: Record<keyof IdParams, string> = {
  UNIQUE_COUNTERS: "unique",
  WINDOWED_COUNTERS: "windowed",
  COUNTER_KINDS: "of a declared kind",
  MIRRORS: "mirrored",
  AUTO_CREATE: "created on their first call",
};

/**
 * A pattern of MIRRORS or AUTO_CREATE that another of the params does not hold, while holding one a
 * single character away: each pair named once.
 */
function nearMisses(lists: Record<keyof IdParams, Template[]>): string[] {
  const warnings = new Set<string>();
  const seen = new Set<string>();
  for (const from of ["MIRRORS", "AUTO_CREATE"] as const) {
    for (const pattern of lists[from]) {
      for (const other of Object.keys(lists) as (keyof IdParams)[]) {
        if (other === from || lists[other].some((q) => distance(q, pattern) === 0)) continue;
        for (const near of lists[other].filter((q) => distance(q, pattern) === 1)) {
          const pair = [`${from}:${pattern.source}`, `${other}:${near.source}`].sort().join("|");
          if (seen.has(pair)) continue;
          seen.add(pair);
          warnings.add(
            `${from} names ${pattern.source}, one character away from ${other}'s ${near.source}: a typo? ` +
              `Counters such as ${example(pattern)} are not ${WHAT_IT_DECIDES[other]} by ${other}`,
          );
        }
      }
    }
  }
  return [...warnings];
}

/** The edit distance between two patterns, a placeholder counting as one character whatever its name. */
export function distance(a: Template, b: Template): number {
  const tokens = (t: Template) => [...t.prefix, ...(t.placeholder === null ? [] : ["{}"]), ...t.suffix];
  return editDistance(tokens(a), tokens(b));
}

function example(pattern: Template): string {
  return pattern.placeholder === null ? pattern.prefix : `${pattern.prefix}1${pattern.suffix}`;
}

function values(patterns: readonly Template[]): string {
  return patterns.length === 0 ? "empty" : patterns.map((p) => p.source).join(", ");
}
