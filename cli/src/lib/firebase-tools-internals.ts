// The parts of the pinned firebase-tools (14.27.0) that `firebase deploy` runs before it touches the
// network, loaded from its own lib/ so the preflight checks exactly what a deploy checks. firebase-tools
// ships no type declarations: the shapes below are the subset we use, written from its sources.
import { createRequire } from "node:module";
import { join } from "node:path";
import { REPO_ROOT } from "./firebase-cli";

const fromTools = createRequire(join(REPO_ROOT, "node_modules", "firebase-tools", "package.json"));

function load<T>(module: string): T {
  return fromTools(`./lib/${module}`) as T;
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
  scheduleTrigger?: { schedule: string; retryConfig?: Record<string, unknown> };
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
