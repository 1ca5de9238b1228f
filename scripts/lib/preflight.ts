// The deploy preflight: everything `firebase deploy --only functions:counters,firestore` checks before it
// touches the network, run offline with firebase-tools' own code where it has it (scripts/lib/firebase-tools-
// internals.ts), plus the settings a deploy cannot check for us (trigger region vs database location).
// Each check returns ok / warn / fail with a message that names the problem and the file to change.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { CLEANUP_DOCUMENT_PATTERN, REQUESTS, ROLLUP, SHARD_DOCUMENT_PATTERN } from "../../functions/src/counters/paths";
import { describeKind, parseCounterKinds, type KindLimits } from "../../functions/src/counters/kinds";
import { parseMirrorRules } from "../../functions/src/counters/mirror-rules";
import { parseCounterIdPatterns } from "../../functions/src/counters/patterns";
import * as functionParams from "../../functions/src/config/params";
import { PARAM_RULES, paramProblem, settingsProblems } from "../../functions/src/config/rules";
import { checkCodebase, countersCodebase } from "./codebase-check";
import { discoverBuild, endpointsOf, resolveBuildWithParams, type ProjectRef } from "./codebases";
import {
  deployValidate,
  errorMessage,
  firestoreApi,
  functionsEnv,
  nodeValidate,
  projectConfig,
  runtimeChoice,
  supported,
  versioning,
  type Backend,
  type Build,
  type FunctionsCodebaseConfig,
} from "./firebase-tools-internals";

export type Status = "ok" | "warn" | "fail";

export interface CheckResult {
  check: string;
  status: Status;
  message: string;
}

export interface PreflightOptions {
  /** The folder holding firebase.json. */
  projectDir: string;
  projectId: string;
  /** "Today", for the runtime's support window. */
  now: Date;
  /** host:port of a running Firestore emulator that compiles the rules (not used at predeploy). */
  firestoreHost: string;
  /**
   * Run as the deploy's predeploy step, before the build: only the checks that need neither the built
   * functions (the build comes next; the deploy itself then loads them) nor an emulator, offline and in a
   * few seconds: everything a param combination can get wrong (runPredeploy).
   */
  predeploy?: boolean;
}

/** The contract's functions (DESIGN.md): six callables and the rollup trigger; and the rollup's sweep. */
export const CALLABLES = ["createCounter", "incrementCounter", "setMember", "resetCounter", "reshardCounter", "deleteCounter"];
export const TRIGGER = "rollupTotal";
export const SWEEP = "rollupSweep";
/** Finishes deleting a counter whose cleanup outlasted deleteCounter's budget (functions/src/cleanup.ts). */
export const CLEANUP_TRIGGER = "cleanupDeletedCounter";
export const WRITTEN_EVENT = "google.cloud.firestore.document.v1.written";
export const UPDATED_EVENT = "google.cloud.firestore.document.v1.updated";
/** firebase-tools reads a manifest only from firebase-functions >= 3.20.0 (runtimes/node/index.js). */
const MIN_FUNCTIONS_SDK = [3, 20, 0];
/** firebase-tools warns this long before a runtime's deprecation (supported/index.js). */
const WARN_BEFORE_DEPRECATION_MS = 90 * 24 * 3_600_000;
const DAY_MS = 24 * 3_600_000;

/** Multi-region Firestore locations and the one region their triggers run in. */
const MULTI_REGION_TRIGGER_REGION: Record<string, string> = { nam5: "us-central1", eur3: "europe-west1" };

/** The region a Firestore trigger must use for a database in `location`. */
export function triggerRegionFor(location: string): string {
  return MULTI_REGION_TRIGGER_REGION[location] ?? location;
}

interface FirestoreConfig {
  database?: string;
  location?: string;
  rules?: string;
  indexes?: string;
}

interface FirebaseJson {
  functions?: unknown;
  firestore?: FirestoreConfig | FirestoreConfig[];
}

interface Context {
  options: PreflightOptions;
  firebaseJson: FirebaseJson;
  /** Every functions codebase of firebase.json (an app's own next to ours), normalized. */
  codebases: FunctionsCodebaseConfig[];
  /** Ours: the codebase named `counters`. */
  codebase: FunctionsCodebaseConfig;
  project: ProjectRef;
  sourceDir: string;
  runtimeFromConfig: string | undefined;
}

