// The runtime and the functions SDK: the runtime a deploy would choose is supported (and not about to be
// deprecated), the scripts run on its Node where the project has it, and firebase-functions is installed,
// recent enough to have a manifest, and the version package.json declares.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { errorMessage, nodeValidate, runtimeChoice, supported, versioning } from "../lib/firebase-tools-internals";
import { compareVersions, parseVersion } from "../lib/versions";
import type { CheckResult, Context } from "./types";

/** firebase-tools reads a manifest only from firebase-functions >= 3.20.0 (deploy/functions/runtimes/node/index.js). */
const MIN_FUNCTIONS_SDK = [3, 20, 0];
/** firebase-tools warns this long before a runtime's deprecation (deploy/functions/runtimes/supported/index.js). */
const WARN_BEFORE_DEPRECATION_MS = 90 * 24 * 3_600_000;
const DAY_MS = 24 * 3_600_000;

export function checkRuntime(ctx: Context): CheckResult[] {
  const check = "runtime";
  let runtime: string;
  try {
    runtime = runtimeChoice.getRuntimeChoice(ctx.sourceDir, ctx.runtimeFromConfig);
    supported.guardVersionSupport(runtime, ctx.options.now);
  } catch (error) {
    return [{ check, status: "fail", message: `${errorMessage(error)} ${runtimeSource(ctx)}` }];
  }
  const info = supported.RUNTIMES[runtime]!;
  const now = ctx.options.now.getTime();
  const deprecation = new Date(info.deprecationDate).getTime();
  const window = `deprecation ${info.deprecationDate}, decommission ${info.decommissionDate}`;
  const results: CheckResult[] = [];
  if (now >= deprecation) {
    results.push({ check, status: "warn", message: `${runtime} (${info.friendly}) is deprecated (${window}): upgrade now. ${runtimeSource(ctx)}` });
  } else if (now >= deprecation - WARN_BEFORE_DEPRECATION_MS) {
    const days = Math.ceil((deprecation - now) / DAY_MS);
    results.push({
      check,
      status: "warn",
      message: `${runtime} (${info.friendly}) will be deprecated on ${info.deprecationDate} (in ${days} days) and decommissioned on ${info.decommissionDate}: plan the upgrade. ${runtimeSource(ctx)}`,
    });
  } else {
    results.push({ check, status: "ok", message: `${runtime} (${info.friendly}) is supported: ${window}` });
  }
  const local = checkLocalNode(ctx, runtime);
  if (local !== undefined) results.push(local);
  return results;
}

/**
 * The Node that runs this, when it is not the runtime's major. A deploy builds and runs the functions on
 * the runtime whatever runs here, so that alone is no warning; the emulator runs them on the Node that
 * runs firebase-tools ("Using node@20 from host": 14.27.0 means to prefer a codebase's own `node`
 * package, but looks for its version where it never finds one). Only a project that has a Node of the
 * runtime's major as a package (this repository's devDependency `node`) can do better: npm run puts it
 * first on PATH, so a bare `node` or `tsx` was not meant (a warning).
 */
export function checkLocalNode(ctx: Context, runtime: string, host = process.versions.node): CheckResult | undefined {
  const runtimeMajor = runtime.replace(/^nodejs/, "");
  if (host.split(".")[0] === runtimeMajor) return undefined;
  const check = "local node";
  const own = [ctx.options.projectDir, ctx.sourceDir].find((dir) => nodePackageMajor(dir) === runtimeMajor);
  if (own !== undefined) {
    const where = relative(ctx.options.projectDir, join(own, "node_modules", "node")) || "node_modules/node";
    return {
      check,
      status: "warn",
      message: `this runs on Node ${host}, not the project's Node ${runtimeMajor} (${where}): run the scripts through npm (npm run …), which puts it first on PATH`,
    };
  }
  return {
    check,
    status: "ok",
    message: `Node ${host} runs this, not Node ${runtimeMajor}: no matter for a deploy, which builds and runs the functions on ${runtime}; the emulator runs them on the Node that runs firebase-tools`,
  };
}

/** The major version of the `node` package installed in `dir`'s node_modules (the npm registry's Node binary), if any. */
function nodePackageMajor(dir: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "node_modules", "node", "package.json"), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version.split(".")[0] : undefined;
  } catch {
    return undefined;
  }
}

function runtimeSource(ctx: Context): string {
  const pkg = relative(ctx.options.projectDir, join(ctx.sourceDir, "package.json"));
  return ctx.runtimeFromConfig !== undefined
    ? `(runtime "${ctx.runtimeFromConfig}" in firebase.json, which overrides engines.node in ${pkg})`
    : `(engines.node in ${pkg})`;
}

// --- functions SDK ----------------------------------------------------------------------------------

export function checkFunctionsSdk(ctx: Context): CheckResult {
  const check = "functions sdk";
  const relativeDir = relative(ctx.options.projectDir, ctx.sourceDir);
  // firebase-tools' check wants the package's `main` (lib/index.js) built: not yet at predeploy.
  if (ctx.options.predeploy !== true) {
    try {
      nodeValidate.packageJsonIsValid(relativeDir, ctx.sourceDir, ctx.options.projectDir);
    } catch (error) {
      return { check, status: "fail", message: errorMessage(error) };
    }
  }
  const version = versioning.getFunctionsSDKVersion(ctx.sourceDir);
  if (version === undefined) {
    return { check, status: "fail", message: `firebase-functions is not installed for ${relativeDir}/: run npm ci` };
  }
  if (compareVersions(version, MIN_FUNCTIONS_SDK) < 0) {
    return { check, status: "fail", message: `firebase-functions ${version} is older than ${MIN_FUNCTIONS_SDK.join(".")}, the oldest a deploy can read a manifest from` };
  }
  // A codebase that re-exports the package lists it in dependencies; the package itself (this
  // repository's own codebase) as a peer, which npm installs with it, in the deployed build too.
  const pkg = JSON.parse(readFileSync(join(ctx.sourceDir, "package.json"), "utf8")) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
  const declared = pkg.dependencies?.["firebase-functions"] ?? pkg.peerDependencies?.["firebase-functions"];
  if (declared === undefined) {
    return { check, status: "fail", message: `${relativeDir}/package.json does not list firebase-functions in dependencies: the deployed build would not install it` };
  }
  if (!satisfiesTildeOrCaret(version, declared)) {
    return { check, status: "fail", message: `installed firebase-functions ${version} does not satisfy "${declared}" in ${relativeDir}/package.json: run npm install` };
  }
  return { check, status: "ok", message: `firebase-functions ${version} (declared "${declared}")` };
}

/** Enough of npm's range syntax for a dependency declared as X.Y.Z, ~X.Y.Z or ^X.Y.Z. */
function satisfiesTildeOrCaret(version: string, range: string): boolean {
  const base = parseVersion(range);
  const have = parseVersion(version);
  if (compareVersions(version, base) < 0) return false;
  if (range.startsWith("^")) return have[0] === base[0];
  if (range.startsWith("~")) return have[0] === base[0] && have[1] === base[1];
  return compareVersions(version, base) === 0;
}
