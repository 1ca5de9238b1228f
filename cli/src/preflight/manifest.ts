// The built functions: loading them for the functions SDK's manifest (discovery), and the manifest
// itself: the contract's callables, the rollup trigger, its sweep and the cleanup trigger, each of the
// kind, event, document and retry the rollup and the cleanup rely on; foldExtensionShards exactly while
// EXTENSION_COUNTERS names extension counters, rollupBoard exactly while LEADERBOARDS names leaderboards, and
// the document triggers exactly as DOCUMENT_COUNTERS names them.
import { BOARD_ENTRY_PATTERN, CLEANUP_DOCUMENT_PATTERN, SHARD_DOCUMENT_PATTERN } from "../../../functions/src/model/paths";
import { FOLD_TRIGGER_PATTERN } from "../../../functions/src/model/extension-rules";
import { parseDocumentCounterRules } from "../../../functions/src/model/document-rules";
import { documentTriggers, type DocumentTrigger } from "../../../functions/src/model/document-triggers";
import { discoverBuild, endpointsOf } from "../lib/codebases";
import { errorMessage, type Backend, type Build } from "../lib/firebase-tools-internals";
import { envFiles, userEnvs } from "./context";
import type { CheckResult, Context } from "./types";

/** The contract's functions: the six callables (docs/api.md), the rollup trigger and its sweep (docs/rollup.md). */
export const CALLABLES = ["createCounter", "incrementCounter", "setMember", "resetCounter", "reshardCounter", "deleteCounter"];
export const TRIGGER = "rollupTotal";
export const SWEEP = "rollupSweep";
/** The scheduled commit of windows that moved at midnight (functions/src/rollup/midnight.ts). */
export const WINDOWS = "rollupWindows";
/** Finishes deleting a counter whose cleanup outlasted deleteCounter's budget (functions/src/entry/cleanupDeletedCounter.ts). */
const CLEANUP_TRIGGER = "cleanupDeletedCounter";
/** Folds old clients' writes of the firestore-counter extension; deployed only while EXTENSION_COUNTERS is set (functions/src/index.ts). */
export const FOLD_TRIGGER = "foldExtensionShards";
/** Keeps the leaderboards' summaries; deployed only while LEADERBOARDS is set (functions/src/index.ts). */
export const BOARD_TRIGGER = "rollupBoard";
/** Every function the package deploys (functions/src/index.ts): no other codebase of an app may use these names. */
export const DEPLOYED_FUNCTIONS = [...CALLABLES, TRIGGER, SWEEP, WINDOWS, CLEANUP_TRIGGER];
const WRITTEN_EVENT = "google.cloud.firestore.document.v1.written";
const UPDATED_EVENT = "google.cloud.firestore.document.v1.updated";

export async function discover(ctx: Context): Promise<{ result: CheckResult; build?: Build }> {
  const check = "discovery";
  try {
    const build = await discoverBuild(ctx.project, ctx.codebase);
    const names = Object.keys(build.endpoints).sort();
    return {
      result: { check, status: "ok", message: `the functions SDK's manifest lists ${names.length} endpoints and ${build.params.length} params` },
      build,
    };
  } catch (error) {
    return { result: { check, status: "fail", message: `loading the functions to read their manifest failed (${causeOf(ctx)}): ${withoutStack(errorMessage(error))}` } };
  }
}

/**
 * Why the functions did not load, as far as the preflight can tell: a DOCUMENT_COUNTERS that does not parse
 * (the main entry builds its document triggers from it as it loads, and refuses a value it cannot read: the
 * "document counters" check names the rule), else most likely no build.
 */
function causeOf(ctx: Context): string {
  const envs = userEnvs(ctx, "discovery");
  if ("values" in envs) {
    try {
      parseDocumentCounterRules("DOCUMENT_COUNTERS", envs.values.DOCUMENT_COUNTERS ?? "");
    } catch {
      return `DOCUMENT_COUNTERS does not parse, and the functions refuse to load with it: the "document counters" check below names the rule; fix it in ${envFiles(ctx).base} or ${envFiles(ctx).project}`;
    }
  }
  return "build them first: npm run build";
}

/** The message without the child's stack frames, on one line. */
function withoutStack(message: string): string {
  return message
    .split("\n")
    .filter((line) => !/^\s+at /.test(line))
    .join(" ")
    .trim();
}

