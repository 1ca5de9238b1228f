// The params' ranges and relations (model/param-rules.ts), shared by the functions at run time and by the
// preflight: every rule refuses what it must, names the param, and the shipped functions/.env passes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { minRollupTimeoutSeconds, paramProblem, PARAM_RULES, relationProblems, settingsProblems, type RawValue } from "../src/model/param-rules";

function shippedEnv(): Record<string, RawValue> {
  const values: Record<string, RawValue> = {};
  for (const line of readFileSync(join(__dirname, "..", ".env"), "utf8").split("\n")) {
    const match = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (match) values[match[1]!] = match[2]!;
  }
  return values;
}

describe("settings", () => {
  it("accepts the values shipped in functions/.env, which give every ranged param a value", () => {
    const values = shippedEnv();
    expect(settingsProblems(values)).toEqual([]);
    for (const name of Object.keys(PARAM_RULES)) expect(values[name]).toBeDefined();
  });

  it.each([
    ["DEFAULT_SHARDS", "0"],
    ["DEFAULT_SHARDS", "2.5"],
    ["MAX_SHARDS", "201"],
    ["MAX_DELTA", "-1"],
    ["ROLLUP_INTERVAL_MS", "0"],
    ["ROLLUP_INTERVAL_MS", "60001"],
    ["ROLLUP_INTERVAL_MS", "abc"],
    ["REQUEST_TTL_HOURS", "8761"],
    ["ALLOW_UNAUTHENTICATED", "yes"],
    ["ENFORCE_APP_CHECK", "1"],
    ["MAX_INSTANCES", "0"],
    ["REGION", "US-Central1"],
    ["DATABASE_ID", "Counters"],
    ["DATABASE_ID", "abc"],
    ["ROLLUP_TIMEOUT_SECONDS", "541"],
    ["ROLLUP_MEMORY_MB", "300"],
    ["ROLLUP_CONCURRENCY", "1001"],
    ["ROLLUP_MIN_INSTANCES", "-1"],
    ["RATE_LIMIT_PER_MINUTE", "-1"],
    ["RATE_LIMIT_BURST", "0"],
    ["CONSUME_APP_CHECK_TOKEN", "yes"],
    ["CREATE_POLICY", "anyone"],
    ["CREATE_POLICY", "Admin"],
    ["CREATE_POLICY", ""],
  ])("refuses %s=%s and names the param", (name, value) => {
    const problem = paramProblem(name, value);
    expect(problem).toMatch(new RegExp(`^${name} must be`));
    expect(settingsProblems({ ...shippedEnv(), [name]: value })).toContain(problem);
  });

  it.each([
    ["DATABASE_ID", "(default)"],
    ["DATABASE_ID", "counters-eu"],
    ["REGION", "europe-west3"],
    ["ROLLUP_MEMORY_MB", 1024],
    ["ROLLUP_INTERVAL_MS", 60_000],
    ["ENFORCE_APP_CHECK", true],
    ["CREATE_POLICY", "signed-in"],
    ["CREATE_POLICY", "non-anonymous"],
    ["CREATE_POLICY", "admin"],
  ])("accepts %s=%p", (name, value) => {
    expect(paramProblem(name, value)).toBeUndefined();
  });

  it("refuses ROLLUP_MIN_INSTANCES above MAX_INSTANCES, naming both", () => {
    expect(relationProblems({ ROLLUP_MIN_INSTANCES: 5, MAX_INSTANCES: 2 })).toEqual(["ROLLUP_MIN_INSTANCES (5) must not exceed MAX_INSTANCES (2)"]);
    expect(relationProblems({ ROLLUP_MIN_INSTANCES: 2, MAX_INSTANCES: 2 })).toEqual([]);
  });

  it("refuses CONSUME_APP_CHECK_TOKEN without ENFORCE_APP_CHECK, naming both", () => {
    expect(relationProblems({ CONSUME_APP_CHECK_TOKEN: "true", ENFORCE_APP_CHECK: "false" })).toEqual([
      "CONSUME_APP_CHECK_TOKEN=true needs ENFORCE_APP_CHECK=true: without it a caller replays by sending no token at all",
    ]);
    expect(relationProblems({ CONSUME_APP_CHECK_TOKEN: "true", ENFORCE_APP_CHECK: "true" })).toEqual([]);
  });

  it("refuses DEFAULT_SHARDS above MAX_SHARDS, naming both", () => {
    expect(relationProblems({ DEFAULT_SHARDS: 20, MAX_SHARDS: 10 })).toEqual(["DEFAULT_SHARDS (20) must not exceed MAX_SHARDS (10)"]);
    expect(relationProblems({ DEFAULT_SHARDS: 10, MAX_SHARDS: 10 })).toEqual([]);
  });

  it("asks ROLLUP_TIMEOUT_SECONDS for two intervals and ten seconds, so a waiting claimer cannot outlive its invocation", () => {
    expect(minRollupTimeoutSeconds(1000)).toBe(12);
    expect(minRollupTimeoutSeconds(60_000)).toBe(130);
    expect(minRollupTimeoutSeconds(1)).toBe(11);
    expect(relationProblems({ ROLLUP_INTERVAL_MS: "30000", ROLLUP_TIMEOUT_SECONDS: "69" })[0]).toMatch(
      /^ROLLUP_TIMEOUT_SECONDS \(69\) must be at least 2 x ROLLUP_INTERVAL_MS \+ 10 s = 70 s/,
    );
    expect(relationProblems({ ROLLUP_INTERVAL_MS: "30000", ROLLUP_TIMEOUT_SECONDS: "70" })).toEqual([]);
  });
});
