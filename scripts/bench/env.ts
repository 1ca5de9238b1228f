// Where the benchmark runs: its emulator config and ports (firebase.bench.json), its project ids, and
// the functions' params, read from the same files the functions emulator reads.
import { join } from "node:path";
import { EMULATORS, REPO_ROOT } from "../lib/firebase-cli";
import { functionsParams } from "../../cli/src/lib/functions-env";

/** Two codebases (product + naive) and ports of their own, so `npm start`/`npm test` can run meanwhile. */
export const BENCH_CONFIG = join(REPO_ROOT, "scripts", "bench", "firebase.bench.json");
export const BENCH_EMULATORS = EMULATORS;
/** The project the functions emulator serves: its triggers fire on this project's writes. */
export const BENCH_PROJECT = "demo-counter-bench";
/**
 * Where the benchmark delivers events itself (production-like delivery, workload 3: firebase-functions-test),
 * another project of the same Firestore emulator: the emulator's triggers only fire for BENCH_PROJECT,
 * so no event runs twice.
 */
export const WRAPPED_PROJECT = "demo-counter-bench-wrapped";
/**
 * Where workload 10 runs the midnight commit (workloads/windows.ts): a project of its own, so the commit's
 * query finds exactly the workload's windowed counters, and no trigger runs on their writes.
 */
export const MIDNIGHT_PROJECT = "demo-counter-bench-midnight";
/**
 * Where workload 11 times the backfill (workloads/documents-backfill.ts): a project of its own, so the backfill
 * finds exactly its documents, no trigger runs on its writes, and no function has published params there.
 */
export const BACKFILL_PROJECT = "demo-counter-bench-backfill";

/**
 * Puts the functions' params into process.env as the functions emulator does (functions/.env, then
 * .env.local on top), without overriding variables already set. Needed by the wrapped handlers
 * (delivery/wrapped.ts), whose params are read from process.env, and by the report (the rollup interval).
 */
export function loadFunctionParams(): void {
  for (const [name, value] of Object.entries(functionsParams([".env", ".env.local"], join(REPO_ROOT, "functions")))) process.env[name] ??= value;
}

/** ROLLUP_INTERVAL_MS as the functions see it (after loadFunctionParams). */
export function rollupIntervalMs(): number {
  const value = Number(process.env.ROLLUP_INTERVAL_MS);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`ROLLUP_INTERVAL_MS must be a positive integer (functions/.env), got ${process.env.ROLLUP_INTERVAL_MS}`);
  }
  return value;
}

/** host:port of an emulator from the variables `emulators:exec` sets; fails loudly outside it. */
export function emulatorHost(variable: "FIRESTORE_EMULATOR_HOST" | "FIREBASE_AUTH_EMULATOR_HOST"): string {
  const host = process.env[variable];
  if (host === undefined || host === "") {
    throw new Error(`${variable} is not set: run the benchmark with \`npm run bench\`, which starts the emulators`);
  }
  return host;
}
