// A functions codebase of firebase.json, loaded the way `firebase deploy` loads it (deploy/functions/
// prepare.js): discover its build (the functions SDK's manifest, read by loading the code in a child
// process), then resolve it with the project's params. The preflight loads ours this way, and the other
// codebases of an app's project to compare their function names with ours.
import { join } from "node:path";
import {
  build as buildApi,
  functionsEnv,
  prepare,
  runtimes,
  type Backend,
  type Build,
  type Endpoint,
  type FunctionsCodebaseConfig,
} from "./firebase-tools-internals";
import { compareVersions } from "./versions";

/** The project a codebase is loaded for. */
export interface ProjectRef {
  projectId: string;
  /** The folder holding firebase.json: codebase sources are relative to it. */
  projectDir: string;
  /** What a deploy fetches from the project (getFirebaseConfig); only the ids matter offline. */
  firebaseConfig: Record<string, unknown>;
}

export function sourceDirOf(project: ProjectRef, codebase: FunctionsCodebaseConfig): string {
  if (codebase.source === undefined) throw new Error(`functions codebase "${codebase.codebase ?? "default"}" has no local source folder`);
  return join(project.projectDir, codebase.source);
}

/** The SDK's manifest of a codebase: its endpoints and params, unresolved. */
export async function discoverBuild(project: ProjectRef, codebase: FunctionsCodebaseConfig): Promise<Build> {
  const { projectId, projectDir, firebaseConfig } = project;
  const delegate = await runtimes.getRuntimeDelegate({ projectId, projectDir, sourceDir: sourceDirOf(project, codebase), runtime: codebase.runtime });
  const env = { ...functionsEnv.loadFirebaseEnvs(firebaseConfig, projectId), GOOGLE_CLOUD_QUOTA_PROJECT: projectId };
  return withManifestFile(writesManifestFile(delegate.sdkVersion), () => delegate.discoverBuild({ firebase: firebaseConfig }, env));
}

/**
 * firebase-tools' two ways to read the manifest: by default it serves the code over HTTP and asks the
 * server to quit, and the server's keep-alive connection holds the child open for Node's 5 s keepAliveTimeout
 * on every discovery; with FIREBASE_FUNCTIONS_DISCOVERY_OUTPUT_PATH=true the SDK writes the same manifest
 * (stackToWire of the loaded code) to a file and exits, in under a second. The SDK does that from 6.4.0 on;
 * an older one would start its server instead, so it keeps the default.
 */
const DISCOVERY_OUTPUT = "FIREBASE_FUNCTIONS_DISCOVERY_OUTPUT_PATH";
const MANIFEST_FILE_SINCE = [6, 4, 0];

export function writesManifestFile(sdkVersion: string | undefined): boolean {
  return sdkVersion !== undefined && compareVersions(sdkVersion, MANIFEST_FILE_SINCE) >= 0; // "" (unknown) is 0.0.0
}

/** firebase-tools reads the choice from process.env while it discovers: one discovery at a time sets it. */
let discoveries: Promise<unknown> = Promise.resolve();

function withManifestFile<T>(toFile: boolean, discover: () => Promise<T>): Promise<T> {
  const run = async (): Promise<T> => {
    const before = process.env[DISCOVERY_OUTPUT];
    if (before !== undefined) return discover(); // the operator's own choice stands
    if (toFile) process.env[DISCOVERY_OUTPUT] = "true";
    try {
      return await discover();
    } finally {
      delete process.env[DISCOVERY_OUTPUT];
    }
  };
  const next = discoveries.then(run, run);
  discoveries = next.catch(() => undefined);
  return next;
}

/**
 * The build with the project's params substituted (the codebase's .env, .env.<projectId>), never
 * prompting, with the CPU and concurrency a deploy would fill in, and each endpoint labelled with its
 * codebase as a deploy labels it (its `--only` filters match on that label).
 */
export async function resolveBuild(project: ProjectRef, codebase: FunctionsCodebaseConfig, build: Build): Promise<Backend> {
  return (await resolveBuildWithParams(project, codebase, build)).backend;
}

/** resolveBuild, and the value each param resolved to (as the text it came from: .env, or its default). */
export async function resolveBuildWithParams(
  project: ProjectRef,
  codebase: FunctionsCodebaseConfig,
  build: Build,
): Promise<{ backend: Backend; params: Record<string, string> }> {
  const { projectId, firebaseConfig } = project;
  const userEnvs = functionsEnv.loadUserEnvs({ functionsSource: sourceDirOf(project, codebase), projectId });
  const { backend, envs } = await buildApi.resolveBackend({ build, firebaseConfig, userEnvs, nonInteractive: true, isEmulator: false });
  prepare.resolveCpuAndConcurrency(backend);
  for (const endpoint of endpointsOf(backend)) endpoint.codebase = codebase.codebase ?? "default";
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(envs)) params[name] = value.rawValue;
  return { backend, params };
}

export function endpointsOf(backend: Backend): Endpoint[] {
  return Object.values(backend.endpoints).flatMap((byId) => Object.values(byId));
}
