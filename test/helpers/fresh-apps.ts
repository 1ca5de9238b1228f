// Fresh apps for the packed tests (scripts/test/*.app.test.ts): a folder outside the repository made from a
// fixture, the packages installed from their tarballs with npm as a user would (from npm's cache, which
// `npm ci` filled), and the app's own emulators run on ports nobody else uses, so they never meet the
// suite's emulators or another app's.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { freePort } from "../../cli/src/lib/firestore-emulator";
import { emulatorEnv, EMULATORS, REPO_ROOT, shellQuote } from "../../scripts/lib/firebase-cli";
import { repositoryParams } from "./setup-env-params";
import { npm } from "./packed";
import { run as runWith, type Run } from "./run";
import type { ProbeResult } from "./app-probe";

export const FIXTURES = join(REPO_ROOT, "test", "fixtures");

/** A copy of fixtures/<name> in a fresh folder outside the repository (nothing resolves the repository's node_modules). */
export function freshApp(fixture: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), `counter-app-${fixture}-`)), "app");
  cpSync(join(FIXTURES, fixture), dir, { recursive: true });
  return dir;
}

export function removeApp(appDir: string | undefined): void {
  if (appDir !== undefined) rmSync(join(appDir, ".."), { recursive: true, force: true });
}

/** `npm install <args>` in `dir`, taking what npm's cache has (offline machines have nothing else). */
export async function npmInstall(dir: string, args: string[] = []): Promise<Run> {
  const installed = await npm(["install", "--prefer-offline", "--no-audit", "--no-fund", ...args], dir);
  if (installed.code !== 0) throw new Error(`npm install ${args.join(" ")} in ${dir} failed (exit ${installed.code}):\n${installed.stderr}`);
  return installed;
}

/**
 * The app's own firebase-tools, as its devDependency would put it in node_modules (`npx firebase` finds
 * its bin there): this repository's pinned 14.27.0, linked (an install of it takes minutes).
 */
