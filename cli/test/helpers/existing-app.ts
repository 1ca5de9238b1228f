// The steps of docs/existing-app.md ("Add to an existing app"), done by code on a copy of the fixture app
// (scripts/test/fixtures/existing-app: its own default codebase, rules for posts, a composite index), so
// the tests follow the guide exactly as a user would, from this repository's current files.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { CODEBASE } from "../../lib/preflight/codebase";
import { REPO_ROOT } from "../../lib/firebase-cli";
import { findBlock } from "../../lib/rules-block";

export const FIXTURE_APP = join(REPO_ROOT, "scripts", "test", "fixtures", "existing-app");
export const APP_PROJECT = "demo-existing-app";
/** The folder our functions/ becomes in the app, next to the app's own functions/. */
export const COUNTERS_SOURCE = "counters";
/** Copies live inside the repository so their functions resolve the repository's node_modules. */
const COPIES = join(REPO_ROOT, ".cache", "existing-app");

/** A fresh copy of the fixture app. */
export function copyOfFixtureApp(): string {
  mkdirSync(COPIES, { recursive: true });
  const dir = mkdtempSync(join(COPIES, "app-"));
  cpSync(FIXTURE_APP, dir, { recursive: true });
  return dir;
}

export function removeCopies(): void {
  rmSync(COPIES, { recursive: true, force: true });
}

/**
 * Step 1: our functions/ folder, without what npm makes and without our tests; without the build output
 * unless `prebuilt` (the repository's lib/, from `npm run build`), for tests that need no build of their own.
 */
export function copyFunctions(appDir: string, prebuilt = false): void {
  const from = join(REPO_ROOT, "functions");
  const skip = new Set(["node_modules", "test", ".env.local", ".runtimeconfig.json", ...(prebuilt ? [] : ["lib"])]);
  cpSync(from, join(appDir, COUNTERS_SOURCE), { recursive: true, filter: (path) => !skip.has(relative(from, path).split(sep)[0]!) });
}

/**
 * Stands in for `npm install` in the app's counters/ (offline, and in no time): the repository's own
 * install of the functions' dependencies. Linked as node_modules, it serves the packages npm placed in
 * functions/node_modules (zod 4, where the repository root has another major); the rest resolve from
 * the repository's node_modules above the copy.
 */
export function installFunctionsDependencies(appDir: string): void {
  const installed = join(REPO_ROOT, "functions", "node_modules");
  if (existsSync(installed)) symlinkSync(installed, join(appDir, COUNTERS_SOURCE, "node_modules"));
}

interface CodebaseEntry {
  source?: string;
  codebase?: string;
  [key: string]: unknown;
}

/**
 * Our predeploy steps as the app's firebase.json gets them: the same commands, the preflight run from the
 * checkout of this repository (here: the repository, relative to the copy) on the app's folder.
 */
function predeployFor(appDir: string, steps: unknown): unknown {
  if (!Array.isArray(steps)) return steps;
  const checkout = relative(appDir, REPO_ROOT) || ".";
  return (steps as unknown[]).map((step) =>
    typeof step === "string" ? step.replace(/^npm --prefix "\$PROJECT_DIR" run preflight/, `npm --prefix ${checkout} run preflight`) : step,
  );
}

/** Step 2: firebase.json's functions as a list: theirs named "default" explicitly, then ours. */
export function mergeFirebaseJson(appDir: string): void {
  const path = join(appDir, "firebase.json");
  const theirs = JSON.parse(readFileSync(path, "utf8")) as { functions?: CodebaseEntry | CodebaseEntry[] };
  const repo = JSON.parse(readFileSync(join(REPO_ROOT, "firebase.json"), "utf8")) as { functions: CodebaseEntry[] };
  const ours = repo.functions.find((entry) => entry.codebase === CODEBASE);
  if (ours === undefined) throw new Error(`firebase.json of the repository has no codebase ${CODEBASE}`);
  const existing = theirs.functions === undefined ? [] : Array.isArray(theirs.functions) ? theirs.functions : [theirs.functions];
  theirs.functions = [
    ...existing.map(({ source, codebase, ...rest }) => ({ source, codebase: codebase ?? "default", ...rest })),
    { ...ours, source: COUNTERS_SOURCE, predeploy: predeployFor(appDir, ours.predeploy) },
  ];
  writeFileSync(path, `${JSON.stringify(theirs, null, 2)}\n`);
}

