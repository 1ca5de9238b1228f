// The params that hold patterns and rules (UNIQUE_COUNTERS, WINDOWED_COUNTERS, MIRRORS, COUNTER_KINDS, AUTO_CREATE,
// EXTENSION_COUNTERS, LEADERBOARDS), parsed by the functions' own parsers from the values a deploy would use: a bad one fails
// here, naming it. How they fit together (a window mirrored of ids that are not windowed, typos) is id-patterns.ts.
import { describeAutoCreateRule, parseAutoCreateRules } from "../../../functions/src/model/auto-create-rules";
import { describeKind, parseCounterKinds, type KindLimits } from "../../../functions/src/model/kinds";
import { mirrorTargets, parseMirrorRules, type MirrorRule } from "../../../functions/src/model/mirror-rules";
import { fillTemplate, matchesAny, parseCounterIdPatterns, type Template } from "../../../functions/src/model/patterns";
import { describeRule, parseExtensionRules, type ExtensionRule } from "../../../functions/src/model/extension-rules";
import { describeBoardRule, parseLeaderboardRules } from "../../../functions/src/model/leaderboard-rules";
import { PARAM_RULES, paramProblem } from "../../../functions/src/model/param-rules";
import { errorMessage } from "../lib/firebase-tools-internals";
import { envFiles, userEnvs } from "./context";
import type { CheckResult, Context } from "./types";

/**
 * UNIQUE_COUNTERS, parsed by the functions' own parser (functions/src/model/patterns.ts) from the values a deploy
 * would use: a bad pattern fails here, naming it, instead of making createCounter refuse every call.
 */
export function checkUniqueCounters(ctx: Context): CheckResult {
  return checkPatternParam(ctx, "unique counters", "UNIQUE_COUNTERS", (value) => {
    const patterns = parseCounterIdPatterns("UNIQUE_COUNTERS", value);
    if (patterns.length === 0) return "UNIQUE_COUNTERS is empty: no counter id is reserved for unique counters";
    return `UNIQUE_COUNTERS: ids matching ${patterns.map((p) => p.source).join(", ")} are always unique counters`;
  });
}

/** WINDOWED_COUNTERS, parsed and reported as UNIQUE_COUNTERS is (above). */
export function checkWindowedCounters(ctx: Context): CheckResult {
  return checkPatternParam(ctx, "windows", "WINDOWED_COUNTERS", (value) => {
    const patterns = parseCounterIdPatterns("WINDOWED_COUNTERS", value);
    if (patterns.length === 0) return "WINDOWED_COUNTERS is empty: a counter keeps counts per day when created with windowed: true";
    return `WINDOWED_COUNTERS: ids matching ${patterns.map((p) => p.source).join(", ")} always keep counts per day`;
  });
}

/**
 * MIRRORS, parsed by the functions' own parser (functions/src/model/mirror-rules.ts): a bad rule fails here, naming it,
 * instead of the rollup committing totals without their mirrors (it logs an ERROR) and the admin
 * callables refusing to run.
 */
export function checkMirrors(ctx: Context): CheckResult {
  return checkPatternParam(ctx, "mirrors", "MIRRORS", (value) => {
    const rules = parseMirrorRules("MIRRORS", value);
    if (rules.length === 0) return "MIRRORS is empty: totals are written on counters/{id} only";
    return `MIRRORS: ${rules.map((r) => `${r.counter.source} -> ${r.document.source}:${r.field}${r.value === "total" ? "" : `@${r.value}`}`).join(", ")}`;
  });
}

/**
 * COUNTER_KINDS, parsed by the functions' own parser (functions/src/model/kinds.ts) against the MAX_SHARDS and MAX_DELTA
 * a deploy would use: a bad rule fails here, naming it, instead of createCounter and incrementCounter
 * refusing every call with internal.
 */
export function checkCounterKinds(ctx: Context): CheckResult {
  return checkPatternParam(ctx, "counter kinds", "COUNTER_KINDS", (value, envs) => {
    const kinds = parseCounterKinds("COUNTER_KINDS", value, kindLimits(envs));
    if (kinds.length === 0) return "COUNTER_KINDS is empty: callers choose numShards and delta within MAX_SHARDS and MAX_DELTA";
    return `COUNTER_KINDS (the first matching rule applies): ${kinds.map(describeKind).join("; ")}`;
  });
}

/**
 * EXTENSION_COUNTERS, parsed by the functions' own parser (functions/src/model/extension-rules.ts): a bad rule, or
 * one whose documents the fold trigger cannot serve (deeper than a top-level collection), fails here,
 * naming it, instead of the trigger folding nothing. A rule whose counters UNIQUE_COUNTERS reserves fails
 * too (a unique counter takes no amounts: they would stay in the shards). A rule with no MIRRORS rule that
 * writes its counter back into the same field is a warning: screens that read the field stop moving.
 */
