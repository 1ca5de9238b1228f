// Reads the params (params.ts) at run time and checks them against their ranges (model/param-rules.ts), so
// a missing or absurd value fails loudly with its name instead of silently becoming 0 (firebase-functions'
// fallback). The callables read them as the one settings type (deployedSettings: model/settings.ts); the
// triggers read theirs here, each falling back to what cannot make a total wrong and logging the bad value.
// Each function reads only the params it uses: a bad callable setting must not stop the rollup, and a bad
// rollup setting must not stop the callables.
import * as logger from "firebase-functions/logger";
import { newCounterRule, type NewCounterRule } from "../model/new-counter";
import { parseExtensionRules, type ExtensionRule } from "../model/extension-rules";
import { parseDocumentCounterRules, type DocumentRule } from "../model/document-rules";
import { boardOf, parseLeaderboardRules, type BoardRule } from "../model/leaderboard-rules";
import { mirrorTargets, parseMirrorRules, type MirrorTarget } from "../model/mirror-rules";
import { paramProblem, type RawValue } from "../model/param-rules";
import { settingsOf, type Settings } from "../model/settings";
import { HOT_FOR_MS, type GrowthSettings } from "../rollup/growth";
import { staleAfterMsFor } from "../rollup/plan";
import { chainBudgetMsFor } from "../rollup/trail";
import { recountQueryFor } from "../documents/recount";
import type { RollupDeps } from "../rollup/types";
import { DECLARED, deployedValue } from "./params";

/**
 * The params as deployed, as the one settings type (model/settings.ts): what a callable reads, once per
 * call (entry/oncall.ts builds one and hands it to the handler). A bad value throws, naming the param, when
 * a call first reads it: the call fails loudly (logged, `internal`).
 */
export function deployedSettings(): Settings {
  return settingsOf(deployedValue, (problem) => new Error(`${problem}; set it in functions/.env`));
}

/**
 * What the rollup runs with when one of its params is invalid (params.ts defaults), and how the value is
 * shown in the error that says so.
 */
const ROLLUP_FALLBACKS = {
  ROLLUP_INTERVAL_MS: { value: 1000, shown: "1000 ms" },
  RECOUNT_LIMIT: { value: 10_000, shown: "10000" },
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

/**
 * The rollup's settings: ROLLUP_INTERVAL_MS, SHARD_WRITES_PER_SECOND and MAX_GROWN_SHARDS, each checked
 * (rollupParam), and how long an owner carries a chain within ROLLUP_TIMEOUT_SECONDS (rollup/trail.ts).
 */
export function rollupConfig(): Pick<RollupDeps, "intervalMs" | "staleAfterMs" | "growth" | "chainBudgetMs" | "recount"> {
  const intervalMs = rollupParam("ROLLUP_INTERVAL_MS", DECLARED.ROLLUP_INTERVAL_MS.value());
  const growth: GrowthSettings = {
    shardWritesPerSecond: rollupParam("SHARD_WRITES_PER_SECOND", DECLARED.SHARD_WRITES_PER_SECOND.value()),
    maxShards: rollupParam("MAX_GROWN_SHARDS", DECLARED.MAX_GROWN_SHARDS.value()),
    hotForMs: HOT_FOR_MS,
  };
  // The function's own timeout (an option of its deploy, so never a bad value at run time; 60 s if it were).
  const timeout = DECLARED.ROLLUP_TIMEOUT_SECONDS.value();
  const timeoutSeconds = Number.isSafeInteger(timeout) && timeout > 0 ? timeout : 60;
  // Document counters kept by recount: the query of the rule that names an id (read only for a recounted
  // parent, so a bad DOCUMENT_COUNTERS leaves every other counter's rollup as it is: documentRules logs it).
  const recount = { query: (counterId: string) => recountQueryFor(documentRules(), counterId), limit: rollupParam("RECOUNT_LIMIT", DECLARED.RECOUNT_LIMIT.value()) };
  return { intervalMs, staleAfterMs: staleAfterMsFor(intervalMs), growth, chainBudgetMs: chainBudgetMsFor(timeoutSeconds, intervalMs), recount };
}

/** The rules params the triggers read (rulesParam). */
type RulesParam = "MIRRORS" | "LEADERBOARDS" | "EXTENSION_COUNTERS" | "DOCUMENT_COUNTERS";

/** The invalid value last reported per rules param, so that an instance logs each bad value once. */
const reportedBadRules = new Map<RulesParam, string>();

/**
 * A rules param as a trigger reads it, through `parse`. A bad value must not stop the trigger (a retry could
 * only fail again): it reads no rules, and logs an ERROR naming the rule and what the trigger does `without`
 * them, once per instance and value. `npm run preflight` refuses such a value before a deploy.
 */
function rulesParam<T>(name: RulesParam, parse: (param: string, value: string) => T[], without: string): T[] {
  const value = DECLARED[name].value();
  try {
    return parse(name, value);
  } catch (error) {
    if (reportedBadRules.get(name) !== value) {
      reportedBadRules.set(name, value);
      logger.error(`${error instanceof Error ? error.message : String(error)}; ${without} until it is fixed in functions/.env`, { param: name });
    }
    return [];
  }
}

/** The rollup's view of MIRRORS: with a bad value, the rollup commits totals without mirrors (rulesParam). */
export function rollupMirrorTargets(counterId: string): MirrorTarget[] {
  return rulesParam("MIRRORS", (param, value) => mirrorTargets(parseMirrorRules(param, value), counterId), "totals are committed without mirrors");
}

/**
 * LEADERBOARDS as the rollup and the board's trigger read it. A bad value must not freeze every total, so the
 * rollup commits totals without their entries (rulesParam); backfill --board makes the boards whole once it
 * is fixed.
 */
export function leaderboardRules(): BoardRule[] {
  return rulesParam("LEADERBOARDS", parseLeaderboardRules, "no counter is put on a leaderboard");
}

/** The leaderboard the rollup's commits of `counterId` carry the entry of (leaderboardRules). */
export function rollupBoardOf(counterId: string): string | undefined {
  return boardOf(leaderboardRules(), counterId);
}

/**
 * EXTENSION_COUNTERS as the fold trigger reads it. A bad value folds nothing (rulesParam): the amounts wait
 * in the shard documents, where nothing is lost, until it is fixed and migrate-extension runs again.
 */
export function extensionRules(): ExtensionRule[] {
  return rulesParam("EXTENSION_COUNTERS", parseExtensionRules, "nothing is folded");
}

/** How a fold creates a counter that does not exist yet, from the deployed params (functions/src/model/new-counter.ts). */
export function foldNewCounterRule(): NewCounterRule {
  return newCounterRule(deployedSettings());
}

/** How a document counter's first counted document creates it, from the deployed params (model/new-counter.ts). */
export function documentNewCounterRule(): NewCounterRule {
  return newCounterRule(deployedSettings(), "documents");
}

/**
 * DOCUMENT_COUNTERS as the document triggers read it. A bad value counts nothing (rulesParam; the triggers
 * are not even deployed from it: entry/documentCounters.ts); backfill makes the counters whole once it is fixed.
 */
export function documentRules(): DocumentRule[] {
  return rulesParam("DOCUMENT_COUNTERS", parseDocumentCounterRules, "no document is counted");
}
