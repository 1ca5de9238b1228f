// The parts of firebase-tools that `firebase deploy` runs before it touches the network, loaded from its
// own lib/ so the preflight checks exactly what a deploy checks (written against 14.27.0, the version this
// repository pins). The firebase-tools used is the project's own: found from the project folder (its
// node_modules or a folder above it), then from where this command is installed, then the global npm
// install; never a dependency of this package (nor of the functions an app deploys). It is looked up on
// first use, so commands that do not need it run without it. firebase-tools ships no type declarations:
// the shapes below are the subset we use, written from its sources.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { CliError, EXIT } from "./cli";

let searchFrom = process.cwd();
let found: { root: string; require: NodeJS.Require } | undefined;

/** Where to look for firebase-tools first: the project folder the command works on. */
export function useFirebaseToolsFrom(dir: string): void {
  if (found === undefined) searchFrom = dir;
}

/** The global npm install's node_modules, if npm answers. */
function globalRoot(): string | undefined {
  try {
    return execFileSync("npm", ["root", "--global"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

/** The folder of the firebase-tools package this command uses; exit 2 naming what to install when there is none. */
export function firebaseToolsRoot(): string {
  if (found !== undefined) return found.root;
  const local = [searchFrom, __dirname].map((from) => {
    try {
      return dirname(require.resolve("firebase-tools/package.json", { paths: [from] }));
    } catch {
      return undefined;
    }
  });
  const global = globalRoot();
  const root = [...local, global === undefined ? undefined : join(global, "firebase-tools")].find((r) => r !== undefined && existsSync(join(r, "package.json")));
  if (root === undefined) {
    throw new CliError(
      `firebase-tools is not installed for ${searchFrom}: install it in the project (npm install --save-dev firebase-tools@14.27.0) or globally (npm install --global firebase-tools), then run this again`,
      EXIT.usage,
    );
  }
  found = { root, require: createRequire(join(root, "package.json")) };
  return root;
}

/** The version of the firebase-tools this command uses. */
export function firebaseToolsVersion(): string {
  return (JSON.parse(readFileSync(join(firebaseToolsRoot(), "package.json"), "utf8")) as { version: string }).version;
}

/** One module of firebase-tools' lib/, loaded on first use (a property read or a call). */
function load<T extends object>(module: string): T {
  let loaded: T | undefined;
  const target = (): T => {
    if (loaded === undefined) {
      firebaseToolsRoot();
      try {
        loaded = found!.require(`./lib/${module}`) as T;
      } catch (error) {
        throw new Error(`firebase-tools ${firebaseToolsVersion()} (${found!.root}) has no lib/${module} as 14.27.0 does: ${errorMessage(error)}`);
      }
    }
    return loaded;
  };
  return new Proxy({} as T, { get: (_, key) => Reflect.get(target(), key) as unknown });
}

export interface RuntimeInfo {
  friendly: string;
  status: string;
  deprecationDate: string;
  decommissionDate: string;
}

export const supported = load<{
  RUNTIMES: Record<string, RuntimeInfo>;
  isRuntime(runtime: string): boolean;
  /** Throws a FirebaseError on a decommissioned runtime; logs (does not throw) near deprecation. */
  guardVersionSupport(runtime: string, now?: Date): void;
}>("deploy/functions/runtimes/supported");

export const runtimeChoice = load<{
  /** firebase.json's runtime, else `nodejs${engines.node}` from package.json; throws if unsupported. */
  getRuntimeChoice(sourceDir: string, runtimeFromConfig?: string): string;
}>("deploy/functions/runtimes/node/parseRuntimeAndValidateSDK");

export const nodeValidate = load<{
  packageJsonIsValid(relativeDir: string, sourceDir: string, projectDir: string): void;
}>("deploy/functions/runtimes/node/validate");

export const versioning = load<{
  getFunctionsSDKVersion(sourceDir: string): string | undefined;
}>("deploy/functions/runtimes/node/versioning");

export interface FunctionsCodebaseConfig {
  source?: string;
  codebase?: string;
  runtime?: string;
}

export const projectConfig = load<{
  normalizeAndValidate(config: unknown): FunctionsCodebaseConfig[];
}>("functions/projectConfig");

/** A discovered (unresolved) build: what the functions SDK's manifest says. */
export interface Build {
  params: { name: string; type: string }[];
  endpoints: Record<string, unknown>;
}

export interface Endpoint {
  id: string;
  region: string;
  platform: string;
  entryPoint: string;
  callableTrigger?: Record<string, unknown>;
  /** Set by a deploy (prepare) after resolving a codebase's build; filters match on it. */
  codebase?: string;
  eventTrigger?: {
    eventType: string;
    eventFilters?: Record<string, string>;
    eventFilterPathPatterns?: Record<string, string>;
    retry: boolean;
  };
  /** `timeZone`: Cloud Scheduler's (firebase-tools uses UTC for a v2 function that names none). */
  scheduleTrigger?: { schedule: string; timeZone?: string | null; retryConfig?: Record<string, unknown> };
  availableMemoryMb?: number;
  timeoutSeconds?: number;
  concurrency?: number;
  cpu?: number | "gcf_gen1";
  maxInstances?: number;
  minInstances?: number;
}

/** A param's resolved value (deploy/functions/params.js): the text it came from. */
export interface ParamValue {
  rawValue: string;
}

/** A resolved backend: endpoints by region and id, params substituted. */
export interface Backend {
  endpoints: Record<string, Record<string, Endpoint>>;
}

export interface RuntimeDelegate {
  runtime: string;
  /** The codebase's firebase-functions version (the Node delegate's; "" when it cannot tell). */
  sdkVersion?: string;
  discoverBuild(runtimeConfig: Record<string, unknown>, env: Record<string, string>): Promise<Build>;
}

export const runtimes = load<{
  getRuntimeDelegate(context: { projectId: string; projectDir: string; sourceDir: string; runtime?: string }): Promise<RuntimeDelegate>;
}>("deploy/functions/runtimes");

export const functionsEnv = load<{
  loadUserEnvs(opts: { functionsSource: string; projectId: string; projectAlias?: string }): Record<string, string>;
  loadFirebaseEnvs(firebaseConfig: Record<string, unknown>, projectId: string): Record<string, string>;
}>("functions/env");

export const build = load<{
  resolveBackend(opts: {
    build: Build;
    firebaseConfig: Record<string, unknown>;
    userEnvs: Record<string, string>;
    nonInteractive: boolean;
    isEmulator: boolean;
  }): Promise<{ backend: Backend; envs: Record<string, ParamValue> }>;
}>("deploy/functions/build");

export const prepare = load<{
  /** Fills in the CPU and concurrency a deploy would use where the code set none. */
  resolveCpuAndConcurrency(backend: Backend): void;
}>("deploy/functions/prepare");

export const deployValidate = load<{
  endpointsAreUnique(backends: Record<string, Backend>): void;
  /** Memory, CPU, concurrency and trigger checks a deploy runs on every endpoint. */
  endpointsAreValid(backend: Backend): void;
}>("deploy/functions/validate");

/** One `--only functions:…` selector as a deploy reads it: a codebase, function id chunks, or both. */
export interface EndpointFilter {
  codebase?: string;
  idChunks?: string[];
}

export const functionsDeployHelper = load<{
  /**
   * The filters of `options.only` (e.g. "functions:counters"); undefined when nothing is filtered. A
   * selector without ":" is a codebase when firebase.json has one of that name, else a function id.
   */
  getEndpointFilters(options: { only?: string }, config: FunctionsCodebaseConfig[]): EndpointFilter[] | undefined;
  /** The codebases of firebase.json a deploy with these filters loads (discovers and builds). */
  targetCodebases(config: FunctionsCodebaseConfig[], filters?: EndpointFilter[]): string[];
  /** Whether a deploy with these filters creates, updates or deletes this endpoint. */
  endpointMatchesAnyFilter(endpoint: Endpoint, filters?: EndpointFilter[]): boolean;
}>("deploy/functions/functionsDeployHelper");

export const firestoreApi = load<{
  FirestoreApi: new () => { validateSpec(spec: unknown): void };
}>("firestore/api");

export const downloadableEmulators = load<{
  getDownloadDetails(emulator: "firestore"): { downloadPath: string };
  downloadIfNecessary(emulator: "firestore"): Promise<void>;
}>("emulator/downloadableEmulators");

/** The message of a FirebaseError (or any error), without firebase-tools' colour codes. */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // eslint-disable-next-line no-control-regex -- strips ANSI colour sequences
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}
