// The range of every param and the relations between them, as plain data and one pure check: the
// functions validate what they read with it at run time (config/read.ts, functions/src/model/env-settings.ts) and `npm run
// preflight` refuses a deploy with it (cli/src/preflight/params.ts), so a value means the same thing in both
// places. Pure: the preflight loads it outside the functions.

/**
 * The largest ROLLUP_INTERVAL_MS: a promise's owner waits up to one interval inside its invocation, and the
 * rollup bounds every promise by it when the parent recorded no interval (rollup/plan.ts).
 */
export const MAX_INTERVAL_MS = 60_000;

/** The most shards a caller may ask createCounter for (MAX_SHARDS); a counter grows past it (below). */
export const HARD_MAX_SHARDS = 200;
/** The most shards a counter may grow to (MAX_GROWN_SHARDS): growth adds them in commits of a few hundred. */
export const HARD_MAX_GROWN_SHARDS = 10_000;
/** The longest timeout of an event-driven 2nd-gen function. */
const MAX_EVENT_TIMEOUT_SECONDS = 540;
/** Memory sizes (MB) a 2nd-gen function can have. */
const MEMORY_SIZES_MB = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768];

/** Who may call createCounter (CREATE_POLICY): docs/security.md, "Who may create counters". */
const CREATE_POLICIES = ["signed-in", "non-anonymous", "admin"] as const;
export type CreatePolicy = (typeof CREATE_POLICIES)[number];

export type ParamRule =
  | { kind: "int"; min: number; max: number; why?: string }
  | { kind: "int-of"; values: number[] }
  | { kind: "boolean" }
  | { kind: "string"; pattern: RegExp; expected: string };

/** Every param this codebase declares (params.ts) that has a range, with that range. */
export const PARAM_RULES: Record<string, ParamRule> = {
  DEFAULT_SHARDS: { kind: "int", min: 1, max: HARD_MAX_SHARDS },
  MAX_SHARDS: { kind: "int", min: 1, max: HARD_MAX_SHARDS, why: "what createCounter may be asked for; counters grow past it up to MAX_GROWN_SHARDS" },
  MAX_DELTA: { kind: "int", min: 1, max: Number.MAX_SAFE_INTEGER },
  SHARD_WRITES_PER_SECOND: { kind: "int", min: 1, max: 10_000 },
  MAX_GROWN_SHARDS: { kind: "int", min: 1, max: HARD_MAX_GROWN_SHARDS, why: "the most shards growth, reset, reshard, delete and reconcile are built for" },
  ROLLUP_INTERVAL_MS: { kind: "int", min: 1, max: MAX_INTERVAL_MS, why: "a promise's owner waits up to one interval inside its invocation" },
  RECOUNT_LIMIT: { kind: "int", min: 1, max: 100_000, why: "a count() must stay well within its 60 s deadline, and a read per 1,000 documents on every change of a calm counter" },
  REQUEST_TTL_HOURS: { kind: "int", min: 1, max: 24 * 365 },
  ALLOW_UNAUTHENTICATED: { kind: "boolean" },
  ENFORCE_APP_CHECK: { kind: "boolean" },
  MAX_INSTANCES: { kind: "int", min: 1, max: Number.MAX_SAFE_INTEGER },
  REGION: { kind: "string", pattern: /^[a-z]+-[a-z]+[0-9]+$/, expected: "a Cloud Functions region such as us-central1" },
  DATABASE_ID: {
    kind: "string",
    pattern: /^(\(default\)|[a-z][a-z0-9-]{2,61}[a-z0-9])$/,
    expected: "(default) or a database id: 4-63 lowercase letters, digits and hyphens, starting with a letter",
  },
  ROLLUP_TIMEOUT_SECONDS: { kind: "int", min: 1, max: MAX_EVENT_TIMEOUT_SECONDS, why: "the longest an event-driven function may run" },
  ROLLUP_MEMORY_MB: { kind: "int-of", values: MEMORY_SIZES_MB },
  ROLLUP_CONCURRENCY: { kind: "int", min: 1, max: 1000 },
  ROLLUP_MIN_INSTANCES: { kind: "int", min: 0, max: 1000 },
  RATE_LIMIT_PER_MINUTE: { kind: "int", min: 0, max: 1_000_000, why: "0 turns the limit off" },
  RATE_LIMIT_BURST: { kind: "int", min: 1, max: 1_000_000 },
  CONSUME_APP_CHECK_TOKEN: { kind: "boolean" },
  CREATE_POLICY: { kind: "string", pattern: /^(signed-in|non-anonymous|admin)$/, expected: `one of ${CREATE_POLICIES.join(", ")}` },
};