export async function runPreflight(options: PreflightOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  let ctx: Context;
  try {
    ctx = context(options);
  } catch (error) {
    return [{ check: "firebase.json", status: "fail", message: errorMessage(error) }];
  }
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
      results.push(await checkCodebase(ctx.project, ctx.codebases, resolved.backend));
    }
  }
  results.push(checkUniqueCounters(ctx));
  results.push(checkMirrors(ctx));
  results.push(checkCounterKinds(ctx));
  results.push(await checkRules(ctx), checkIndexes(ctx));
  return results;
}

/** The checks runPreflight makes only with the built functions or an emulator (skipped at predeploy). */
const AFTER_BUILD = ["discovery", "manifest", "placement", "codebase", "rules"];

/**
 * The predeploy subset: every check of the params a deploy to this project would use (their values from
 * the env files, their defaults from functions/src/params.ts), of the patterns and rules they hold, of the
 * runtime, the SDK and the index file. What a bad param combination breaks at run time (every increment
 * answering internal, say) is refused here, before the build and before the deploy touches the network.
 */
function runPredeploy(ctx: Context): CheckResult[] {
  const results: CheckResult[] = [...checkRuntime(ctx), checkFunctionsSdk(ctx)];
  const values = predeployParams(ctx);
  results.push(values.result);
  if (values.params !== undefined) results.push(checkSettings(ctx, values.params), checkExposure(ctx, values.params));
  results.push(checkUniqueCounters(ctx), checkMirrors(ctx), checkCounterKinds(ctx), checkIndexes(ctx));
  results.push({
    check: "predeploy",
    status: "ok",
    message: `checked before the build; ${AFTER_BUILD.join(", ")} need the built functions or an emulator: the deploy loads the functions next, and npm run preflight checks them all`,
  });
  return results;
}

/**
 * Every param's value for a deploy to the project, as the deploy resolves it without prompting: the env
 * files (`<source>/.env`, `.env.<projectId>`, read with firebase-tools' own loader), else the param's
 * default. A param with neither would make the deploy prompt: that fails here, as in the params check.
 */
