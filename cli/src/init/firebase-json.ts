// firebase.json as init changes it: the counters' codebase added to `functions` (a single object becomes
// a list, the app's entry kept as it was), a `firestore` section when there is none (rules and indexes
// files for the merge), the rules check as that section's predeploy step (so every deploy that includes
// Firestore rules checks the counters' guarantees first), and nothing else. Also what it refuses (a codebase name or folder another entry
// already uses, several databases) and what it warns of (an Emulator UI that would be downloaded).
import { CliError, EXIT, UsageError } from "../lib/cli";
import { CODEBASE, codebaseEntries, codebaseName, type CodebaseEntry } from "../lib/project";

/** The files a firestore section names when init has to add it. */
export const DEFAULT_RULES = "firestore.rules";
export const DEFAULT_INDEXES = "firestore.indexes.json";

/** A codebase name firebase-tools accepts (functions/projectConfig.js): lowercase letters, digits, _ and -. */
export const CODEBASE_NAME = /^[a-z0-9_-]{1,63}$/;

/** Our entry: the codebase, its folder, and the preflight before every deploy of it, run from the codebase folder. */
export function countersEntry(name: string): CodebaseEntry {
  return {
    source: name,
    codebase: name,
    ignore: ["node_modules", ".git", "*.log", "*.local"],
    predeploy: [`npm --prefix "$RESOURCE_DIR" run preflight -- --dir "$PROJECT_DIR" --project "$GCLOUD_PROJECT"`],
  };
}

/**
 * The firestore section's predeploy step: the rules compile and keep the counters' guarantees (preflight
 * --rules, from the codebase folder), whenever a deploy includes Firestore rules, ours or the app's.
 */
export function rulesPredeploy(name: string): string {
  return `npm --prefix "$PROJECT_DIR/${name}" run preflight -- --rules --dir "$PROJECT_DIR" --project "$GCLOUD_PROJECT"`;
}

/** A refusal: one line naming the cause, exit 2, nothing written. */
export function refuse(message: string): never {
  throw new CliError(message, EXIT.usage);
}

export interface FirestoreFiles {
  rules: string;
  indexes: string;
  /** Whether firebase.json had to be given (part of) a firestore section. */
  added: boolean;
  /** Whether the rules check was added to the section's predeploy steps. */
  addedPredeploy: boolean;
}

export interface FirebaseJsonChange {
  json: Record<string, unknown>;
  /** Whether our codebase entry is new (false: it was there already, kept as it is). */
  addedCodebase: boolean;
  firestore: FirestoreFiles;
  /** The app's codebases besides ours. */
  others: CodebaseEntry[];
}

/** firebase.json with the counters' codebase and a firestore section; refuses what it cannot merge. */
export function mergeFirebaseJson(original: Record<string, unknown>, name: string): FirebaseJsonChange {
  const json = structuredClone(original);
  const entries = codebaseEntries(json);
  const ours = entries.find((entry) => codebaseName(entry) === name);
  const sameFolder = entries.find((entry) => entry.source !== undefined && samePath(entry.source, name) && entry !== ours);
  if (ours !== undefined && (ours.source === undefined || !samePath(ours.source, name))) {
    refuse(`firebase.json already has a functions codebase "${name}" with source ${JSON.stringify(ours.source ?? "(none)")}: give the counters another name with --codebase`);
  }
  if (sameFolder !== undefined) {
    refuse(`firebase.json's codebase "${codebaseName(sameFolder)}" already uses the folder ${name}/: give the counters another with --codebase`);
  }
  if (ours === undefined) {
    // A single object becomes a list with it first, unchanged (its codebase stays what it was: "default" when unnamed).
    json.functions = [...entries, countersEntry(name)];
  }
  return { json, addedCodebase: ours === undefined, firestore: firestoreFiles(json, name), others: entries.filter((entry) => entry !== ours) };
}

function samePath(a: string, b: string): boolean {
  const clean = (path: string) => path.replace(/^\.\//, "").replace(/\/+$/, "");
  return clean(a) === clean(b);
}

/**
 * The rules and indexes files of firebase.json's firestore section, adding the section (or a missing file)
 * when needed, and the rules check to its predeploy steps (after the app's own) when it is not there yet.
 */
function firestoreFiles(json: Record<string, unknown>, name: string): FirestoreFiles {
  let section = json.firestore;
  if (Array.isArray(section)) {
    if (section.length !== 1) {
      refuse(`firebase.json lists ${section.length} Firestore databases: init merges the counters' rules and indexes into one; add them by hand to the database DATABASE_ID names (docs/existing-app.md)`);
    }
    section = section[0] as unknown;
  }
  if (section !== undefined && (typeof section !== "object" || section === null)) refuse(`firebase.json's firestore section is not an object`);
  const target = (section ?? {}) as Record<string, unknown>;
  if (section === undefined) json.firestore = target;
  let added = section === undefined;
  for (const [key, file] of [["rules", DEFAULT_RULES], ["indexes", DEFAULT_INDEXES]] as const) {
    if (target[key] === undefined) {
      target[key] = file;
      added = true;
    } else if (typeof target[key] !== "string") {
      refuse(`firebase.json's firestore.${key} is not a file name`);
    }
  }
  const steps = target.predeploy === undefined ? [] : typeof target.predeploy === "string" ? [target.predeploy] : target.predeploy;
  if (!Array.isArray(steps) || !steps.every((step) => typeof step === "string")) refuse(`firebase.json's firestore.predeploy is not a command or a list of commands`);
  const addedPredeploy = !steps.includes(rulesPredeploy(name));
  if (addedPredeploy) target.predeploy = [...steps, rulesPredeploy(name)];
  return { rules: target.rules as string, indexes: target.indexes as string, added, addedPredeploy };
}

/** The text of firebase.json: 2-space JSON, or the original bytes when nothing changed. */
export function firebaseJsonText(original: string, change: FirebaseJsonChange): string {
  return JSON.stringify(JSON.parse(original)) === JSON.stringify(change.json) ? original : `${JSON.stringify(change.json, null, 2)}\n`;
}

/**
 * Whether `firebase emulators:start` in this project would start the Emulator UI, which firebase-tools
 * downloads at first use (offline machines cannot): on unless emulators.ui.enabled is false.
 */
export function wouldDownloadEmulatorUi(json: Record<string, unknown>): boolean {
  const emulators = json.emulators as { ui?: { enabled?: unknown } } | undefined;
  return emulators?.ui?.enabled !== false;
}

/** The counters' default codebase name, and a check of another one (--codebase). */
export function checkCodebaseName(name: string | undefined): string {
  const chosen = name ?? CODEBASE;
  if (!CODEBASE_NAME.test(chosen)) throw new UsageError(`--codebase takes a codebase name of lowercase letters, digits, _ and - (at most 63), not ${JSON.stringify(chosen)}`);
  if (chosen === "default") throw new UsageError(`--codebase default: the counters never go into codebase "default" (a deploy would offer to delete your functions; docs/existing-app.md)`);
  return chosen;
}
