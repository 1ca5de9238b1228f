// Reads the params (params.ts) at request time and checks them against their ranges (rules.ts),
// so a missing or absurd value fails loudly with its name instead of silently becoming 0 (firebase-
// functions' fallback). Each function reads only the params it uses: a bad callable setting must not
// stop the rollup, and a bad rollup setting must not stop the callables.
import * as logger from "firebase-functions/logger";
import { autoCreateTarget, parseAutoCreateRules, type AutoCreateTarget } from "../model/auto-create-rules";
import { callersKindFor, kindFor, parseCounterKindRules, type CounterKind, type KindLimits } from "../model/kinds";
import { newCounterRule, type NewCounterRule } from "../model/new-counter";
import { parseExtensionRules, sourcesOfCounter, type ExtensionRule, type ExtensionSource } from "../model/extension-rules";
import { parseDocumentCounterRules, ruleNaming, type DocumentRule } from "../model/document-rules";
import { mirrorTargets, parseMirrorRules, type MirrorTarget } from "../model/mirror-rules";
import { parseCounterIdPatterns, type Template } from "../model/patterns";
import type { RateLimit } from "../model/ratelimit";
import { operationLimits, type ClientSettings, type OperationLimits } from "../model/settings";
import { HOT_FOR_MS, type GrowthSettings } from "../rollup/growth";
import { staleAfterMsFor } from "../rollup/plan";
import {
  allowUnauthenticated,
  autoCreate,
  counterKinds,
  createPolicy as createPolicyParam,
  defaultShards,
  documentCounters,
  enforceAppCheck,
  extensionCounters,
  maxDelta,
  maxGrownShards,
  maxShards,
  mirrors,
  rateLimitBurst,
  rateLimitPerMinute,
  requestTtlHours,
  rollupIntervalMs,
  shardWritesPerSecond,
  uniqueCounters,
  windowedCounters,
} from "./params";
import { paramProblem, relationProblems, type CreatePolicy, type RawValue } from "../model/param-rules";

export interface Config extends OperationLimits {
  allowUnauthenticated: boolean;
  enforceAppCheck: boolean;
  rateLimit: RateLimit;
}

/** The callables' settings; throws, naming the param, if one is out of range or they contradict each other. */
export function config(): Config {
  const values = {
    DEFAULT_SHARDS: defaultShards.value(),
    MAX_SHARDS: maxShards.value(),
    MAX_GROWN_SHARDS: maxGrownShards.value(),
    MAX_DELTA: maxDelta.value(),
    REQUEST_TTL_HOURS: requestTtlHours.value(),
    RATE_LIMIT_PER_MINUTE: rateLimitPerMinute.value(),
    RATE_LIMIT_BURST: rateLimitBurst.value(),
  };
  const problems = [...Object.entries(values).map(([name, value]) => paramProblem(name, value)), ...relationProblems(values)];
  const problem = problems.find((p) => p !== undefined);
  if (problem !== undefined) throw new Error(`${problem}; set it in functions/.env`);
  return {
    ...operationLimits(values),
    allowUnauthenticated: allowUnauthenticated.value(),
    enforceAppCheck: enforceAppCheck.value(),
    rateLimit: { perMinute: values.RATE_LIMIT_PER_MINUTE, burst: values.RATE_LIMIT_BURST },
  };
}

interface RollupConfig {
  intervalMs: number;
  staleAfterMs: number;
  growth: GrowthSettings;
}

/**
 * What the rollup runs with when one of its params is invalid (params.ts defaults), and how the value is
 * shown in the error that says so.
 */
const ROLLUP_FALLBACKS = {
  ROLLUP_INTERVAL_MS: { value: 1000, shown: "1000 ms" },
  SHARD_WRITES_PER_SECOND: { value: 1, shown: "1" },
  MAX_GROWN_SHARDS: { value: 1000, shown: "1000" },
};

/** The invalid value last reported per param, so that an instance logs each bad value once. */
const reportedBadRollupParam = new Map<string, RawValue>();

/**
 * One of the rollup's params, checked: an invalid value does not stop the rollup, because no value of
 * these can make a total wrong (the interval trades parent writes for lag, growth trades shards for
 * contention). The rollup keeps running with the default and logs an error (once per instance and value)
 * naming the param. `npm run preflight` refuses such a value before a deploy.
 */