export function checkExtensionCounters(ctx: Context): CheckResult {
  const check = "extension";
  const result = checkPatternParam(ctx, check, "EXTENSION_COUNTERS", (value) => {
    const rules = parseExtensionRules("EXTENSION_COUNTERS", value);
    if (rules.length === 0) return "EXTENSION_COUNTERS is empty: foldExtensionShards is not deployed";
    return `EXTENSION_COUNTERS: foldExtensionShards folds old clients' writes of ${rules.map(describeRule).join(", ")}`;
  });
  if (result.status !== "ok") return result;
  const envs = userEnvs(ctx, check);
  if ("failed" in envs) return envs.failed;
  const rules = parseExtensionRules("EXTENSION_COUNTERS", envs.values.EXTENSION_COUNTERS ?? "");
  const env = envFiles(ctx);
  const unique = safely(() => parseCounterIdPatterns("UNIQUE_COUNTERS", envs.values.UNIQUE_COUNTERS ?? "")) ?? [];
  const reserved = rules.filter((rule) => matchesAny(unique, sample(rule.counter)));
  if (reserved.length > 0) {
    return {
      check,
      status: "fail",
      message: `EXTENSION_COUNTERS: ${reserved.map(describeRule).join(", ")} moves amounts into counters that UNIQUE_COUNTERS reserves for unique counters, which count members only; fix it in ${env.base} or ${env.project}`,
    };
  }
  const mirrors = safely(() => parseMirrorRules("MIRRORS", envs.values.MIRRORS ?? "")) ?? [];
  const unmirrored = rules.filter((rule) => !mirroredBack(rule, mirrors));
  if (unmirrored.length > 0) {
    const examples = unmirrored.map((r) => `${r.counter.source}=${r.document.source}:${r.field}`).join(",");
    return {
      check,
      status: "warn",
      message: `${result.message}; but no MIRRORS rule writes ${unmirrored.map((r) => r.counter.source).join(", ")} back into ${unmirrored.map((r) => `${r.document.source}:${r.field}`).join(", ")}: screens that read the field stop moving (add ${examples} to MIRRORS in ${env.base} or ${env.project})`,
    };
  }
  return result;
}

/** A stand-in for a pattern's placeholder: some id characters. */
function sample(template: Template): string {
  return fillTemplate(template, template.placeholder === null ? {} : { [template.placeholder]: "x1" });
}

/** Whether MIRRORS writes the rule's counters' totals into the very field they take over. */
function mirroredBack(rule: ExtensionRule, mirrors: readonly MirrorRule[]): boolean {
  const binding = rule.document.placeholder === null ? {} : { [rule.document.placeholder]: "x1" };
  const document = fillTemplate(rule.document, binding);
  return mirrorTargets(mirrors, fillTemplate(rule.counter, binding)).some((t) => t.path === document && t.field === rule.field && t.value === "total");
}

function safely<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined; // that param's own check names what is wrong
  }
}

/**
 * AUTO_CREATE, parsed by the functions' own parser (functions/src/model/auto-create-rules.ts): a bad rule fails here,
 * naming it, instead of the first calls on missing counters answering internal.
 */
export function checkAutoCreate(ctx: Context): CheckResult {
  return checkPatternParam(ctx, "auto create", "AUTO_CREATE", (value) => {
    const rules = parseAutoCreateRules("AUTO_CREATE", value);
    if (rules.length === 0) return "AUTO_CREATE is empty: an increment or setMember on a counter that does not exist is not-found";
    return `AUTO_CREATE: the first call on a missing counter creates it while its document exists: ${rules.map(describeAutoCreateRule).join(", ")}`;
  });
}

/**
 * LEADERBOARDS, parsed by the functions' own parser (functions/src/model/leaderboard-rules.ts): a bad rule, or a
 * counter id two rules would name (a counter is on one board at most), fails here, naming the rules, instead
 * of the rollup committing totals without their entries (it logs an ERROR) and createCounter answering internal.
 */
export function checkLeaderboards(ctx: Context): CheckResult {
  return checkPatternParam(ctx, "leaderboards", "LEADERBOARDS", (value) => {
    const rules = parseLeaderboardRules("LEADERBOARDS", value);
    if (rules.length === 0) return "LEADERBOARDS is empty: no counter is ranked, and rollupBoard is not deployed";
    return `LEADERBOARDS: rollupBoard keeps the summaries of ${rules.map(describeBoardRule).join(", ")} (existing counters join with backfill --board)`;
  });
}

/**
 * The bounds a kind must stay within, as deployed. A missing or invalid MAX_SHARDS / MAX_DELTA fails the
 * params or settings check, naming it; here it stands for its widest valid value so that this check still
 * reports what is wrong with the rules themselves.
 */
function kindLimits(envs: Record<string, string>): KindLimits {
  const limit = (name: "MAX_SHARDS" | "MAX_DELTA"): number => {
    const rule = PARAM_RULES[name];
    const widest = rule?.kind === "int" ? rule.max : Number.MAX_SAFE_INTEGER;
    const value = envs[name];
    return value !== undefined && paramProblem(name, value) === undefined ? Number(value) : widest;
  };
  return { maxShards: limit("MAX_SHARDS"), maxDelta: limit("MAX_DELTA") };
}

/**
 * A param of patterns, read as a deploy would read it and parsed by `describe` (which throws on a bad one;
 * it also gets every param's value, for a parse that depends on other params).
 */
function checkPatternParam(ctx: Context, check: string, param: string, describe: (value: string, envs: Record<string, string>) => string): CheckResult {
  const env = envFiles(ctx);
  const envs = userEnvs(ctx, check);
  if ("failed" in envs) return envs.failed;
  try {
    return { check, status: "ok", message: describe(envs.values[param] ?? "", envs.values) };
  } catch (error) {
    return { check, status: "fail", message: `${errorMessage(error)}; fix it in ${env.base} or ${env.project}` };
  }
}