function predeployParams(ctx: Context): { result: CheckResult; params?: Record<string, string> } {
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

/** The functions' params (functions/src/params.ts) by name, with their literal defaults as strings (undefined: none). */
function declaredParamDefaults(): Record<string, string | undefined> {
  const defaults: Record<string, string | undefined> = {};
  for (const value of Object.values(functionParams as Record<string, unknown>)) {
    if (typeof value !== "object" || value === null || !("name" in value) || !("options" in value)) continue;
    const { name, options } = value as { name: unknown; options: { default?: unknown } | undefined };
    if (typeof name !== "string") continue;
    const fallback = options?.default;
    defaults[name] = typeof fallback === "string" || typeof fallback === "number" || typeof fallback === "boolean" ? String(fallback) : undefined;
  }
  return defaults;
}

function context(options: PreflightOptions): Context {
  const path = join(options.projectDir, "firebase.json");
  const firebaseJson = JSON.parse(readFileSync(path, "utf8")) as FirebaseJson;
  const codebases = projectConfig.normalizeAndValidate(firebaseJson.functions);
  const codebase = countersCodebase(codebases, path);
  const { projectId, projectDir } = options;
  // What a deploy fetches from the project (getFirebaseConfig); only the ids matter offline.
  const firebaseConfig = { projectId, databaseURL: "", storageBucket: `${projectId}.appspot.com` };
  return {
    options,
    firebaseJson,
    codebases,
    codebase,
    project: { projectId, projectDir, firebaseConfig },
    sourceDir: join(projectDir, codebase.source!),
    runtimeFromConfig: codebase.runtime,
  };
}

/**
 * The params files of our codebase as a deploy reads them, relative to the project folder: functions/.env
 * here, counters/.env in an app's folder (docs/existing-app.md). Every fix names these, not a fixed path.
 */
function envFiles(ctx: Context): { base: string; project: string; source: string } {
  const source = relative(ctx.options.projectDir, ctx.sourceDir) || ".";
  return { source, base: `${source}/.env`, project: `${source}/.env.${ctx.options.projectId}` };
}

function firestoreConfig(ctx: Context): FirestoreConfig {
  const config = ctx.firebaseJson.firestore;
  if (config === undefined) throw new Error("firebase.json has no firestore section (rules and indexes are deployed with the functions)");
  if (Array.isArray(config)) {
    if (config.length !== 1) throw new Error("firebase.json lists several Firestore databases; the counters use one");
    return config[0]!;
  }
  return config;
}

// --- runtime ----------------------------------------------------------------------------------------

function checkRuntime(ctx: Context): CheckResult[] {
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
  const hostMajor = process.versions.node.split(".")[0];
  const runtimeMajor = runtime.replace(/^nodejs/, "");
  if (hostMajor !== runtimeMajor) {
    results.push({
      check: "local node",
      status: "warn",
      message: `this runs on Node ${process.versions.node} but the functions deploy to ${runtime}: run the scripts through npm (npm run …), which puts the project's Node ${runtimeMajor} first on PATH`,
    });
  }
  return results;
}

function runtimeSource(ctx: Context): string {
  const pkg = relative(ctx.options.projectDir, join(ctx.sourceDir, "package.json"));
  return ctx.runtimeFromConfig !== undefined
    ? `(runtime "${ctx.runtimeFromConfig}" in firebase.json, which overrides engines.node in ${pkg})`
    : `(engines.node in ${pkg})`;
}

// --- functions SDK ----------------------------------------------------------------------------------

function checkFunctionsSdk(ctx: Context): CheckResult {
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
  const pkg = JSON.parse(readFileSync(join(ctx.sourceDir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
  const declared = pkg.dependencies?.["firebase-functions"];
  if (declared === undefined) {
    return { check, status: "fail", message: `${relativeDir}/package.json does not list firebase-functions in dependencies: the deployed build would not install it` };
  }
  if (!satisfiesTildeOrCaret(version, declared)) {
    return { check, status: "fail", message: `installed firebase-functions ${version} does not satisfy "${declared}" in ${relativeDir}/package.json: run npm install` };
  }
  return { check, status: "ok", message: `firebase-functions ${version} (declared "${declared}")` };
}

function parseVersion(version: string): number[] {
  return version.replace(/^[~^=v]+/, "").split("-")[0]!.split(".").map((part) => Number(part) || 0);
}

function compareVersions(version: string, other: number[]): number {
  const parts = parseVersion(version);
  for (let i = 0; i < 3; i++) {
    const diff = (parts[i] ?? 0) - (other[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
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

// --- discovery and params -----------------------------------------------------------------------------

async function discover(ctx: Context): Promise<{ result: CheckResult; build?: Build }> {
  const check = "discovery";
  try {
    const build = await discoverBuild(ctx.project, ctx.codebase);
    const names = Object.keys(build.endpoints).sort();
    return {
      result: { check, status: "ok", message: `the functions SDK's manifest lists ${names.length} endpoints and ${build.params.length} params` },
      build,
    };
  } catch (error) {
    return { result: { check, status: "fail", message: `loading the functions to read their manifest failed (build them first: npm run build): ${errorMessage(error)}` } };
  }
}

async function resolve(ctx: Context, build: Build): Promise<{ result: CheckResult; backend?: Backend; params?: Record<string, string> }> {
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
 * Every param in its range and the params consistent with each other (functions/src/settings.ts, the
 * same rules the functions apply at run time), with the values a deploy to this project would use.
 */
function checkSettings(ctx: Context, params: Record<string, string>): CheckResult {
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
 * The settings that are open by default for local use (like App Check, DESIGN.md), named for a real
 * project: functions/.env keeps every app and every local run working (any signed-in user may create
 * counters, no per-caller limit, no App Check), and a deploy to a project that is not demo-* is warned
 * until its .env.<projectId> makes the choice. Only a warning: each open setting is a legitimate choice
 * for some apps (docs/abuse.md prices each).
 */
function checkExposure(ctx: Context, params: Record<string, string>): CheckResult {
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

function checkManifest(ctx: Context, backend: Backend): CheckResult {
  const check = "manifest";
  const endpoints = endpointsOf(backend);
  const problems: string[] = [];
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  const expected = [...CALLABLES, TRIGGER, SWEEP, CLEANUP_TRIGGER];
  for (const name of expected) if (!byId.has(name)) problems.push(`${name} is not exported by ${envFiles(ctx).source}/src/index.ts`);
  for (const e of endpoints) {
    if (!expected.includes(e.id)) problems.push(`unexpected endpoint ${e.id}`);
    if (e.platform !== "gcfv2") problems.push(`${e.id} is ${e.platform}, not a 2nd-gen function`);
  }
  for (const name of CALLABLES) {
    const e = byId.get(name);
    if (e !== undefined && e.callableTrigger === undefined) problems.push(`${name} is not a callable (onCall) function`);
  }
  const trigger = byId.get(TRIGGER);
  if (trigger !== undefined) {
    const event = trigger.eventTrigger;
    if (event === undefined) problems.push(`${TRIGGER} is not an event trigger`);
    else {
      if (event.eventType !== WRITTEN_EVENT) problems.push(`${TRIGGER} listens to ${event.eventType}, not ${WRITTEN_EVENT}`);
      const document = event.eventFilterPathPatterns?.document ?? event.eventFilters?.document;
      if (document !== SHARD_DOCUMENT_PATTERN) problems.push(`${TRIGGER} watches "${document}", not "${SHARD_DOCUMENT_PATTERN}"`);
      if (event.retry !== true) problems.push(`${TRIGGER} has retries off: a failed rollup would be dropped, not retried`);
    }
  }
  const sweep = byId.get(SWEEP);
  if (sweep !== undefined && sweep.scheduleTrigger === undefined) problems.push(`${SWEEP} is not a scheduled (onSchedule) function`);
  const cleanup = byId.get(CLEANUP_TRIGGER)?.eventTrigger;
  if (byId.has(CLEANUP_TRIGGER)) {
    const document = cleanup?.eventFilterPathPatterns?.document ?? cleanup?.eventFilters?.document;
    if (cleanup?.eventType !== UPDATED_EVENT || document !== CLEANUP_DOCUMENT_PATTERN) {
      problems.push(`${CLEANUP_TRIGGER} must listen to ${UPDATED_EVENT} on "${CLEANUP_DOCUMENT_PATTERN}": deletions too large for deleteCounter's budget would never finish`);
    } else if (cleanup.retry !== true) {
      problems.push(`${CLEANUP_TRIGGER} has retries off: a failed cleanup round would be dropped and the deletion left unfinished until the sweep`);
    }
  }
  if (problems.length > 0) return { check, status: "fail", message: problems.join("; ") };
  const regions = [...new Set(endpoints.map((e) => e.region))].join(", ");
  const t = trigger!;
  const sizing = `timeout ${t.timeoutSeconds ?? "default"} s, ${t.availableMemoryMb ?? "default"} MB, ${t.cpu} CPU, concurrency ${t.concurrency}, maxInstances ${t.maxInstances ?? "none"}, minInstances ${t.minInstances ?? 0}`;
  return {
    check,
    status: "ok",
    message:
      `${endpoints.length} v2 endpoints in ${regions}: ${CALLABLES.length} callables; ${TRIGGER} on ${WRITTEN_EVENT} ${SHARD_DOCUMENT_PATTERN}, retry on, ${sizing}; ` +
      `${SWEEP} ${sweep!.scheduleTrigger!.schedule}; ${CLEANUP_TRIGGER} on ${UPDATED_EVENT} ${CLEANUP_DOCUMENT_PATTERN}, retry on`,
  };
}

function checkPlacement(ctx: Context, backend: Backend): CheckResult[] {
  const check = "placement";
  let firestore: FirestoreConfig;
  try {
    firestore = firestoreConfig(ctx);
  } catch (error) {
    return [{ check, status: "fail", message: errorMessage(error) }];
  }
  const trigger = endpointsOf(backend).find((e) => e.id === TRIGGER);
  if (trigger === undefined) return [];
  const results: CheckResult[] = [];
  const env = envFiles(ctx);
  const location = firestore.location;
  const expected = location === undefined ? undefined : triggerRegionFor(location);
  if (location === undefined) {
    // An existing database keeps the location it was created in, which nothing offline can read: do not
    // guess (a deploy only creates a missing database in nam5).
    results.push({
      check,
      status: "warn",
      message:
        `unknown: firebase.json names no firestore.location, so whether ${TRIGGER} in ${trigger.region} runs in its database's location cannot be checked ` +
        `(nam5 → us-central1, eur3 → europe-west1, a regional database → that region). Add "location": "<your database's location>" to the firestore section of firebase.json ` +
        `(the Firebase console shows it), and set REGION in ${env.project} to match`,
    });
  } else if (trigger.region !== expected) {
    results.push({
      check,
      status: "fail",
      message: `${TRIGGER} would deploy to ${trigger.region}, but a Firestore trigger must run in its database's location (${location} → ${expected}); set REGION=${expected} in ${env.project}, or correct firestore.location in firebase.json`,
    });
  } else {
    results.push({ check, status: "ok", message: `${TRIGGER} in ${trigger.region} matches the database location ${location}` });
  }
  const database = firestore.database ?? "(default)";
  const triggerDatabase = trigger.eventTrigger?.eventFilters?.database ?? "(default)";
  if (triggerDatabase !== database) {
    results.push({
      check: "database",
      status: "fail",
      message: `${TRIGGER} listens to database "${triggerDatabase}" (DATABASE_ID) but firebase.json deploys rules and indexes to "${database}" (firestore.database); make them the same (DATABASE_ID in ${env.project}, or firestore.database in firebase.json)`,
    });
  }
  return results;
}

// --- counter-id patterns ---------------------------------------------------------------------------

/**
 * UNIQUE_COUNTERS, parsed by the functions' own parser (counters/patterns.ts) from the values a deploy
 * would use: a bad pattern fails here, naming it, instead of making createCounter refuse every call.
 */
function checkUniqueCounters(ctx: Context): CheckResult {
  return checkPatternParam(ctx, "unique counters", "UNIQUE_COUNTERS", (value) => {
    const patterns = parseCounterIdPatterns("UNIQUE_COUNTERS", value);
    if (patterns.length === 0) return "UNIQUE_COUNTERS is empty: no counter id is reserved for unique counters";
    return `UNIQUE_COUNTERS: ids matching ${patterns.map((p) => p.source).join(", ")} are always unique counters`;
  });
}

/**
 * MIRRORS, parsed by the functions' own parser (counters/mirrors.ts): a bad rule fails here, naming it,
 * instead of the rollup committing totals without their mirrors (it logs an ERROR) and the admin
 * callables refusing to run.
 */
function checkMirrors(ctx: Context): CheckResult {
  return checkPatternParam(ctx, "mirrors", "MIRRORS", (value) => {
    const rules = parseMirrorRules("MIRRORS", value);
    if (rules.length === 0) return "MIRRORS is empty: totals are written on counters/{id} only";
    return `MIRRORS: ${rules.map((r) => `${r.counter.source} -> ${r.document.source}:${r.field}`).join(", ")}`;
  });
}

/**
 * COUNTER_KINDS, parsed by the functions' own parser (counters/kinds.ts) against the MAX_SHARDS and MAX_DELTA
 * a deploy would use: a bad rule fails here, naming it, instead of createCounter and incrementCounter
 * refusing every call with internal.
 */
function checkCounterKinds(ctx: Context): CheckResult {
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

/** The params' values in the env files of our source for the project, read with firebase-tools' own loader. */
function userEnvs(ctx: Context, check: string): { values: Record<string, string> } | { failed: CheckResult } {
  const { projectId } = ctx.options;
  try {
    return { values: functionsEnv.loadUserEnvs({ functionsSource: ctx.sourceDir, projectId }) };
  } catch (error) {
    return { failed: { check, status: "fail", message: `reading ${envFiles(ctx).base} for ${projectId}: ${errorMessage(error)}` } };
  }
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

// --- rules and indexes -----------------------------------------------------------------------------

interface RulesIssue {
  sourcePosition?: { fileName?: string; line?: number; column?: number };
  description?: string;
  severity?: string;
}

async function checkRules(ctx: Context): Promise<CheckResult> {
  const check = "rules";
  let file: string;
  let source: string;
  try {
    file = firestoreConfig(ctx).rules ?? "";
    if (file === "") throw new Error("firebase.json names no firestore.rules file");
    source = readFileSync(join(ctx.options.projectDir, file), "utf8");
  } catch (error) {
    return { check, status: "fail", message: errorMessage(error) };
  }
  // The Firestore emulator compiles rules with the same compiler as production and answers with the
  // issues (warnings) or a compile error; its own project id keeps them away from anything else.
  const url = `http://${ctx.options.firestoreHost}/emulator/v1/projects/demo-preflight-rules:securityRules`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ rules: { files: [{ name: file, content: source }] } }),
    });
  } catch (error) {
    return { check, status: "fail", message: `could not reach the Firestore emulator at ${ctx.options.firestoreHost} to compile ${file}: ${errorMessage(error)}` };
  }
  const body = (await response.json()) as { issues?: RulesIssue[]; error?: { message?: string } };
  if (!response.ok) {
    return { check, status: "fail", message: `${file} does not compile: ${(body.error?.message ?? `HTTP ${response.status}`).replace(/\n/g, " ")}` };
  }
  const issues = (body.issues ?? []).map(
    (i) => `${i.sourcePosition?.fileName ?? file}:${i.sourcePosition?.line ?? "?"}:${i.sourcePosition?.column ?? "?"} ${i.severity ?? ""} ${i.description ?? ""}`.trim(),
  );
  if (issues.length > 0) return { check, status: "warn", message: `${file} compiles with issues: ${issues.join("; ")}` };
  return { check, status: "ok", message: `${file} compiles` };
}

/** The idempotency records' collection id before it became the backend's own (functions/src/counters/paths.ts). */
const LEGACY_REQUESTS = "requests";

interface IndexSpec {
  fieldOverrides?: { collectionGroup?: string; fieldPath?: string; ttl?: boolean; indexes?: { order?: string; queryScope?: string }[] }[];
}

function checkIndexes(ctx: Context): CheckResult {
  const check = "indexes";
  try {
    const file = firestoreConfig(ctx).indexes;
    if (file === undefined) throw new Error("firebase.json names no firestore.indexes file");
    const spec = JSON.parse(readFileSync(join(ctx.options.projectDir, file), "utf8")) as IndexSpec;
    new firestoreApi.FirestoreApi().validateSpec(spec);
    const ttl = spec.fieldOverrides?.some((o) => o.collectionGroup === REQUESTS && o.fieldPath === "expireAt" && o.ttl === true);
    if (!ttl) {
      return { check, status: "fail", message: `${file} has no TTL override on ${REQUESTS}.expireAt: idempotency records would never expire` };
    }
    const sweepIndex = spec.fieldOverrides?.some(
      (o) =>
        o.collectionGroup === ROLLUP &&
        o.fieldPath === "dueAt" &&
        (o.indexes ?? []).some((i) => i.order === "ASCENDING" && i.queryScope === "COLLECTION_GROUP"),
    );
    if (!sweepIndex) {
      return {
        check,
        status: "fail",
        message: `${file} has no collection-group index on ${ROLLUP}.dueAt: ${SWEEP}'s query would fail, and claims orphaned when retries run out would never be finished`,
      };
    }
    // The TTL policy of earlier versions, on the group `requests`: it deletes every document with a past
    // `expireAt` in any collection named requests, an app's own too (docs/deploying.md, upgrading).
    if (spec.fieldOverrides?.some((o) => o.collectionGroup === LEGACY_REQUESTS && o.ttl === true)) {
      return {
        check,
        status: "warn",
        message:
          `${file} still has the TTL override on ${LEGACY_REQUESTS}.expireAt of earlier versions: it deletes documents with a past expireAt in ` +
          `every collection named ${LEGACY_REQUESTS}, your app's too; remove it once the old idempotency records have expired (docs/deploying.md, "Upgrading")`,
      };
    }
    return { check, status: "ok", message: `${file} is valid, with the TTL policy on ${REQUESTS}.expireAt and ${SWEEP}'s index on ${ROLLUP}.dueAt` };
  } catch (error) {
    return { check, status: "fail", message: `firestore indexes: ${errorMessage(error)}` };
  }
}
