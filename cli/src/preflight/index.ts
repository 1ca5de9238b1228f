// The deploy preflight: everything `firebase deploy --only functions:counters,firestore` checks before it
// touches the network, run offline with firebase-tools' own code where it has it (lib/firebase-tools-
// internals.ts), plus the settings a deploy cannot check for us (trigger region vs database location).
// Each check (a file of this folder) returns ok / warn / fail with a message that names the problem and
// the file to change; this runner lists them in the order they print.
import { errorMessage } from "../lib/firebase-tools-internals";
import { checkAdminSettings } from "./admin";
import { checkCodebase } from "./codebase";
import { context } from "./context";
import { checkIndexes } from "./indexes";
import { checkManifest, discover } from "./manifest";
import { checkExposure, checkSettings, predeployParams, resolve } from "./params";
import { checkIdPatterns } from "./id-patterns";
import { checkDocumentCounters } from "./documents";
import { checkAutoCreate, checkCounterKinds, checkExtensionCounters, checkLeaderboards, checkMirrors, checkUniqueCounters, checkWindowedCounters } from "./patterns";
import { checkPlacement } from "./placement";
import { checkMirroredFields, checkRules, checkRulesGuarantees } from "./rules";
import { checkFunctionsSdk, checkRuntime } from "./runtime";
import type { CheckResult, Context, PreflightOptions } from "./types";

export { CALLABLES, DEPLOYED_FUNCTIONS } from "./manifest";
export type { CheckResult, PreflightOptions, Status } from "./types";

export async function runPreflight(options: PreflightOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  let ctx: Context;
  try {
    ctx = context(options);
  } catch (error) {
    return [{ check: "firebase.json", status: "fail", message: errorMessage(error) }];
  }
  if (options.rulesOnly === true) return runRulesChecks(ctx);
  if (options.predeploy === true) return runPredeploy(ctx);
  results.push(...checkRuntime(ctx), checkFunctionsSdk(ctx));
  const discovered = await discover(ctx);
  results.push(discovered.result);
  if (discovered.build !== undefined) {
    const resolved = await resolve(ctx, discovered.build);
    results.push(resolved.result);
    if (resolved.params !== undefined) results.push(checkSettings(ctx, resolved.params), checkExposure(ctx, resolved.params));
    if (resolved.backend !== undefined) {
      results.push(checkManifest(ctx, resolved.backend), ...checkPlacement(ctx, resolved.backend));
      results.push(await checkCodebase(ctx.project, ctx.codebases, resolved.backend, ctx.codebase.codebase));
    }
  }
  results.push(...checkPatternParams(ctx));
  results.push(...(await runRulesChecks(ctx)), checkIndexes(ctx));
  return results;
}

/** The params that hold counter-id patterns, each parsed, then read together; and the admin entry's copies of them. */
function checkPatternParams(ctx: Context): CheckResult[] {
  return [
    checkUniqueCounters(ctx),
    checkWindowedCounters(ctx),
    checkMirrors(ctx),
    checkCounterKinds(ctx),
    checkAutoCreate(ctx),
    checkExtensionCounters(ctx),
    checkDocumentCounters(ctx),
    checkLeaderboards(ctx),
    checkIdPatterns(ctx),
    checkAdminSettings(ctx),
  ];
}

/**
 * The rules file compiles, keeps the counters' guarantees, and lets no client write a mirrored field (all in
 * the emulator at firestoreHost): part of every npm run preflight, and alone (--rules) the predeploy step of
 * firebase.json's firestore section, so whenever a deploy includes Firestore rules.
 */
async function runRulesChecks(ctx: Context): Promise<CheckResult[]> {
  const compiled = await checkRules(ctx);
  if (compiled.status === "fail") return [compiled];
  return [compiled, await checkRulesGuarantees(ctx), await checkMirroredFields(ctx)];
}

/** The checks runPreflight makes only with the built functions (skipped at predeploy). */
const AFTER_BUILD = ["discovery", "manifest", "placement", "codebase"];

/**
 * The predeploy subset: every check of the params a deploy to this project would use (their values from
 * the env files, their defaults from functions/src/config/params.ts), of the patterns and rules they hold, of the
 * runtime, the SDK and the index file. What a bad param combination breaks at run time (every increment
 * answering internal, say) is refused here, before the build and before the deploy touches the network.
 */
function runPredeploy(ctx: Context): CheckResult[] {
  const results: CheckResult[] = [...checkRuntime(ctx), checkFunctionsSdk(ctx)];
  const values = predeployParams(ctx);
  results.push(values.result);
  if (values.params !== undefined) results.push(checkSettings(ctx, values.params), checkExposure(ctx, values.params));
  results.push(...checkPatternParams(ctx), checkIndexes(ctx));
  results.push({
    check: "predeploy",
    status: "ok",
    message:
      `checked before the build; ${AFTER_BUILD.join(", ")} need the built functions: the deploy loads them next, and npm run preflight checks them all; ` +
      "the rules and their guarantees are the firestore predeploy step (npm run preflight -- --rules)",
  });
  return results;
}