export function linkFirebaseTools(appDir: string): string {
  mkdirSync(join(appDir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(join(REPO_ROOT, "node_modules", "firebase-tools"), join(appDir, "node_modules", "firebase-tools"));
  symlinkSync(join("..", "firebase-tools", "lib", "bin", "firebase.js"), join(appDir, "node_modules", ".bin", "firebase"));
  return join(appDir, "node_modules", "firebase-tools", "lib", "bin", "firebase.js");
}

/** The emulators firebase-tools may start for an app with functions, and their default ports. */
const EMULATOR_NAMES = ["auth", "firestore", "functions", "hub", "logging", "eventarc", "tasks", "pubsub"];

/**
 * What a bare `firebase emulators:start` starts for such an app: every emulator its emulators section names
 * and every product its firebase.json configures (hosting), so neither pubsub (firebase-tools downloads it)
 * nor a default port.
 */
export const STARTED_EMULATOR_NAMES = [...EMULATOR_NAMES.filter((name) => name !== "pubsub"), "hosting"];

/** firebase.json's emulators section on free loopback ports, without the Emulator UI (it would be downloaded). */
export async function freeEmulators(names: readonly string[] = EMULATOR_NAMES): Promise<Record<string, unknown>> {
  const section: Record<string, unknown> = { singleProjectMode: false, ui: { enabled: false } };
  for (const name of names) section[name] = { host: "127.0.0.1", port: await freePort() };
  (section.firestore as Record<string, unknown>).websocketPort = await freePort();
  return section;
}

/** Points the app's firebase.json at emulators of its own (its emulators section replaced): `names`, on free ports. */
export async function useOwnEmulators(appDir: string, names: readonly string[] = EMULATOR_NAMES): Promise<void> {
  const path = join(appDir, "firebase.json");
  const config = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  config.emulators = await freeEmulators(names);
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
}

/** The names of this repository's params (setup-env-params.ts), read once: what userShellEnv leaves out. */
const REPOSITORY_PARAMS = new Set(Object.keys(repositoryParams()));

/**
 * The environment of a user's shell: without the suite's emulator addresses (the app's run has its own), and
 * without this repository's own param values, which setup-env.ts puts into every emulator tier's environment
 * from functions/.env (LEADERBOARDS, DOCUMENT_COUNTERS…): an app reads its params from its own codebase.
 */
export function userShellEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const outer = /(_EMULATOR_HOST|_EMULATOR_ADDRESS|^FIREBASE_EMULATOR_HUB|^GCLOUD_PROJECT|^FIREBASE_CONFIG|^FIRESTORE_EMULATOR_BINARY_PATH)$/;
  return Object.fromEntries(Object.entries(env).filter(([key]) => !outer.test(key) && !REPOSITORY_PARAMS.has(key)));
}

export interface ProbeRun {
  run: Run;
  probe: ProbeResult;
}

/** What `emulators:exec` tells the command it runs, for the app's emulators started otherwise: its firebase.json's hosts. */
export function appEmulatorEnv(appDir: string, project: string): NodeJS.ProcessEnv {
  const emulators = (JSON.parse(readFileSync(join(appDir, "firebase.json"), "utf8")) as { emulators: Record<string, { host: string; port: number }> }).emulators;
  const host = (name: string) => `${emulators[name]!.host}:${emulators[name]!.port}`;
  return { GCLOUD_PROJECT: project, FIRESTORE_EMULATOR_HOST: host("firestore"), FIREBASE_AUTH_EMULATOR_HOST: host("auth"), FIREBASE_EMULATOR_HUB: host("hub") };
}

/** The probe (helpers/app-probe.ts) against the app's emulators, running already: what it saw, or an error with its output. */
export async function probeRunning(appDir: string, project: string, env: NodeJS.ProcessEnv): Promise<{ run: Run; probe: ProbeResult }> {
  const tsx = pathToFileURL(join(REPO_ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
  const run = await runWith(process.execPath, ["--import", tsx, join(__dirname, "app-probe.ts")], { cwd: appDir, env: { ...userShellEnv(), ...appEmulatorEnv(appDir, project), ...env } });
  const line = /^PROBE (.*)$/m.exec(run.stdout);
  if (run.code !== 0 || line === null) throw new Error(`the probe in ${appDir} failed (code ${run.code}):\n${run.stdout}\n${run.stderr}`);
  return { run, probe: JSON.parse(line[1]!) as ProbeResult };
}

/**
 * `firebase emulators:exec` of the app (auth, firestore, functions) with `firebase` (the app's
 * firebase-tools), running the probe (helpers/app-probe.ts) inside: what it saw, or an error with the
 * whole output. `env` is added to the environment (the Firestore emulator binary, the probe's settings).
 * firebase-tools runs on `node` (default: the tests' own), and the functions emulator runs the functions on it.
 */
export async function probeApp(appDir: string, firebase: string, project: string, env: NodeJS.ProcessEnv, node = process.execPath): Promise<ProbeRun> {
  // tsx from this repository, named by its path: the app's folder (the probe's cwd) has none.
  const tsx = pathToFileURL(join(REPO_ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
  const probe = ["node", "--import", tsx, join(__dirname, "app-probe.ts")].map(shellQuote).join(" ");
  const args = [firebase, "emulators:exec", "--project", project, "--only", EMULATORS, "--log-verbosity", "QUIET", probe];
  const run = await runWith(node, args, { cwd: appDir, env: { ...emulatorEnv(userShellEnv()), ...env } });
  const line = /^PROBE (.*)$/m.exec(run.stdout);
  if (run.code !== 0 || line === null) throw new Error(`emulators:exec in ${appDir} failed (code ${run.code}):\n${run.stdout}\n${run.stderr}`);
  return { run, probe: JSON.parse(line[1]!) as ProbeResult };
}
