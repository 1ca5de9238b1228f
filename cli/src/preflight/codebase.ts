// The functions' own codebase, `counters` (docs/existing-app.md): finding it in firebase.json among an
// app's codebases, and checking with firebase-tools' own filter code that `firebase deploy --only
// functions:counters` deploys every one of our functions and none of the app's.
// A codebase named `default` would make a deploy of this repository offer to delete every function of
// the project that is not in our source.
import { discoverBuild, endpointsOf, resolveBuild, type ProjectRef } from "../codebases";
import {
  deployValidate,
  errorMessage,
  functionsDeployHelper,
  type Backend,
  type FunctionsCodebaseConfig,
} from "../firebase-tools-internals";
import type { CheckResult } from "./types";

export const CODEBASE = "counters";
/** The `--only` selector that deploys this backend alone (docs/existing-app.md). */
export const DEPLOY_ONLY = `functions:${CODEBASE}`;

/** Our codebase's entry in firebase.json's (normalized) functions list; throws naming what is wrong. */
export function countersCodebase(codebases: FunctionsCodebaseConfig[], file: string): FunctionsCodebaseConfig {
  const ours = codebases.find((c) => c.codebase === CODEBASE);
  if (ours?.source !== undefined) return ours;
  if (ours !== undefined) throw new Error(`${file}: functions codebase "${CODEBASE}" has no local source folder`);
  const names = codebases.map((c) => `"${c.codebase ?? "default"}"`).join(", ");
  throw new Error(
    `${file} has no functions codebase "${CODEBASE}" (it has ${names || "none"}): name the counters' codebase "${CODEBASE}". ` +
      `Under "default" a deploy of this repository offers to delete every function of the project that is not in its source`,
  );
}

function describe(count: number): string {
  return `${count} function${count === 1 ? "" : "s"}`;
}

/** `firebase deploy --only functions:counters` against firebase.json's codebases and our resolved backend. */
export async function checkCodebase(project: ProjectRef, codebases: FunctionsCodebaseConfig[], ours: Backend): Promise<CheckResult> {
  const check = "codebase";
  const filters = functionsDeployHelper.getEndpointFilters({ only: DEPLOY_ONLY }, codebases);
  const targeted = functionsDeployHelper.targetCodebases(codebases, filters);
  const ourEndpoints = endpointsOf(ours);
  const missed = ourEndpoints.filter((e) => !functionsDeployHelper.endpointMatchesAnyFilter(e, filters));
  if (!targeted.includes(CODEBASE) || missed.length > 0) {
    const names = missed.map((e) => e.id).join(", ");
    return { check, status: "fail", message: `firebase deploy --only ${DEPLOY_ONLY} would not deploy ${names || `codebase "${CODEBASE}"`}` };
  }

  // Every other codebase: a function name in common fails every deploy that loads both (and a name
  // deployed from another codebase would be taken over by ours). The selector also reads as a function
  // id in codebase "default", so an app function named counters or counters-… would be deployed with ours.
  const problems: string[] = [];
  const warnings: string[] = [];
  const backends: Record<string, Backend> = { [CODEBASE]: ours };
  const others: string[] = [];
  for (const codebase of codebases.filter((c) => c.codebase !== CODEBASE)) {
    const name = codebase.codebase ?? "default";
    try {
      const backend = await resolveBuild(project, codebase, await discoverBuild(project, codebase));
      backends[name] = backend;
      const endpoints = endpointsOf(backend);
      others.push(`"${name}" (${describe(endpoints.length)})`);
      const alsoDeployed = targeted.includes(name) ? endpoints.filter((e) => functionsDeployHelper.endpointMatchesAnyFilter(e, filters)) : [];
      if (alsoDeployed.length > 0) {
        warnings.push(
          `firebase deploy --only ${DEPLOY_ONLY} would also deploy ${alsoDeployed.map((e) => e.id).join(", ")} of codebase "${name}" (a function id starting with "${CODEBASE}" matches the selector too)`,
        );
      }
    } catch (error) {
      warnings.push(`could not load codebase "${name}" (${codebase.source ?? "remote source"}) to compare its function names with ours: ${errorMessage(error)}`);
    }
  }
  try {
    deployValidate.endpointsAreUnique(backends);
  } catch (error) {
    problems.push(`${errorMessage(error).replace(/\s+/g, " ")} — every deploy that loads both codebases fails; rename the app's function`);
  }
  if (problems.length > 0) return { check, status: "fail", message: [...problems, ...warnings].join("; ") };
  const deploys = `firebase deploy --only ${DEPLOY_ONLY} deploys the ${describe(ourEndpoints.length)} of codebase "${CODEBASE}"`;
  const rest = others.length > 0 ? `; no function name in common with codebase ${others.join(", ")}` : "";
  if (warnings.length > 0) return { check, status: "warn", message: `${deploys}${rest}; ${warnings.join("; ")}` };
  return { check, status: "ok", message: `${deploys}${rest}` };
}