function rollupParam(name: keyof typeof ROLLUP_FALLBACKS, value: number): number {
  const problem = paramProblem(name, value);
  if (problem === undefined) return value;
  const fallback = ROLLUP_FALLBACKS[name];
  if (reportedBadRollupParam.get(name) !== value) {
    reportedBadRollupParam.set(name, value);
    logger.error(`${problem}; the rollup runs with ${fallback.shown} until it is fixed in functions/.env`, { param: name, value: String(value) });
  }
  return fallback.value;
}

/** The rollup's settings: ROLLUP_INTERVAL_MS, SHARD_WRITES_PER_SECOND and MAX_GROWN_SHARDS, each checked (rollupParam). */
export function rollupConfig(): RollupConfig {
  const intervalMs = rollupParam("ROLLUP_INTERVAL_MS", rollupIntervalMs.value());
  const growth: GrowthSettings = {
    shardWritesPerSecond: rollupParam("SHARD_WRITES_PER_SECOND", shardWritesPerSecond.value()),
    maxShards: rollupParam("MAX_GROWN_SHARDS", maxGrownShards.value()),
    hotForMs: HOT_FOR_MS,
  };
  return { intervalMs, staleAfterMs: staleAfterMsFor(intervalMs), growth };
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

/** The WINDOWED_COUNTERS patterns, read as UNIQUE_COUNTERS are (above): only createCounter reads them. */
export function windowedCounterPatterns(): Template[] {
  return parseCounterIdPatterns("WINDOWED_COUNTERS", windowedCounters.value());
}

/**
 * The COUNTER_KINDS rule that `counterId` matches first, if any (parsed once per value and limits; a kind
 * must stay within MAX_SHARDS and MAX_DELTA). A bad rule throws, naming it, for the ids it could match
 * only, so createCounter and incrementCounter, the two operations it bounds, fail loudly for those
 * (logged, `internal`) instead of running as if it were absent: a typo must not hand the shard count and
 * the delta back to clients. Every other counter goes on (kinds.ts, kindFor). The rollup and the admin
 * callables never read it; setMember reads only a rule's callers (counterCallersKindFor, below).
 */
export function counterKindFor(counterId: string, limits: KindLimits): CounterKind | undefined {
  return kindFor(parseCounterKindRules("COUNTER_KINDS", counterKinds.value(), limits), counterId);
}

/**
 * Where the callables that write a total (create, reset, delete) mirror `counterId`'s total (MIRRORS,
 * parsed once per value). A bad value throws, naming the rule, so the call fails loudly (logged,
 * `internal`) instead of writing a total whose mirror silently stays behind.
 */
export function mirrorTargetsFor(counterId: string): MirrorTarget[] {
  return mirrorTargets(parseMirrorRules("MIRRORS", mirrors.value()), counterId);
}

let reportedBadMirrors: string | undefined = undefined;

/**
 * The rollup's view of MIRRORS. A bad value must not freeze every total (a retry could only fail again),
 * so the rollup commits totals without mirrors and logs an ERROR naming the rule, once per instance and
 * value; `npm run preflight` refuses such a value before a deploy.
 */
export function rollupMirrorTargets(counterId: string): MirrorTarget[] {
  const value = mirrors.value();
  try {
    return mirrorTargets(parseMirrorRules("MIRRORS", value), counterId);
  } catch (error) {
    if (reportedBadMirrors !== value) {
      reportedBadMirrors = value;
      logger.error(`${error instanceof Error ? error.message : String(error)}; totals are committed without mirrors until it is fixed in functions/.env`, {
        param: "MIRRORS",
      });
    }
    return [];
  }
}

/**
 * CREATE_POLICY, checked. A bad value throws, naming the param, so createCounter fails loudly (logged,
 * `internal`) instead of falling back to any policy: a typo must neither open creation to everyone nor
 * silently close it. Read only by createCounter.
 */
export function createPolicy(): CreatePolicy {
  const value = createPolicyParam.value();
  const problem = paramProblem("CREATE_POLICY", value);
  if (problem !== undefined) throw new Error(`${problem}; set it in functions/.env`);
  return value as CreatePolicy;
}

let reportedBadExtensionRules: string | undefined = undefined;

/**
 * EXTENSION_COUNTERS as the fold trigger reads it. A bad value folds nothing, and logs an ERROR naming the
 * rule, once per instance and value: the amounts wait in the shard documents, where nothing is lost, until
 * it is fixed and migrate-extension runs again (`npm run preflight` refuses such a value before a deploy).
 */
export function extensionRules(): ExtensionRule[] {
  const value = extensionCounters.value();
  try {
    return parseExtensionRules("EXTENSION_COUNTERS", value);
  } catch (error) {
    if (reportedBadExtensionRules !== value) {
      reportedBadExtensionRules = value;
      logger.error(`${error instanceof Error ? error.message : String(error)}; nothing is folded until it is fixed in functions/.env`, { param: "EXTENSION_COUNTERS" });
    }
    return [];
  }
}

/** How a fold creates a counter that does not exist yet, from the deployed params (functions/src/model/new-counter.ts). */
export function foldNewCounterRule(): NewCounterRule {
  return newCounterRule(paramSettings);
}

/** How a document counter's first counted document creates it, from the deployed params (model/new-counter.ts). */
export function documentNewCounterRule(): NewCounterRule {
  return newCounterRule(paramSettings, "documents");
}

/**
 * The AUTO_CREATE document (and its conditions) for `counterId` (parsed once per value), if a rule matches.
 * Asked only once a call found its counter missing, so a bad value stops nothing else: such calls fail
 * loudly (logged, `internal`), naming the rule, instead of answering not-found as if the param were empty.
 */
export function autoCreateFor(counterId: string): AutoCreateTarget | undefined {
  return autoCreateTarget(parseAutoCreateRules("AUTO_CREATE", autoCreate.value()), counterId);
}

/**
 * The extension sources whose count moves to `counterId` (EXTENSION_COUNTERS, parsed once per value), read
 * by the creations of counters (createCounter, AUTO_CREATE), which take over their fields. A bad value
 * throws, naming the rule, so a creation fails loudly (logged, `internal`) instead of creating a counter
 * that a mirror could later make count the field twice; the fold trigger reads it with extensionRules().
 */
export function extensionSourcesFor(counterId: string): ExtensionSource[] {
  return sourcesOfCounter(parseExtensionRules("EXTENSION_COUNTERS", extensionCounters.value()), counterId);
}

let reportedBadDocumentRules: string | undefined = undefined;

/**
 * DOCUMENT_COUNTERS as the document triggers read it. A bad value counts nothing, and logs an ERROR naming
 * the rule, once per instance and value (the preflight refuses such a value, and the triggers are not even
 * deployed from it: entry/documentCounters.ts); backfill makes the counters whole once it is fixed.
 */
export function documentRules(): DocumentRule[] {
  const value = documentCounters.value();
  try {
    return parseDocumentCounterRules("DOCUMENT_COUNTERS", value);
  } catch (error) {
    if (reportedBadDocumentRules !== value) {
      reportedBadDocumentRules = value;
      logger.error(`${error instanceof Error ? error.message : String(error)}; no document is counted until it is fixed in functions/.env`, { param: "DOCUMENT_COUNTERS" });
    }
    return [];
  }
}

/**
 * The DOCUMENT_COUNTERS rule that names `counterId`, for the operations' refusal (parsed once per value). A
 * bad value throws, naming the rule, so the operations fail loudly (logged, `internal`) instead of letting
 * anyone move counters that only documents may move.
 */
export function documentRuleFor(counterId: string): string | undefined {
  return ruleNaming(parseDocumentCounterRules("DOCUMENT_COUNTERS", documentCounters.value()), counterId)?.source;
}

/** The COUNTER_KINDS rule whose callers decides a callable's call on `counterId` (kinds.ts, callersKindFor). */
export function counterCallersKindFor(counterId: string, limits: KindLimits): CounterKind | undefined {
  return callersKindFor(parseCounterKindRules("COUNTER_KINDS", counterKinds.value(), limits), counterId);
}

/** The counter operations' view of the params, for the callables (model/settings.ts). */
export const paramSettings: ClientSettings = {
  limits: () => {
    const { defaultShards, maxShards, maxGrownShards, maxDelta, requestTtlMs } = config();
    return { defaultShards, maxShards, maxGrownShards, maxDelta, requestTtlMs } satisfies OperationLimits;
  },
  uniquePatterns: uniqueCounterPatterns,
  windowedPatterns: windowedCounterPatterns,
  kindFor: counterKindFor,
  callersKindFor: counterCallersKindFor,
  mirrorsFor: mirrorTargetsFor,
  autoCreateFor,
  extensionSourcesFor,
  documentRuleFor,
};