/** A param value as the functions read it (a number, a boolean) or as an env file holds it (a string). */
export type RawValue = string | number | boolean | undefined;

/** Why `value` is not valid for `name`, naming the param; undefined when it is (or the param has no rule). */
export function paramProblem(name: string, value: RawValue): string | undefined {
  const rule = PARAM_RULES[name];
  if (rule === undefined) return undefined;
  const shown = value === undefined ? "no value" : JSON.stringify(value);
  switch (rule.kind) {
    case "int": {
      const n = asInt(value);
      if (n === undefined || n < rule.min || n > rule.max) {
        return `${name} must be an integer from ${rule.min} to ${rule.max}${rule.why ? ` (${rule.why})` : ""}; it is ${shown}`;
      }
      return undefined;
    }
    case "int-of": {
      const n = asInt(value);
      return n !== undefined && rule.values.includes(n) ? undefined : `${name} must be one of ${rule.values.join(", ")}; it is ${shown}`;
    }
    case "boolean":
      return value === true || value === false || value === "true" || value === "false" ? undefined : `${name} must be true or false; it is ${shown}`;
    case "string":
      return typeof value === "string" && rule.pattern.test(value) ? undefined : `${name} must be ${rule.expected}; it is ${shown}`;
  }
}

/**
 * What the params must satisfy together, each problem naming the params involved:
 * - DEFAULT_SHARDS <= MAX_SHARDS: a counter created without numShards must be allowed;
 * - ROLLUP_TIMEOUT_SECONDS >= 2 x ROLLUP_INTERVAL_MS + 10 s: a promise's owner waits up to one interval,
 *   may have to wait again for a late read, then sums and commits (and hands its chain over before the
 *   timeout: rollup/trail.ts); an invocation killed by its timeout in the middle of that is retried, but one
 *   that can never finish would be retried for 24 h.
 */
export function relationProblems(values: Record<string, RawValue>): string[] {
  const problems: string[] = [];
  const defaultShards = asInt(values.DEFAULT_SHARDS);
  const maxShards = asInt(values.MAX_SHARDS);
  if (defaultShards !== undefined && maxShards !== undefined && defaultShards > maxShards) {
    problems.push(`DEFAULT_SHARDS (${defaultShards}) must not exceed MAX_SHARDS (${maxShards})`);
  }
  const intervalMs = asInt(values.ROLLUP_INTERVAL_MS);
  const timeoutSeconds = asInt(values.ROLLUP_TIMEOUT_SECONDS);
  if (intervalMs !== undefined && timeoutSeconds !== undefined) {
    const needed = minRollupTimeoutSeconds(intervalMs);
    if (timeoutSeconds < needed) {
      problems.push(
        `ROLLUP_TIMEOUT_SECONDS (${timeoutSeconds}) must be at least 2 x ROLLUP_INTERVAL_MS + 10 s = ${needed} s, ` +
          "so that a promise's owner waiting for its due time cannot outlive its invocation",
      );
    }
  }
  const minInstances = asInt(values.ROLLUP_MIN_INSTANCES);
  const maxInstances = asInt(values.MAX_INSTANCES);
  if (minInstances !== undefined && maxInstances !== undefined && minInstances > maxInstances) {
    problems.push(`ROLLUP_MIN_INSTANCES (${minInstances}) must not exceed MAX_INSTANCES (${maxInstances})`);
  }
  if ((values.CONSUME_APP_CHECK_TOKEN === true || values.CONSUME_APP_CHECK_TOKEN === "true") && (values.ENFORCE_APP_CHECK === false || values.ENFORCE_APP_CHECK === "false")) {
    problems.push("CONSUME_APP_CHECK_TOKEN=true needs ENFORCE_APP_CHECK=true: without it a caller replays by sending no token at all");
  }
  return problems;
}

/** 2 x interval + 10 s, rounded up to whole seconds. */
export function minRollupTimeoutSeconds(intervalMs: number): number {
  return Math.ceil((2 * intervalMs) / 1000) + 10;
}

/** Every problem with a set of param values: ranges first, then relations. */
export function settingsProblems(values: Record<string, RawValue>): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(PARAM_RULES)) {
    const problem = paramProblem(name, values[name]);
    if (problem !== undefined) problems.push(problem);
  }
  return [...problems, ...relationProblems(values)];
}

function asInt(value: RawValue): number | undefined {
  const n = typeof value === "number" ? value : typeof value === "string" && /^-?\d+$/.test(value.trim()) ? Number(value) : undefined;
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}
