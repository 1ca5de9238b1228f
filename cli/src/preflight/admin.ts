// The admin entry's settings next to the callables': an app's own codebase that depends on the functions
// package (to import `@firestore-exact-counter/functions/admin`) reads the counters' params from its own
// environment (functions/src/model/env-settings.ts), that is, from its own .env files. Where they differ from the
// counters codebase's, the two sides would create counters of different shapes (a likes counter plain on
// one side, unique on the other), so the deploy stops here, naming each param and both files
// (docs/admin.md, "Where the admin entry's rules come from").
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { COUNTER_PARAM_DEFAULTS, COUNTER_PARAM_NAMES } from "../../../functions/src/model/params";
import { errorMessage, functionsEnv } from "../lib/firebase-tools-internals";
import { envFiles, userEnvs } from "./context";
import type { CheckResult, Context } from "./types";

/** The functions package, as an app's codebase depends on it. */
export const FUNCTIONS_PACKAGE = "@firestore-exact-counter/functions";

export function checkAdminSettings(ctx: Context): CheckResult {
  const check = "admin settings";
  const ours = userEnvs(ctx, check);
  if ("failed" in ours) return ours.failed;
  const { projectId, projectDir } = ctx.options;
  const users = ctx.codebases.filter((c) => c !== ctx.codebase && c.source !== undefined && dependsOnPackage(join(projectDir, c.source)));
  if (users.length === 0) return { check, status: "ok", message: `no other codebase depends on ${FUNCTIONS_PACKAGE} (its admin entry)` };
  const problems: string[] = [];
  for (const codebase of users) {
    const source = join(projectDir, codebase.source!);
    const folder = relative(projectDir, source) || ".";
    let theirs: Record<string, string>;
    try {
      theirs = functionsEnv.loadUserEnvs({ functionsSource: source, projectId });
    } catch (error) {
      problems.push(`reading ${folder}/.env for ${projectId}: ${errorMessage(error)}`);
      continue;
    }
    for (const name of COUNTER_PARAM_NAMES) {
      const counters = valueOf(ours.values, name);
      const app = valueOf(theirs, name);
      if (counters !== app) {
        problems.push(`${name} is ${JSON.stringify(app)} for codebase "${codebase.codebase ?? "default"}" (${folder}/.env) but ${JSON.stringify(counters)} for the counters`);
      }
    }
  }
  const env = envFiles(ctx);
  const names = users.map((c) => `"${c.codebase ?? "default"}"`).join(", ");
  if (problems.length > 0) {
    return {
      check,
      status: "fail",
      message:
        `${problems.join("; ")}: the admin entry in codebase ${names} would create counters of another shape than the callables. ` +
        `Give it the counters' values (${env.base}, ${env.project}) in its own .env files (docs/admin.md)`,
    };
  }
  return { check, status: "ok", message: `codebase ${names} uses the admin entry with the counters' values of ${COUNTER_PARAM_NAMES.length} params` };
}

/** A param's value as an environment gives it (trimmed), or its default. */
function valueOf(values: Record<string, string>, name: (typeof COUNTER_PARAM_NAMES)[number]): string {
  return (values[name] ?? String(COUNTER_PARAM_DEFAULTS[name])).trim();
}

function dependsOnPackage(source: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(source, "package.json"), "utf8")) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
    return FUNCTIONS_PACKAGE in (pkg.dependencies ?? {}) || FUNCTIONS_PACKAGE in (pkg.devDependencies ?? {});
  } catch {
    return false;
  }
}
