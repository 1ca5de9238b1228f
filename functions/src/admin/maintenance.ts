// The admin entry's maintenance runs, what the firestore-exact-counter command line is made of: reconcile
// (every counter's total against its shards, repaired through the rollup's own commit, and a document
// counter's shards against its documents, repaired by its backfill: reconcile/) and
// migrateExtension (the firestore-counter extension's counts moved exactly: extension/). Their settings are
// the params' values as text, from the options (a codebase's .env, as the command line reads it) or from
// this process's environment; a run that writes compares them with the counters codebase's as deployed
// first (params-check.ts).
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import { envSettings } from "../model/env-settings";
import type { Settings } from "../model/settings";
import { CounterError } from "../model/errors";
import { extensionRule, type ExtensionRule } from "../model/extension-rules";
import { noExtensionAmounts, parseDocumentCounterRules, ruleSharingIds, type DocumentRule } from "../model/document-rules";
import { newCounterRule } from "../model/new-counter";
import { migrate, type MigrationItem, type MigrationScan } from "../extension/migrate";
import type { CounterReport } from "../reconcile/counter";
import { countCounters as countAll, reconcile as reconcileAll, type ReconcileOptions } from "../reconcile/run";
import { appOf, checkedOptions, type AdminOptions } from "./options";
import { checkDeployedParams } from "./params-check";
import { toolRollupDeps } from "./rollup-deps";

/**
 * The maintenance runs' options: an app, and the params' values as text (NAME -> value, as a codebase's .env
 * holds them; default this process's environment): MIRRORS, DATABASE_ID and the new counters' shape params.
 */
export interface ToolOptions extends AdminOptions {
  env?: Record<string, string | undefined>;
}

/**
 * Checks every counter (or `counterIds`) and, with `fix`, repairs it (DOCUMENT_COUNTERS from the env: its
 * counters against their documents too); yields one report per counter in id
 * order (docs/operations.md, "Reconcile"). A fix writes the total to the counter's MIRRORS targets and its
 * leaderboard's entry (LEADERBOARDS) too.
 */
export async function* reconcile(options: ToolOptions & Omit<ReconcileOptions, "mirrors" | "boards"> = {}): AsyncGenerator<CounterReport> {
  const { db, settings, rest, check } = tool(options, ["fix", "counterIds", "pageSize", "concurrency", "startAfter", "stuckAfterMs", "nowMs"]);
  const documentRules = documentRulesOf(options.env ?? process.env);
  const newCounter = (counterId: string) => newCounterRule(settings, "documents")(counterId);
  if (rest.fix === true) await check();
  const boards = (counterId: string) => settings.boardFor(counterId);
  yield* reconcileAll(db, { ...(rest as ReconcileOptions), mirrors: (counterId) => settings.mirrorsFor(counterId), boards, documentRules, newCounter, rollup: toolRollupDeps(db, settings, documentRules) });
}

/** How many counters reconcile() will visit with these options: one count() aggregation. */
export async function countCounters(options: ToolOptions & Pick<ReconcileOptions, "counterIds" | "startAfter"> = {}): Promise<number> {
  const { db, rest } = tool(options, ["counterIds", "startAfter"]);
  return await countAll(db, rest);
}

/**
 * Moves the firestore-counter extension's counts of the documents `rule.document` names (their `rule.field`,
 * and what their `_counter_shards_` hold) into the counters `rule.counter` names, exactly (docs/from-the-extension.md);
 * yields one item per document with a count. `dryRun` writes nothing; `scan` is filled with what was listed.
 * Counters that DOCUMENT_COUNTERS (of the env) can name: failed-precondition naming its rule, nothing read.
 */
export async function* migrateExtension(
  rule: { document: string; field: string; counter: string },
  options: ToolOptions & { dryRun?: boolean; concurrency?: number; scan?: MigrationScan } = {},
): AsyncGenerator<MigrationItem> {
  const { db, settings, rest, check } = tool(options, ["dryRun", "concurrency", "scan"]);
  let parsed: ExtensionRule;
  try {
    parsed = extensionRule(rule.document, rule.field, rule.counter);
  } catch (error) {
    throw new CounterError("invalid-argument", `the rule ${error instanceof Error ? error.message : String(error)}`);
  }
  const documentRules = documentRulesOf(options.env ?? process.env);
  const counted = ruleSharingIds(documentRules, parsed.counter);
  if (counted !== undefined) throw new CounterError("failed-precondition", `migrate-extension: the counters ${parsed.counter.source} cannot take the extension's amounts: ${noExtensionAmounts(counted)}`);
  const { dryRun, concurrency, scan } = rest as { dryRun?: boolean; concurrency?: number; scan?: MigrationScan };
  const newCounter = newCounterRule(settings);
  if (dryRun !== true) await check();
  yield* migrate(db, parsed, { dryRun: dryRun === true, newCounter, documentRules, ...(concurrency === undefined ? {} : { concurrency }) }, scan);
}

/** DOCUMENT_COUNTERS of an environment, parsed; invalid-argument naming the rule when it does not parse. */
export function documentRulesOf(env: Record<string, string | undefined>): DocumentRule[] {
  try {
    return parseDocumentCounterRules("DOCUMENT_COUNTERS", env.DOCUMENT_COUNTERS ?? "");
  } catch (error) {
    throw new CounterError("invalid-argument", error instanceof Error ? error.message : String(error));
  }
}

/**
 * A maintenance run's database and settings, its own options once `app` and `env` are taken out, and the
 * comparison of its params with the deployed ones (a run that writes makes it first).
 */
export function tool(options: unknown, keys: readonly string[]): { db: Firestore; settings: Settings; rest: Record<string, unknown>; check: () => Promise<void> } {
  const { app, env, ...rest } = checkedOptions(options, ["env", ...keys]);
  if (env !== undefined && (typeof env !== "object" || env === null)) throw new CounterError("invalid-argument", "options.env must be an object of param values");
  const values = (env ?? process.env) as NodeJS.ProcessEnv;
  const settings = envSettings(values);
  const on = appOf(app);
  const databaseId = settings.databaseId();
  const here = env === undefined ? "this process's environment" : "the params given (options.env)";
  return { db: getFirestore(on, databaseId), settings, rest, check: () => checkDeployedParams(on, databaseId, settings, here) };
}
