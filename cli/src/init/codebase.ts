// The codebase folder init makes (counters/ unless --codebase names another): a package.json that depends
// on the functions package, firebase-functions and firebase-admin (their peers), with the CLI as a
// devDependency for the predeploy preflight; an entry that re-exports the functions; a .env with every
// param's default and what it does. Run again, it keeps what is there and adds only what is missing (a
// param a newer version declares), so the app's own values and edits stay.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { paramList, type ParamInfo } from "../../../functions/src/model/params";
import { CLI_NAME, CLI_PACKAGE, FUNCTIONS_NODE, FUNCTIONS_PACKAGE, FUNCTIONS_TESTED, VERSION } from "../lib/package";

export type FolderState = "missing" | "empty" | "ours" | "not ours";

interface PackageJson {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
  [key: string]: unknown;
}

/** Whether the folder is absent, empty, a codebase of ours (its package.json depends on the functions package), or something else. */
export function folderState(folder: string): FolderState {
  if (!existsSync(folder)) return "missing";
  if (!statSync(folder).isDirectory()) return "not ours";
  if (readdirSync(folder).length === 0) return "empty";
  try {
    const pkg = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as PackageJson;
    return pkg.dependencies?.[FUNCTIONS_PACKAGE] !== undefined ? "ours" : "not ours";
  } catch {
    return "not ours";
  }
}

export interface CodebaseSpecs {
  functions: string;
  cli: string;
}

/** The codebase's package.json: what is there (if ours) with our dependencies set, else a new one. */
export function codebasePackageJson(existing: string | undefined, name: string, specs: CodebaseSpecs): string {
  const pkg: PackageJson =
    existing !== undefined
      ? (JSON.parse(existing) as PackageJson)
      : {
          name: `${name}-codebase`,
          private: true,
          description: `Codebase "${name}" of this Firebase project: the ${CLI_NAME} functions (${FUNCTIONS_PACKAGE}), re-exported. Made by ${CLI_NAME} init.`,
          main: "index.js",
          engines: { node: FUNCTIONS_NODE },
        };
  pkg.scripts = { ...pkg.scripts, preflight: pkg.scripts?.preflight ?? `${CLI_NAME} preflight` };
  pkg.dependencies = sorted({
    ...pkg.dependencies,
    [FUNCTIONS_PACKAGE]: specs.functions,
    "firebase-admin": pkg.dependencies?.["firebase-admin"] ?? FUNCTIONS_TESTED["firebase-admin"],
    "firebase-functions": pkg.dependencies?.["firebase-functions"] ?? FUNCTIONS_TESTED["firebase-functions"],
  });
  pkg.devDependencies = sorted({ ...pkg.devDependencies, [CLI_PACKAGE]: specs.cli });
  const text = `${JSON.stringify(pkg, null, 2)}\n`;
  // Unchanged content keeps its exact bytes (an app's own formatting of a file it edited).
  return existing !== undefined && JSON.stringify(JSON.parse(existing)) === JSON.stringify(pkg) ? existing : text;
}

function sorted(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

/** The codebase's entry: the functions, re-exported (firebase-tools reads package.json's main). */
export function codebaseEntry(name: string): string {
  return [
    `// Codebase "${name}" of this Firebase project: the ${CLI_NAME} functions, re-exported as they are.`,
    `// Made by ${CLI_NAME} init ${VERSION}. Params: .env here (per project: .env.<projectId>).`,
    `Object.assign(exports, require("${FUNCTIONS_PACKAGE}"));`,
    "",
  ].join("\n");
}

/** What the codebase folder's .gitignore holds: what npm makes, and the emulator's own params. */
const GITIGNORED = ["node_modules/", ".env.local"];

/** The codebase's .gitignore: an existing one with the lines it lacks appended. */
export function codebaseGitignore(existing: string | undefined): string {
  const text = existing ?? "";
  const present = new Set(text.split(/\r?\n/).map((line) => line.trim()));
  const missing = GITIGNORED.filter((line) => !present.has(line) && !present.has(line.replace(/\/$/, "")));
  if (missing.length === 0) return text;
  return `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${missing.join("\n")}\n`;
}

/** The rollup interval init gives the emulator (and only the emulator) in .env.local. */
export const LOCAL_ROLLUP_INTERVAL_MS = 100;

/**
 * The codebase's .env.local: a short rollup interval for the emulator, and why. firebase-tools reads
 * .env.local only when it emulates (a deploy never does, and firebase.json's "ignore" of init's entry
 * leaves *.local out of the upload); the .gitignore above keeps it out of git.
 */
export function codebaseEnvLocal(name: string): string {
  return [
    `# Params of codebase "${name}" for the Firebase emulator only: firebase deploy never reads .env.local (it is`,
    "# not uploaded either), and .gitignore keeps it out of git. Made by firestore-exact-counter init.",
    "# The emulator delivers Firestore trigger events one at a time, and a busy counter's rollup waits up to",
    "# ROLLUP_INTERVAL_MS while it holds them: with .env's value (the deployed one) a local burst of writes",
    `# takes minutes to settle, with ${LOCAL_ROLLUP_INTERVAL_MS} ms a few seconds. The emulator's output names the interval it uses.`,
    `ROLLUP_INTERVAL_MS=${LOCAL_ROLLUP_INTERVAL_MS}`,
    "",
  ].join("\n");
}

/** The NAME of every NAME=value line of an env file. */
export function envNames(text: string): Set<string> {
  return new Set([...text.matchAll(/^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/gm)].map((m) => m[1]!));
}

function paramLines(param: ParamInfo): string {
  const comment = param.description
    .split(/(?<=\.) /)
    .map((sentence) => `# ${sentence}`)
    .join("\n");
  return `${comment}\n${param.name}=${param.default ?? ""}\n`;
}

/**
 * The codebase's .env: every param with its default and, above it, what it does. An existing .env keeps
 * every line; the params it lacks are appended.
 */
export function codebaseEnv(existing: string | undefined, name: string, params: ParamInfo[] = paramList()): string {
  if (existing === undefined) {
    const header = [
      `# Params of codebase "${name}" (the ${CLI_NAME} functions): every one needs a value here, or firebase`,
      "# prompts for it (and the emulator waits forever). These are the defaults; change what you need, and put",
      "# values for one project in .env.<projectId> (e.g. REGION for your database's location, ENFORCE_APP_CHECK=true).",
      `# Checked before every deploy by ${CLI_NAME} preflight.`,
      "",
    ].join("\n");
    return `${header}\n${params.map(paramLines).join("\n")}`;
  }
  const present = envNames(existing);
  const missing = params.filter((p) => !present.has(p.name));
  if (missing.length === 0) return existing;
  const separator = existing.endsWith("\n") || existing === "" ? "" : "\n";
  return `${existing}${separator}\n# Added by ${CLI_NAME} init ${VERSION}:\n${missing.map(paramLines).join("\n")}`;
}
