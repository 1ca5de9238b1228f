// Reads the params (src/params.ts) at request time and checks them once, so a missing or absurd value
// fails loudly with its name instead of silently becoming 0 (firebase-functions' fallback).
import {
  allowUnauthenticated,
  defaultShards,
  enforceAppCheck,
  maxDelta,
  maxShards,
  requestTtlHours,
  rollupIntervalMs,
  uniqueCounters,
} from "./params";
import { parseCounterIdPatterns, type Template } from "./counters/patterns";

export interface Config {
  defaultShards: number;
  maxShards: number;
  maxDelta: number;
  rollupIntervalMs: number;
  requestTtlMs: number;
  allowUnauthenticated: boolean;
  enforceAppCheck: boolean;
}

/** One batch holds 500 writes: create/reshard write the parent plus every shard in one batch. */
export const HARD_MAX_SHARDS = 200;

function positiveInt(name: string, value: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new Error(`param ${name} must be an integer from 1 to ${max} (got ${value}); set it in functions/.env`);
  }
  return value;
}

export function config(): Config {
  const max = positiveInt("MAX_SHARDS", maxShards.value(), HARD_MAX_SHARDS);
  return {
    defaultShards: positiveInt("DEFAULT_SHARDS", defaultShards.value(), max),
    maxShards: max,
    maxDelta: positiveInt("MAX_DELTA", maxDelta.value()),
    rollupIntervalMs: positiveInt("ROLLUP_INTERVAL_MS", rollupIntervalMs.value(), 60_000),
    requestTtlMs: positiveInt("REQUEST_TTL_HOURS", requestTtlHours.value(), 24 * 365) * 3_600_000,
    allowUnauthenticated: allowUnauthenticated.value(),
    enforceAppCheck: enforceAppCheck.value(),
  };
}

/**
 * The UNIQUE_COUNTERS patterns (parsed once per value). A bad value throws, naming the pattern, so
 * createCounter fails loudly (logged, `internal`) instead of creating counters as if it were empty. Read
 * only by createCounter, the one operation it decides: the rollup and the other callables never stop
 * over it.
 */
export function uniqueCounterPatterns(): Template[] {
  return parseCounterIdPatterns("UNIQUE_COUNTERS", uniqueCounters.value());
}
