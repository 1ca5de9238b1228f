// The params a deploy would use: each has a value (from the env files, or its default) so that a deploy
// never prompts, each is within its range and consistent with the others (the rules the functions apply
// at run time), and the settings left open for local use are named for a real project.
import { paramList } from "../../../functions/src/model/params";
import { settingsProblems } from "../../../functions/src/model/param-rules";
import { resolveBuildWithParams } from "../lib/codebases";
import { deployValidate, errorMessage, type Backend, type Build } from "../lib/firebase-tools-internals";
import { envFiles, userEnvs } from "./context";
import type { CheckResult, Context } from "./types";

/**
 * Every param's value for a deploy to the project, as the deploy resolves it without prompting: the env
 * files (`<source>/.env`, `.env.<projectId>`, read with firebase-tools' own loader), else the param's
 * default. A param with neither would make the deploy prompt: that fails here, as in the params check.
 */
export function predeployParams(ctx: Context): { result: CheckResult; params?: Record<string, string> } {
  const check = "params";
  const { projectId } = ctx.options;
  const env = envFiles(ctx);
  const envs = userEnvs(ctx, check);
  if ("failed" in envs) return { result: envs.failed };
  const declared = declaredParamDefaults();
  const params: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, fallback] of Object.entries(declared)) {
    const value = envs.values[name] ?? fallback;
    if (value === undefined) missing.push(name);
    else params[name] = value;
  }
  if (missing.length > 0) {
    return {
      result: {
        check,
        status: "fail",
        message: `params without a value for ${projectId}: ${missing.join(", ")} — a deploy would prompt for them (and fail without a terminal). Add them to ${env.base} or ${env.project}`,
      },
    };
  }
  const count = Object.keys(declared).length;
  return { result: { check, status: "ok", message: `all ${count} params have a value for ${projectId} (${env.base}, ${env.project}, or their defaults)` }, params };
}

/** The functions' params (functions/src/config/params.ts) by name, with their defaults as .env text (undefined: none). */
function declaredParamDefaults(): Record<string, string | undefined> {
  return Object.fromEntries(paramList().map((p) => [p.name, p.default]));
}

export async function resolve(ctx: Context, build: Build): Promise<{ result: CheckResult; backend?: Backend; params?: Record<string, string> }> {
  const check = "params";
  const { projectId } = ctx.options;
  try {
    const { backend, params } = await resolveBuildWithParams(ctx.project, ctx.codebase, build);
    deployValidate.endpointsAreUnique({ [ctx.codebase.codebase!]: backend });
    deployValidate.endpointsAreValid(backend);
    const env = envFiles(ctx);
    return {
      result: { check, status: "ok", message: `all ${build.params.length} params have a value for ${projectId} (${env.base}, ${env.project}); endpoint settings valid` },
      backend,
      params,
    };
  } catch (error) {
    const text = errorMessage(error);
    const missing = /no value for the following environment variables: ([^\n]*)/.exec(text);
    const message = missing
      ? `params without a value for ${projectId}: ${missing[1]} — a deploy would prompt for them (and fail without a terminal). Add them to ${envFiles(ctx).base} or ${envFiles(ctx).project}`
      : text;
    return { result: { check, status: "fail", message } };
  }
}

/**
 * Every param in its range and the params consistent with each other (functions/src/model/param-rules.ts, the
 * same rules the functions apply at run time), with the values a deploy to this project would use.
 */
export function checkSettings(ctx: Context, params: Record<string, string>): CheckResult {
  const check = "settings";
  const problems = settingsProblems(params);
  const env = envFiles(ctx);
  if (problems.length > 0) return { check, status: "fail", message: `${problems.join("; ")}: fix it in ${env.base} or ${env.project}` };
  return {
    check,
    status: "ok",
    message: `every param in range; DEFAULT_SHARDS <= MAX_SHARDS; ROLLUP_TIMEOUT_SECONDS ${params.ROLLUP_TIMEOUT_SECONDS} s >= 2 x ROLLUP_INTERVAL_MS + 10 s`,
  };
}

/**
 * The settings that are open by default for local use (like App Check, docs/abuse.md), named for a real
 * project: functions/.env keeps every app and every local run working (any signed-in user may create
 * counters, no per-caller limit, no App Check), and a deploy to a project that is not demo-* is warned
 * until its .env.<projectId> makes the choice. Only a warning: each open setting is a legitimate choice
 * for some apps (docs/abuse.md prices each).
 */
export function checkExposure(ctx: Context, params: Record<string, string>): CheckResult {
  const check = "exposure";
  const { projectId } = ctx.options;
  const open: string[] = [];
  if (params.CREATE_POLICY === "signed-in") open.push("CREATE_POLICY=signed-in lets any signed-in user, anonymous included, create counters (consider admin or non-anonymous)");
  if (params.RATE_LIMIT_PER_MINUTE === "0") open.push("RATE_LIMIT_PER_MINUTE=0: no per-caller rate limit (consider 300, with RATE_LIMIT_BURST=60)");
  if (params.ENFORCE_APP_CHECK !== "true") open.push("ENFORCE_APP_CHECK=false: calls without an App Check token are accepted");
  if (open.length === 0) return { check, status: "ok", message: "creation policy, rate limit and App Check are set for production" };
  if (projectId.startsWith("demo-")) {
    return { check, status: "ok", message: `local project ${projectId}: open for local use (${open.map((o) => o.split(/[ :]/)[0]).join(", ")})` };
  }
  return { check, status: "warn", message: `${open.join("; ")}: set them in ${envFiles(ctx).project} (docs/abuse.md)` };
}
