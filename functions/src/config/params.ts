// Every deploy-time setting of the backend, declared to firebase-functions once, from the table of
// model/params.ts (kind, default, description, and why each default is what it is). A codebase needs a
// value for each in its .env (firebase-tools prompts otherwise, and the emulator waits forever): params.env
// (the defaults, for apps that re-export the package; init writes them with their descriptions) and this
// repository's functions/.env follow the same table (a unit test holds them to it). Override per project in
// .env.<projectId>.
import { defineBoolean, defineInt, defineString } from "firebase-functions/params";
import { PARAMS, type ParamName } from "../model/params";
import { paramAtLoad } from "./at-load";

/** A param's options as firebase-functions takes them: its default and description, from the table. */
function declared<N extends ParamName>(name: N): { default: (typeof PARAMS)[N]["default"]; description: string } {
  const { default: value, description } = PARAMS[name];
  return { default: value, description };
}

export const defaultShards = defineInt("DEFAULT_SHARDS", declared("DEFAULT_SHARDS"));

export const maxShards = defineInt("MAX_SHARDS", declared("MAX_SHARDS"));

export const shardWritesPerSecond = defineInt("SHARD_WRITES_PER_SECOND", declared("SHARD_WRITES_PER_SECOND"));

export const maxGrownShards = defineInt("MAX_GROWN_SHARDS", declared("MAX_GROWN_SHARDS"));

export const maxDelta = defineInt("MAX_DELTA", declared("MAX_DELTA"));

export const rollupIntervalMs = defineInt("ROLLUP_INTERVAL_MS", declared("ROLLUP_INTERVAL_MS"));

export const requestTtlHours = defineInt("REQUEST_TTL_HOURS", declared("REQUEST_TTL_HOURS"));

export const allowUnauthenticated = defineBoolean("ALLOW_UNAUTHENTICATED", declared("ALLOW_UNAUTHENTICATED"));

export const enforceAppCheck = defineBoolean("ENFORCE_APP_CHECK", declared("ENFORCE_APP_CHECK"));

export const uniqueCounters = defineString("UNIQUE_COUNTERS", declared("UNIQUE_COUNTERS"));

export const windowedCounters = defineString("WINDOWED_COUNTERS", declared("WINDOWED_COUNTERS"));

export const mirrors = defineString("MIRRORS", declared("MIRRORS"));

export const counterKinds = defineString("COUNTER_KINDS", declared("COUNTER_KINDS"));

export const extensionCounters = defineString("EXTENSION_COUNTERS", declared("EXTENSION_COUNTERS"));

/**
 * Whether foldExtensionShards is deployed: EXTENSION_COUNTERS is not empty when the module loads. A
 * function's existence cannot wait for it to run, so this is read at load, from the environment or, while
 * firebase-tools reads the manifest, from the codebase's .env files (at-load.ts): so the main entry
 * exports exactly the contract's functions unless the param names extension counters.
 */
export function extensionCountersAtLoad(): boolean {
  return (paramAtLoad("EXTENSION_COUNTERS") ?? "").trim() !== "";
}

export const autoCreate = defineString("AUTO_CREATE", declared("AUTO_CREATE"));

export const documentCounters = defineString("DOCUMENT_COUNTERS", declared("DOCUMENT_COUNTERS"));

/**
 * DOCUMENT_COUNTERS as the module loads, read as EXTENSION_COUNTERS is (above): which document triggers the
 * main entry exports (entry/documentCounters.ts). undefined when the param has no value.
 */
export function documentCountersAtLoad(): string | undefined {
  return paramAtLoad("DOCUMENT_COUNTERS");
}

export const createPolicy = defineString("CREATE_POLICY", declared("CREATE_POLICY"));

export const rateLimitPerMinute = defineInt("RATE_LIMIT_PER_MINUTE", declared("RATE_LIMIT_PER_MINUTE"));

export const rateLimitBurst = defineInt("RATE_LIMIT_BURST", declared("RATE_LIMIT_BURST"));

export const consumeAppCheckToken = defineBoolean("CONSUME_APP_CHECK_TOKEN", declared("CONSUME_APP_CHECK_TOKEN"));

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

export const maxInstances = defineInt("MAX_INSTANCES", declared("MAX_INSTANCES"));

// Deploy-time placement and sizing. They are read by the platform from the deploy manifest, never by
// our code at run time (except DATABASE_ID), and `npm run preflight` checks them before a deploy.

export const region = defineString("REGION", declared("REGION"));

export const databaseId = defineString("DATABASE_ID", declared("DATABASE_ID"));

export const rollupTimeoutSeconds = defineInt("ROLLUP_TIMEOUT_SECONDS", declared("ROLLUP_TIMEOUT_SECONDS"));

export const rollupMemoryMb = defineInt("ROLLUP_MEMORY_MB", declared("ROLLUP_MEMORY_MB"));

export const rollupConcurrency = defineInt("ROLLUP_CONCURRENCY", declared("ROLLUP_CONCURRENCY"));

export const rollupMinInstances = defineInt("ROLLUP_MIN_INSTANCES", declared("ROLLUP_MIN_INSTANCES"));

/** CPUs of a rollupTotal instance. Not a param: firebase-functions takes only a literal here, and
 * concurrency above 1 needs at least one full CPU. */
export const ROLLUP_CPU = 1;
