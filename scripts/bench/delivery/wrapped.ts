// The exported rollup handlers, run in this process with firebase-functions-test, for the workloads that
// deliver events themselves. They use the admin SDK's default app, set up here for WRAPPED_PROJECT: the
// emulator's own triggers serve only BENCH_PROJECT, so nothing else runs these events.
//
// One instance = one copy of the function's module (functions/src/entry/rollupTotal.ts, or the naive one), loaded
// afresh: module state such as the rollup's in-memory claim memo is per instance, as on Cloud Run. The
// copies share this process's Firestore client and CPU, which Cloud Run instances would not.
import { createRequire } from "node:module";
import { getApps, initializeApp } from "firebase-admin/app";
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import functionsTest from "firebase-functions-test";
import type { CloudEvent, CloudFunction } from "firebase-functions/v2";
import type { Rollup } from "../counters";
import { WRAPPED_PROJECT } from "../env";
import type { Handler } from "./deliverer";
import type { RecordedEvent } from "./events";

export interface WrappedFunctions {
  /** WRAPPED_PROJECT's Firestore: where these workloads' counters live. */
  db: Firestore;
  /** `count` instances of a rollup's exported trigger, each with a module (and memory) of its own. */
  instances(rollup: Rollup, count: number): Handler<RecordedEvent>[];
  cleanup(): void;
}

type TriggerModule = Record<string, unknown>;

/** Where each rollup's trigger is exported: entry/rollupTotal.ts exports rollupTotal without index.ts's initializeApp. */
const MODULES: Record<Rollup, { path: string; name: string }> = {
  ours: { path: "../../../functions/src/entry/rollupTotal", name: "rollupTotal" },
  naive: { path: "../naive/src/naive", name: "naiveRollupTotal" },
};

const load = createRequire(__filename);

/** A fresh evaluation of a module (its dependencies stay shared); the cached copy stays as it was. */
function freshCopy(path: string): TriggerModule {
  const resolved = load.resolve(path);
  const cached = load.cache[resolved];
  delete load.cache[resolved];
  try {
    return load(resolved) as TriggerModule;
  } finally {
    if (cached === undefined) delete load.cache[resolved];
    else load.cache[resolved] = cached;
  }
}

export function wrappedFunctions(): WrappedFunctions {
  const fft = functionsTest({ projectId: WRAPPED_PROJECT });
  const app = getApps().find((a) => a.name === "[DEFAULT]") ?? initializeApp({ projectId: WRAPPED_PROJECT });
  if (app.options.projectId !== WRAPPED_PROJECT) throw new Error(`the default app is for ${app.options.projectId}, not ${WRAPPED_PROJECT}`);

  const wrap = (fn: CloudFunction<CloudEvent<unknown>>): Handler<RecordedEvent> => {
    const wrapped = fft.wrap(fn);
    return async (event) => {
      // firebase-functions-test types the result as `any`; the handlers return nothing we use.
      await (wrapped({
        data: fft.makeChange(event.before, event.after),
        // firebase-functions-test 3 does not derive params from the document path for v2 functions: pass them.
        params: { counterId: event.record.counterId, shardId: String(event.record.shard) },
        id: event.eventId,
        time: event.time,
      }) as Promise<unknown>);
    };
  };

  return {
    db: getFirestore(app),
    instances(rollup, count) {
      const { path, name } = MODULES[rollup];
      return Array.from({ length: count }, () => {
        const fn = freshCopy(path)[name];
        if (typeof fn !== "function") throw new Error(`${path} does not export a function ${name}`);
        return wrap(fn as CloudFunction<CloudEvent<unknown>>);
      });
    },
    cleanup: () => fft.cleanup(),
  };
}