const DOCUMENTS = /^(\s*)match\s+\/databases\/\{\w+\}\/documents\s*\{\s*$/;

/** Inserts `lines` (re-indented one level deeper) right after the app's `match /databases/{database}/documents {`. */
function insertInDocuments(rules: string, lines: string[]): string {
  const all = rules.split("\n");
  const at = all.findIndex((line) => DOCUMENTS.test(line));
  if (at === -1) throw new Error("no `match /databases/{database}/documents {` line in the app's rules");
  const indent = `${DOCUMENTS.exec(all[at]!)![1]!}  `;
  const common = Math.min(...lines.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length));
  const moved = lines.map((line) => (line.trim() === "" ? "" : indent + line.slice(common)));
  return [...all.slice(0, at + 1), ...moved, ...all.slice(at + 1)].join("\n");
}

/** Step 3: the marked block of this repository's firestore.rules pasted into the app's rules. */
export function pasteRulesBlock(appRules: string): string {
  const block = findBlock(readFileSync(join(REPO_ROOT, "firestore.rules"), "utf8"));
  if (block === undefined) throw new Error("firestore.rules has no marked block");
  return insertInDocuments(appRules, block);
}

/** The common mistake that opens everything to signed-in users, rules being OR'ed. */
export function withCatchAll(rules: string): string {
  return insertInDocuments(rules, ["match /{document=**} {", "  allow read, write: if request.auth != null;", "}"]);
}

/** The same catch-all narrowed as docs/existing-app.md shows: everything but the counters. */
export function withNarrowedCatchAll(rules: string): string {
  return insertInDocuments(rules, [
    "match /{collection}/{document=**} {",
    '  allow read, write: if request.auth != null && collection != "counters";',
    "}",
  ]);
}

interface IndexFile {
  indexes?: unknown[];
  fieldOverrides?: { collectionGroup?: string; fieldPath?: string }[];
}

/** Step 4: our indexes and field overrides (the TTL policy among them) added to the app's index file. */
export function mergeIndexes(appDir: string): void {
  const path = join(appDir, "firestore.indexes.json");
  const theirs = JSON.parse(readFileSync(path, "utf8")) as IndexFile;
  const ours = JSON.parse(readFileSync(join(REPO_ROOT, "firestore.indexes.json"), "utf8")) as IndexFile;
  const sameField = (a: { collectionGroup?: string; fieldPath?: string }) => (b: typeof a) =>
    a.collectionGroup === b.collectionGroup && a.fieldPath === b.fieldPath;
  const overrides = theirs.fieldOverrides ?? [];
  theirs.indexes = [...(theirs.indexes ?? []), ...(ours.indexes ?? [])];
  theirs.fieldOverrides = [...overrides, ...(ours.fieldOverrides ?? []).filter((o) => !overrides.some(sameField(o)))];
  writeFileSync(path, `${JSON.stringify(theirs, null, 2)}\n`);
}

/**
 * Step 1's per-project values: the app's users create the likes counters of their own posts, so the app
 * lets signed-in users of a real provider create (CREATE_POLICY=non-anonymous) instead of the shipped
 * admin-only default.
 */
export function choosePolicy(appDir: string): void {
  writeFileSync(join(appDir, COUNTERS_SOURCE, `.env.${APP_PROJECT}`), "CREATE_POLICY=non-anonymous\n");
}

/** Steps 2 to 4 of the guide on `appDir`, and the per-project params of step 1. */
export function mergeCounters(appDir: string): void {
  choosePolicy(appDir);
  mergeFirebaseJson(appDir);
  const rules = join(appDir, "firestore.rules");
  writeFileSync(rules, pasteRulesBlock(readFileSync(rules, "utf8")));
  mergeIndexes(appDir);
}

