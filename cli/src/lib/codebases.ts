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
  return delegate.discoverBuild({ firebase: firebaseConfig }, env);
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
