// Every deploy-time setting of the backend, declared to firebase-functions once, from the table of
// model/params.ts (kind, default, description, and why each default is what it is), in its order: a param
// added to the table is declared here with nothing to write. A codebase needs a value for each in its .env
// (firebase-tools prompts otherwise, and the emulator waits forever): params.env (the defaults, for apps
// that re-export the package; init writes them with their descriptions) and this repository's
// functions/.env follow the same table (a unit test holds them to it). Override per project in
// .env.<projectId>.
import { defineBoolean, defineInt, defineString, type BooleanParam, type IntParam, type StringParam } from "firebase-functions/params";
import { PARAMS, type ParamDeclaration, type ParamName } from "../model/params";
import type { RawValue } from "../model/param-rules";
import { paramAtLoad } from "./at-load";

/** The firebase-functions param of each kind. */
type Declared<K extends ParamDeclaration["kind"]> = K extends "int" ? IntParam : K extends "boolean" ? BooleanParam : StringParam;

function declare(name: ParamName): IntParam | BooleanParam | StringParam {
  const param: ParamDeclaration = PARAMS[name];
  switch (param.kind) {
    case "int":
      return defineInt(name, { default: param.default, description: param.description });
    case "boolean":
      return defineBoolean(name, { default: param.default, description: param.description });
    case "string":
      return defineString(name, { default: param.default, description: param.description });
  }
}

/** Every param of the table, declared, by name. */
export const DECLARED = Object.fromEntries(Object.keys(PARAMS).map((name) => [name, declare(name as ParamName)])) as {
  [N in ParamName]: Declared<(typeof PARAMS)[N]["kind"]>;
};

/** A param's value as deployed, now (a number, a boolean or text, by its kind). */
export function deployedValue(name: ParamName): RawValue {
  return DECLARED[name].value();
}

// What the functions' options take as they are (the platform reads them from the deploy manifest, never
// our code at run time, except DATABASE_ID), and `npm run preflight` checks them before a deploy.
export const { MAX_INSTANCES: maxInstances, REGION: region, DATABASE_ID: databaseId } = DECLARED;
export const { ROLLUP_TIMEOUT_SECONDS: rollupTimeoutSeconds, ROLLUP_MEMORY_MB: rollupMemoryMb, ROLLUP_CONCURRENCY: rollupConcurrency } = DECLARED;
export const { ROLLUP_MIN_INSTANCES: rollupMinInstances } = DECLARED;

/**
 * Whether foldExtensionShards is deployed: EXTENSION_COUNTERS is not empty when the module loads. A
 * function's existence cannot wait for it to run, so this is read at load, from the environment or, while
 * firebase-tools reads the manifest, from the codebase's .env files (at-load.ts): so the main entry
 * exports exactly the contract's functions unless the param names extension counters.
 */
export function extensionCountersAtLoad(): boolean {
  return (paramAtLoad("EXTENSION_COUNTERS") ?? "").trim() !== "";
}

/**
 * Whether rollupBoard is deployed: LEADERBOARDS is not empty when the module loads (read as EXTENSION_COUNTERS
 * is, above), so the main entry exports exactly the contract's functions unless the param names leaderboards.
 */
export function leaderboardsAtLoad(): boolean {
  return (paramAtLoad("LEADERBOARDS") ?? "").trim() !== "";
}

/**
 * DOCUMENT_COUNTERS as the module loads, read as EXTENSION_COUNTERS is (above): which document triggers the
 * main entry exports (entry/documentCounters.ts). undefined when the param has no value.
 */
export function documentCountersAtLoad(): string | undefined {
  return paramAtLoad("DOCUMENT_COUNTERS");
}

/**
 * App Check replay protection: every callable consumes the caller's App Check token, and a token used
 * before is refused. Read from the environment when the module loads (onCall's consumeAppCheckToken
 * option took only a literal before firebase-functions 7; 7.x also takes the param); firebase-tools puts functions/.env's values
 * into the environment both when it reads the deploy manifest and when an instance starts, so the option
 * and the check in entry/oncall.ts see the same value. Declared as a param so the preflight checks it.
 */
export function consumeAppCheckTokenAtLoad(): boolean {
  return process.env.CONSUME_APP_CHECK_TOKEN === "true";
}

/** CPUs of a rollupTotal instance. Not a param: firebase-functions takes only a literal here, and
 * concurrency above 1 needs at least one full CPU. */
export const ROLLUP_CPU = 1;
