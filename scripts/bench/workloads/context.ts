// What every workload gets: the admin SDK on the project the functions emulator serves, the options,
// the rollup interval, a run id that keeps this run's counter ids apart from earlier runs', and how it
// announces its steps (say.ts).
import type { App } from "firebase-admin/app";
import type { Firestore } from "firebase-admin/firestore";
import { signIn, type Client } from "../../lib/client";
import { withConcurrency } from "../../lib/concurrency";
import { emulatorHosts } from "../../lib/emulator-hosts";
import { forgetPhaseShapes } from "../callable";
import { createBenchCounter, type Counter, type Rollup } from "../counters";
import { BENCH_PROJECT } from "../env";
import type { BenchOptions } from "../options";
import { say } from "../say";

export interface BenchContext {
  /** The admin SDK's app on the project the functions emulator serves, and its Firestore. */
  app: App;
  db: Firestore;
  options: BenchOptions;
  intervalMs: number;
  runId: string;
}

/** Announces a step ("… label"), runs it and says how long it took. */
export async function step<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  say(`… ${label}`);
  const result = await work();
  say(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

/** `<key>-<rollup>-<runId>-<index>`: a phase's counters share everything up to the index. */
export function counterIdFor(ctx: BenchContext, key: string, rollup: string, index = 0): string {
  return `${key}-${rollup}-${ctx.runId}-${index}`;
}

/** The part of a counter id its phase's counters share: how the phase's "rollup ops" lines are found. */
export function phasePrefixOf(counterId: string): string {
  return counterId.slice(0, counterId.lastIndexOf("-") + 1);
}

/**
 * Creates `count` counters of `shards` shards for one phase (ids from `first` on; windowed if asked), 8 at a
 * time, and forgets their shapes: the phase's calls start on a callable instance that has not seen them (callable.ts).
 */
export async function createBenchCounters(
  ctx: BenchContext,
  key: string,
  rollup: Rollup,
  count: number,
  shards: number,
  { app = ctx.app, first = 0, windowed = false }: { app?: App; first?: number; windowed?: boolean } = {},
): Promise<Counter[]> {
  const counters = await withConcurrency(
    8,
    Array.from({ length: count }, (_, i) => () => createBenchCounter(app, rollup, counterIdFor(ctx, key, rollup, first + i), shards, { windowed })),
  );
  forgetPhaseShapes(counters);
  return counters;
}

/** A new user of the Firebase JS SDK, signed in through the Auth emulator, calling the functions emulator's callables. */
export async function signedInClient(): Promise<Client> {
  return signIn({ projectId: BENCH_PROJECT, hosts: await emulatorHosts() });
}