/**
 * Every step of the guide on `appDir`, step 1 by code (a copy, and the repository's own install linked
 * in) for the tests that need the merged app but not the guide's commands (the build aside: see
 * copyFunctions); scripts/test/existing-app.test.ts runs step 1's commands themselves.
 */
export function addCounters(appDir: string, prebuilt = false): void {
  copyFunctions(appDir, prebuilt);
  installFunctionsDependencies(appDir);
  mergeCounters(appDir);
}

// --- the guide's own commands ------------------------------------------------------------------------

const GUIDE = join(REPO_ROOT, "docs", "existing-app.md");

/** The text of docs/existing-app.md from `heading` to the next heading of the same level or above. */
export function guideSection(heading: string): string {
  const doc = readFileSync(GUIDE, "utf8");
  const start = doc.indexOf(heading);
  if (start === -1) throw new Error(`docs/existing-app.md has no ${JSON.stringify(heading)}`);
  const next = doc.indexOf("\n## ", start + heading.length);
  return doc.slice(start, next === -1 ? undefined : next);
}

/** The code blocks (``` fenced, any language) of a section, in order. */
export function codeBlocks(section: string): string[] {
  return [...section.matchAll(/```[a-z]*\n([^]*?)```/g)].map((m) => m[1]!);
}

/** A block's shell commands: one per line, comments after # dropped. */
export function commandsOf(block: string): string[] {
  return block
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

// --- running the merged app in the emulators --------------------------------------------------------

/** firebase-tools' default port of each emulator the run starts (or may start for functions). */
const DEFAULT_PORTS: Record<string, number> = { auth: 9099, firestore: 8080, functions: 5001, hub: 4400, logging: 4500, eventarc: 9299, tasks: 9499, pubsub: 8085 };
const DEFAULT_WEBSOCKET_PORT = 9150;
/**
 * The app's emulators run while the suite's own run (npm test: firebase.json's ports; a run with
 * `--config <file>`: that file's, from COUNTERS_EMULATOR_CONFIG; a worktree's: its untracked
 * firebase.wt.json) is up, so they take those ports plus this offset, which
 * lands on no port of firebase.json, of a worktree's config or of the benchmark's config.
 */
export const PORT_OFFSET = 50;

interface EmulatorConfig {
  host?: string;
  port?: number;
  websocketPort?: number;
}

/** The emulators section for the merged app: the base config's ports (firebase.wt.json if any) + offset. */
export function offsetEmulators(): Record<string, unknown> {
  // The suite's own config first (scripts/emulators.ts exec --config names it), then a worktree's.
  const named = process.env.COUNTERS_EMULATOR_CONFIG;
  const base = [...(named ? [named] : []), ...["firebase.wt.json", "firebase.json"].map((f) => join(REPO_ROOT, f))].find((f) => existsSync(f))!;
  const emulators = (JSON.parse(readFileSync(base, "utf8")) as { emulators?: Record<string, EmulatorConfig | undefined> }).emulators ?? {};
  const ports = Object.entries(DEFAULT_PORTS).map(([name, port]): [string, EmulatorConfig] => [
    name,
    { host: "127.0.0.1", port: (emulators[name]?.port ?? port) + PORT_OFFSET },
  ]);
  const config: Record<string, EmulatorConfig> = Object.fromEntries(ports);
  config.firestore!.websocketPort = (emulators.firestore?.websocketPort ?? DEFAULT_WEBSOCKET_PORT) + PORT_OFFSET;
  return { singleProjectMode: false, ...config, ui: { enabled: false } };
}

/** Points the app's firebase.json at the offset ports (the app's own emulators section is replaced). */
export function useOffsetEmulators(appDir: string): void {
  const path = join(appDir, "firebase.json");
  const config = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  config.emulators = offsetEmulators();
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
}
