// The functions' own codebase, `counters` unless init named it otherwise (docs/existing-app.md): finding
// it in firebase.json among an app's codebases, and checking with firebase-tools' own filter code that
// `firebase deploy --only functions:counters` deploys every one of our functions and none of the app's.
// A codebase named `default` would make a deploy of this repository offer to delete every function of
// the project that is not in our source.
import { discoverBuild, endpointsOf, resolveBuild, type ProjectRef } from "../lib/codebases";
import {
  deployValidate,
  errorMessage,
  functionsDeployHelper,
  type Backend,
  type FunctionsCodebaseConfig,
} from "../lib/firebase-tools-internals";
import { CODEBASE } from "../lib/project";
import type { CheckResult } from "./types";

export { CODEBASE };
/** The `--only` selector that deploys this backend alone (docs/existing-app.md). */
export const DEPLOY_ONLY = `functions:${CODEBASE}`;

/** Our codebase's entry in firebase.json's (normalized) functions list; throws naming what is wrong. */
export function countersCodebase(codebases: FunctionsCodebaseConfig[], file: string, name = CODEBASE): FunctionsCodebaseConfig {
  const ours = codebases.find((c) => c.codebase === name);
  if (ours?.source !== undefined) return ours;
  if (ours !== undefined) throw new Error(`${file}: functions codebase "${name}" has no local source folder`);
  const names = codebases.map((c) => `"${c.codebase ?? "default"}"`).join(", ");
  throw new Error(
    `${file} has no functions codebase "${name}" (it has ${names || "none"}): name the counters' codebase "${name}" (firestore-exact-counter init adds it). ` +
      `Under "default" a deploy of this repository offers to delete every function of the project that is not in its source`,
  );
}

function describe(count: number): string {
  return `${count} function${count === 1 ? "" : "s"}`;
}

/** `firebase deploy --only functions:counters` against firebase.json's codebases and our resolved backend. */
export async function checkCodebase(project: ProjectRef, codebases: FunctionsCodebaseConfig[], ours: Backend, name = CODEBASE): Promise<CheckResult> {
  const check = "codebase";
  const only = `functions:${name}`;
  const filters = functionsDeployHelper.getEndpointFilters({ only }, codebases);
  const targeted = functionsDeployHelper.targetCodebases(codebases, filters);
  const ourEndpoints = endpointsOf(ours);
  const missed = ourEndpoints.filter((e) => !functionsDeployHelper.endpointMatchesAnyFilter(e, filters));
  if (!targeted.includes(name) || missed.length > 0) {
    const names = missed.map((e) => e.id).join(", ");
    return { check, status: "fail", message: `firebase deploy --only ${only} would not deploy ${names || `codebase "${name}"`}` };
  }

  // Every other codebase: a function name in common fails every deploy that loads both (and a name
  // deployed from another codebase would be taken over by ours). The selector also reads as a function
  // id in codebase "default", so an app function named counters or counters-… would be deployed with ours.
  const problems: string[] = [];
  const warnings: string[] = [];
  const backends: Record<string, Backend> = { [name]: ours };
  const others: string[] = [];
  for (const codebase of codebases.filter((c) => c.codebase !== name)) {
    const other = codebase.codebase ?? "default";
    try {
      const backend = await resolveBuild(project, codebase, await discoverBuild(project, codebase));
      backends[other] = backend;
      const endpoints = endpointsOf(backend);
      others.push(`"${other}" (${describe(endpoints.length)})`);
      const alsoDeployed = targeted.includes(other) ? endpoints.filter((e) => functionsDeployHelper.endpointMatchesAnyFilter(e, filters)) : [];
      if (alsoDeployed.length > 0) {
        warnings.push(
          `firebase deploy --only ${only} would also deploy ${alsoDeployed.map((e) => e.id).join(", ")} of codebase "${other}" (a function id starting with "${name}" matches the selector too)`,
        );
      }
    } catch (error) {
      warnings.push(`could not load codebase "${other}" (${codebase.source ?? "remote source"}) to compare its function names with ours: ${errorMessage(error)}`);
    }
  }
  try {
    deployValidate.endpointsAreUnique(backends);
  } catch (error) {
    problems.push(`${errorMessage(error).replace(/\s+/g, " ")} — every deploy that loads both codebases fails; rename the app's function`);
  }
  if (problems.length > 0) return { check, status: "fail", message: [...problems, ...warnings].join("; ") };
  const deploys = `firebase deploy --only ${only} deploys the ${describe(ourEndpoints.length)} of codebase "${name}"`;
  const rest = others.length > 0 ? `; no function name in common with codebase ${others.join(", ")}` : "";
  if (warnings.length > 0) return { check, status: "warn", message: `${deploys}${rest}; ${warnings.join("; ")}` };
  return { check, status: "ok", message: `${deploys}${rest}` };
}
