// The context every check reads, made once from firebase.json (our codebase among an app's, the
// project, the functions' source folder), and what several checks ask of it: the env files a deploy
// reads the params from (and every fix names), their values, and the Firestore section.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { errorMessage, functionsEnv, projectConfig } from "../lib/firebase-tools-internals";
import { countersCodebase } from "./codebase";
import type { CheckResult, Context, FirebaseJson, FirestoreConfig, PreflightOptions } from "./types";

export function context(options: PreflightOptions): Context {
  const path = join(options.projectDir, "firebase.json");
  const firebaseJson = JSON.parse(readFileSync(path, "utf8")) as FirebaseJson;
  const codebases = projectConfig.normalizeAndValidate(firebaseJson.functions);
  const codebase = countersCodebase(codebases, path, options.codebase);
  const { projectId, projectDir } = options;
  // What a deploy fetches from the project (getFirebaseConfig); only the ids matter offline.
  const firebaseConfig = { projectId, databaseURL: "", storageBucket: `${projectId}.appspot.com` };
  return {
    options,
    firebaseJson,
    codebases,
    codebase,
    project: { projectId, projectDir, firebaseConfig },
    sourceDir: join(projectDir, codebase.source!),
    runtimeFromConfig: codebase.runtime,
  };
}

/**
 * The params files of our codebase as a deploy reads them, relative to the project folder: functions/.env
 * here, counters/.env in an app's folder (docs/existing-app.md). Every fix names these, not a fixed path.
 */
export function envFiles(ctx: Context): { base: string; project: string; source: string } {
  const source = relative(ctx.options.projectDir, ctx.sourceDir) || ".";
  return { source, base: `${source}/.env`, project: `${source}/.env.${ctx.options.projectId}` };
}

export function firestoreConfig(ctx: Context): FirestoreConfig {
  const config = ctx.firebaseJson.firestore;
  if (config === undefined) throw new Error("firebase.json has no firestore section (rules and indexes are deployed with the functions)");
  if (Array.isArray(config)) {
    if (config.length !== 1) throw new Error("firebase.json lists several Firestore databases; the counters use one");
    return config[0]!;
  }
  return config;
}

/** The params' values in the env files of our source for the project, read with firebase-tools' own loader. */
export function userEnvs(ctx: Context, check: string): { values: Record<string, string> } | { failed: CheckResult } {
  const { projectId } = ctx.options;
  try {
    return { values: functionsEnv.loadUserEnvs({ functionsSource: ctx.sourceDir, projectId }) };
  } catch (error) {
    return { failed: { check, status: "fail", message: `reading ${envFiles(ctx).base} for ${projectId}: ${errorMessage(error)}` } };
  }
}
