// The params an app's own code must share with the counters codebase (model/params.ts, COUNTER_PARAM_NAMES:
// what decides a counter's shape and what one call may do, the database, the extension's fields), as the
// counters codebase publishes them and as the admin entry compares its own copy with them before its first
// write (docs/admin.md, "Where the admin entry's rules come from"). The published document lives under the
// `counters` collection, below an id that no counter can have (`~` is not a counter-id character), whose
// parent document never exists: no listing of counters (reconcile, its count(), the sweeps' queries)
// returns it, and clients may not read it (firestore.rules closes every subcollection of `counters`). Pure:
// the functions (entry/publish-params.ts) and the admin entry (admin/params-check.ts) share it.
import { COUNTER_PARAM_DEFAULTS, COUNTER_PARAM_NAMES, type CounterParamName } from "./params";

/** counters/{PARAMS_PARENT_ID}/{PARAMS_COLLECTION}/{PARAMS_DOCUMENT_ID} (model/paths.ts, deployedParamsRef). */
export const PARAMS_PARENT_ID = "~exactCounter";
export const PARAMS_COLLECTION = "exactCounterParams";
export const PARAMS_DOCUMENT_ID = "deployed";

/** Every compared param's value as text. */
export type ParamValues = Record<CounterParamName, string>;

/** The compared params' values: what `read` gives for each (a number as its digits), else the param's default. */
export function paramValues(read: (name: CounterParamName) => string | number | boolean | undefined): ParamValues {
  const values = {} as ParamValues;
  for (const name of COUNTER_PARAM_NAMES) {
    const value = read(name);
    values[name] = value === undefined ? String(COUNTER_PARAM_DEFAULTS[name]) : String(value);
  }
  return values;
}

/** How both sides compare a value: trimmed, and an integer param by its number (`0200` is `200`). */
function normal(name: CounterParamName, text: string): string {
  const trimmed = text.trim();
  if (typeof COUNTER_PARAM_DEFAULTS[name] !== "number") return trimmed;
  return /^-?\d+$/.test(trimmed) ? String(Number(trimmed)) : trimmed;
}

/** One param whose value here differs from the deployed one. */
export interface ParamDifference {
  name: CounterParamName;
  here: string;
  deployed: string;
}

/**
 * The params whose value in `here` differs from the published `deployed` ones, in COUNTER_PARAM_NAMES'
 * order. A param the publisher did not publish (an older version of the package) is not compared.
 */
export function paramDifferences(here: ParamValues, deployed: Record<string, unknown>): ParamDifference[] {
  const differences: ParamDifference[] = [];
  for (const name of COUNTER_PARAM_NAMES) {
    const published = deployed[name];
    if (typeof published !== "string") continue;
    if (normal(name, here[name]) !== normal(name, published)) differences.push({ name, here: here[name].trim(), deployed: published.trim() });
  }
  return differences;
}

/** Where each side's values come from, for the message. */
export interface ParamSources {
  /** This process's copy: "this process's environment", or the env option a call passed. */
  here: string;
  /** The published document: its path, database, who published it and when. */
  deployed: string;
}

/** The refusal's message: each differing param with both values and where each comes from, and the fix. */
export function staleParamsMessage(differences: readonly ParamDifference[], sources: ParamSources): string {
  const each = differences.map((d) => `${d.name} is ${JSON.stringify(d.here)} in ${sources.here} but ${JSON.stringify(d.deployed)} in the counters codebase as deployed`);
  return (
    `${each.join("; ")} (${sources.deployed}): this copy of the params is stale, and nothing was written. ` +
    `Give this process the counters codebase's values (its .env files), as docs/admin.md says ("Where the admin entry's rules come from")`
  );
}
