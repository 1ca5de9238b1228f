// The Firebase project folder a command works on, read without firebase-tools: where firebase.json is
// (the folder given, else the current one or the nearest above it holding one), its default project
// (.firebaserc), its functions codebases as firebase.json lists them, and the params of the counters'
// codebase as a deploy reads them (<source>/.env, then .env.<projectId>).
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "./cli";
import { functionsParams } from "./functions-env";

/** The counters' codebase name in firebase.json (never "default": docs/existing-app.md). */
export const CODEBASE = "counters";

/** One entry of firebase.json's `functions` (an object or a list of them). */
export interface CodebaseEntry {
  source?: string;
  codebase?: string;
  [key: string]: unknown;
}

/** What is wrong with the project's files (not with the arguments): one line for the user, naming it. */
export class ProjectError extends Error {}

/**
 * The folder holding firebase.json: `dir` (the --dir argument) when given, which must hold one, else the
 * current folder or the nearest folder above it that does (so a command run from inside the codebase
 * folder finds its project). A UsageError naming the argument otherwise.
 */
export function projectDir(dir: string | undefined, cwd = process.cwd()): string {
  if (dir !== undefined) {
    const given = resolve(cwd, dir);
    if (!existsSync(given)) throw new UsageError(`--dir ${dir}: no such folder`);
    if (!statSync(given).isDirectory()) throw new UsageError(`--dir ${dir}: not a folder (name the folder that holds firebase.json)`);
    if (!existsSync(join(given, "firebase.json"))) throw new UsageError(`--dir ${dir}: no firebase.json in ${given}`);
    return given;
  }
  for (let folder = resolve(cwd); ; folder = dirname(folder)) {
    if (existsSync(join(folder, "firebase.json"))) return folder;
    if (dirname(folder) === folder) throw new UsageError(`no firebase.json in ${resolve(cwd)} or any folder above it: run it in your Firebase project folder, or name it with --dir`);
  }
}

/** firebase.json, parsed; a ProjectError naming the file when it is not JSON. */
export function readFirebaseJson(dir: string): Record<string, unknown> {
  const path = join(dir, "firebase.json");
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ProjectError(`${path} is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ProjectError(`${path} does not hold a JSON object`);
  return parsed as Record<string, unknown>;
}

/** firebase.json's functions codebases as a list (firebase.json may hold one object, a list, or none). */
export function codebaseEntries(firebaseJson: Record<string, unknown>): CodebaseEntry[] {
  const functions = firebaseJson.functions;
  if (functions === undefined) return [];
  return (Array.isArray(functions) ? functions : [functions]) as CodebaseEntry[];
}

/** A codebase's name as firebase-tools reads it ("default" when firebase.json names none). */
export function codebaseName(entry: CodebaseEntry): string {
  return entry.codebase ?? "default";
}

/** The default project of .firebaserc in `dir`, if any. */
export function firebasercProject(dir: string): string | undefined {
  try {
    const rc = JSON.parse(readFileSync(join(dir, ".firebaserc"), "utf8")) as { projects?: { default?: unknown } };
    return typeof rc.projects?.default === "string" ? rc.projects.default : undefined;
  } catch {
    return undefined;
  }
}

/** The counters' codebase folder of the project: the source of codebase "counters" in firebase.json. */
export function countersSourceDir(dir: string): string {
  const ours = codebaseEntries(readFirebaseJson(dir)).find((entry) => entry.codebase === CODEBASE);
  if (ours?.source === undefined) throw new ProjectError(`${join(dir, "firebase.json")} has no functions codebase "${CODEBASE}" with a source folder: add the counters with firestore-exact-counter init`);
  return join(dir, ours.source);
}

/** The Firestore emulator's host:port in firebase.json (firebase-tools' default when it names none). */
export function configuredFirestoreHost(firebaseJson: Record<string, unknown>): string {
  const firestore = (firebaseJson.emulators as { firestore?: { host?: string; port?: number } } | undefined)?.firestore;
  return `${firestore?.host ?? "127.0.0.1"}:${firestore?.port ?? 8080}`;
}

/**
 * The params the codebase in `source` runs with for `projectId`: as a deploy reads them (.env, then
 * .env.<projectId>), or, in the emulator (a demo-* project, or FIRESTORE_EMULATOR_HOST set), as the
 * functions emulator reads them (.env.local on top). So a command against the emulator compares and
 * creates with the values its functions run with.
 */
export function runningParams(source: string, projectId: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const emulator = env.FIRESTORE_EMULATOR_HOST !== undefined || projectId.startsWith("demo-");
  return functionsParams(emulator ? [".env", `.env.${projectId}`, ".env.local"] : [".env", `.env.${projectId}`], source);
}
