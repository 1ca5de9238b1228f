// The params that hold patterns and rules (UNIQUE_COUNTERS, WINDOWED_COUNTERS, MIRRORS, COUNTER_KINDS), parsed by the
// functions' own parsers from the values a deploy would use: a bad one fails here, naming it.
import { describeKind, parseCounterKinds, type KindLimits } from "../../../functions/src/counters/kinds";
import { parseMirrorRules } from "../../../functions/src/counters/mirror-rules";
import { parseCounterIdPatterns } from "../../../functions/src/counters/patterns";
import { PARAM_RULES, paramProblem } from "../../../functions/src/config/rules";
import { errorMessage } from "../lib/firebase-tools-internals";
import { envFiles, userEnvs } from "./context";
import type { CheckResult, Context } from "./types";

/**
 * UNIQUE_COUNTERS, parsed by the functions' own parser (counters/patterns.ts) from the values a deploy
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
 * MIRRORS, parsed by the functions' own parser (functions/src/counters/mirror-rules.ts): a bad rule fails here, naming it,
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
 * COUNTER_KINDS, parsed by the functions' own parser (counters/kinds.ts) against the MAX_SHARDS and MAX_DELTA
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