export function checkManifest(ctx: Context, backend: Backend): CheckResult {
  const check = "manifest";
  const endpoints = endpointsOf(backend);
  const problems: string[] = [];
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  const expected = [...DEPLOYED_FUNCTIONS];
  for (const name of expected) if (!byId.has(name)) problems.push(`${name} is not exported by codebase ${envFiles(ctx).source}/ (its package.json's main)`);
  const envs = userEnvs(ctx, check);
  const folding = "values" in envs && (envs.values.EXTENSION_COUNTERS ?? "").trim() !== "";
  if (folding) {
    expected.push(FOLD_TRIGGER);
    if (!byId.has(FOLD_TRIGGER)) problems.push(`EXTENSION_COUNTERS is set but ${FOLD_TRIGGER} is not exported by codebase ${envFiles(ctx).source}/ (its package.json's main): old clients' writes would not be folded`);
  }
  const boards = "values" in envs && (envs.values.LEADERBOARDS ?? "").trim() !== "";
  if (boards) {
    expected.push(BOARD_TRIGGER);
    if (!byId.has(BOARD_TRIGGER)) problems.push(`LEADERBOARDS is set but ${BOARD_TRIGGER} is not exported by codebase ${envFiles(ctx).source}/ (its package.json's main): no leaderboard's summary would move`);
  }
  const documents = "values" in envs ? documentTriggersOf(envs.values.DOCUMENT_COUNTERS) : [];
  for (const trigger of documents) {
    expected.push(trigger.id);
    const event = byId.get(trigger.id)?.eventTrigger;
    if (!byId.has(trigger.id)) problems.push(`DOCUMENT_COUNTERS names ${trigger.path} but ${trigger.id} is not exported by codebase ${envFiles(ctx).source}/ (it re-exports documentCounters: docs/documents.md)`);
    else if (event?.eventType !== WRITTEN_EVENT || (event.eventFilterPathPatterns?.document ?? event.eventFilters?.document) !== trigger.path) {
      problems.push(`${trigger.id} must listen to ${WRITTEN_EVENT} on "${trigger.path}": those documents would not be counted`);
    } else if (event.retry !== true) problems.push(`${trigger.id} has retries off: a change of a document whose invocation fails would never be counted`);
  }
  for (const e of endpoints) {
    const empty = e.id === FOLD_TRIGGER ? " (EXTENSION_COUNTERS is empty)" : e.id === BOARD_TRIGGER ? " (LEADERBOARDS is empty)" : "";
    if (!expected.includes(e.id)) problems.push(`unexpected endpoint ${e.id}${empty}`);
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
  const windows = byId.get(WINDOWS);
  if (windows !== undefined && windows.scheduleTrigger === undefined) {
    problems.push(`${WINDOWS} is not a scheduled (onSchedule) function: windowed counters' windows would not move at midnight`);
  }
  const cleanup = byId.get(CLEANUP_TRIGGER)?.eventTrigger;
  if (byId.has(CLEANUP_TRIGGER)) {
    const document = cleanup?.eventFilterPathPatterns?.document ?? cleanup?.eventFilters?.document;
    if (cleanup?.eventType !== UPDATED_EVENT || document !== CLEANUP_DOCUMENT_PATTERN) {
      problems.push(`${CLEANUP_TRIGGER} must listen to ${UPDATED_EVENT} on "${CLEANUP_DOCUMENT_PATTERN}": deletions too large for deleteCounter's budget would never finish`);
    } else if (cleanup.retry !== true) {
      problems.push(`${CLEANUP_TRIGGER} has retries off: a failed cleanup round would be dropped and the deletion left unfinished until the sweep`);
    }
  }
  const fold = byId.get(FOLD_TRIGGER)?.eventTrigger;
  if (folding && byId.has(FOLD_TRIGGER)) {
    const document = fold?.eventFilterPathPatterns?.document ?? fold?.eventFilters?.document;
    if (fold?.eventType !== WRITTEN_EVENT || document !== FOLD_TRIGGER_PATTERN) {
      problems.push(`${FOLD_TRIGGER} must listen to ${WRITTEN_EVENT} on "${FOLD_TRIGGER_PATTERN}": old clients' writes would not be folded`);
    } else if (fold.retry !== true) {
      problems.push(`${FOLD_TRIGGER} has retries off: a fold that fails would leave its amount in the shard until migrate-extension runs again`);
    }
  }
  const board = byId.get(BOARD_TRIGGER)?.eventTrigger;
  if (boards && byId.has(BOARD_TRIGGER)) {
    const document = board?.eventFilterPathPatterns?.document ?? board?.eventFilters?.document;
    if (board?.eventType !== WRITTEN_EVENT || document !== BOARD_ENTRY_PATTERN) {
      problems.push(`${BOARD_TRIGGER} must listen to ${WRITTEN_EVENT} on "${BOARD_ENTRY_PATTERN}": no leaderboard's summary would move`);
    } else if (board.retry !== true) {
      problems.push(`${BOARD_TRIGGER} has retries off: a failed rollup of a board would leave its ranks stale until the sweep`);
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
      `${SWEEP} ${sweep!.scheduleTrigger!.schedule}; ${WINDOWS} ${windows!.scheduleTrigger!.schedule} (${windows!.scheduleTrigger!.timeZone ?? "UTC"}); ` +
      `${CLEANUP_TRIGGER} on ${UPDATED_EVENT} ${CLEANUP_DOCUMENT_PATTERN}, retry on` +
      (folding ? `; ${FOLD_TRIGGER} on ${WRITTEN_EVENT} ${FOLD_TRIGGER_PATTERN}, retry on` : "") +
      (boards ? `; ${BOARD_TRIGGER} on ${WRITTEN_EVENT} ${BOARD_ENTRY_PATTERN}, retry on` : "") +
      documents.map((t) => `; ${t.id} on ${WRITTEN_EVENT} ${t.path}, retry on`).join(""),
  };
}

/** The document triggers a DOCUMENT_COUNTERS value deploys; none when it does not parse (the document counters check names why). */
function documentTriggersOf(value: string | undefined): DocumentTrigger[] {
  try {
    return documentTriggers(parseDocumentCounterRules("DOCUMENT_COUNTERS", value ?? ""));
  } catch {
    return [];
  }
}
