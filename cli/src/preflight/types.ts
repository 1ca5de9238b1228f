// The preflight's shared shapes: what every check returns, what the runner is asked, and the context
// every check reads (firebase.json, our codebase, the project), made once by context.ts.
import type { ProjectRef } from "../lib/codebases";
import type { FunctionsCodebaseConfig } from "../lib/firebase-tools-internals";

export type Status = "ok" | "warn" | "fail";

export interface CheckResult {
  check: string;
  status: Status;
  message: string;
}

export interface PreflightOptions {
  /** The folder holding firebase.json. */
  projectDir: string;
  /** The counters' codebase in firebase.json (default "counters"). */
  codebase?: string;
  projectId: string;
  /** "Today", for the runtime's support window. */
  now: Date;
  /** host:port of a running Firestore emulator that compiles the rules (not used at predeploy). */
  firestoreHost: string;
  /**
   * Run as the deploy's predeploy step, before the build: only the checks that need neither the built
   * functions (the build comes next; the deploy itself then loads them) nor an emulator, offline and in a
   * few seconds: everything a param combination can get wrong (runPredeploy).
   */
  predeploy?: boolean;
  /**
   * Only the rules: they compile and keep the counters' guarantees (in the emulator at firestoreHost). The
   * predeploy step of firebase.json's firestore section, which runs whenever a deploy includes Firestore.
   */
  rulesOnly?: boolean;
}

export interface FirestoreConfig {
  database?: string;
  location?: string;
  rules?: string;
  indexes?: string;
}

export interface FirebaseJson {
  functions?: unknown;
  firestore?: FirestoreConfig | FirestoreConfig[];
}

export interface Context {
  options: PreflightOptions;
  firebaseJson: FirebaseJson;
  /** Every functions codebase of firebase.json (an app's own next to ours), normalized. */
  codebases: FunctionsCodebaseConfig[];
  /** Ours: the codebase named `counters`. */
  codebase: FunctionsCodebaseConfig;
  project: ProjectRef;
  sourceDir: string;
  runtimeFromConfig: string | undefined;
}
