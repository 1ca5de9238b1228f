// The exported rollup handlers, run in this process with firebase-functions-test, for the workloads that
// deliver events themselves. They use the admin SDK's default app, set up here for WRAPPED_PROJECT: the
// emulator's own triggers serve only BENCH_PROJECT, so nothing else runs these events.
//
// One instance = one copy of the code that exports the function, loaded afresh: ours is the package's main
// entry (`@firestore-exact-counter/functions`, as an app re-exports it, from the built package) with every
// module of the package's own code evaluated again, the naive one its codebase's modules. So module state,
// such as the rollup's memos of claims, leading edges and committed parents (functions/src/entry/rollupTotal.ts), is per
// instance, as on Cloud Run. The copies share this process's dependencies (firebase-admin and its Firestore
// client, firebase-functions) and its CPU, which Cloud Run instances would not.
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { getApps, initializeApp, type App } from "firebase-admin/app";
import { getFirestore, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import functionsTest from "firebase-functions-test";
import type { CloudEvent, CloudFunction } from "firebase-functions/v2";
import type { Rollup } from "../counters";
import { WRAPPED_PROJECT } from "../env";
import { entryFile, packageDir } from "../product";
import type { Handler } from "./deliverer";
import type { RecordedEvent } from "./events";

export interface WrappedFunctions {
  /** The default app, for WRAPPED_PROJECT, and its Firestore: where these workloads' counters live. */
  app: App;
  db: Firestore;
  /** `count` instances of a rollup's exported trigger, each with a module (and memory) of its own. */
  instances(rollup: Rollup, count: number): Handler<RecordedEvent>[];
  /**
   * `count` instances of any document trigger: the one `pick` finds in a fresh copy of `source` (workload 11's
   * document triggers); each resolves with what the handler answers.
   */
  triggers(source: TriggerSource, pick: (module: TriggerModule) => unknown, count: number): ((event: TriggerInput) => Promise<unknown>)[];
  cleanup(): void;
}

export type TriggerModule = Record<string, unknown>;

/** Where a trigger is exported, and the folder of the code each instance evaluates afresh. */
export interface TriggerSource {
  file: string;
  root: string;
}

/** A document write as a trigger of this process is handed it: the real snapshots, the wildcards' values, the event's id and time. */
export interface TriggerInput {
  before: DocumentSnapshot;
  after: DocumentSnapshot;
  params: Record<string, string>;
  eventId: string;
  /** RFC 3339 with nanoseconds: the write's commit time. */
  time: string;
}

/** The product as an app loads it: its main entry (the built package), every module of the package's own code afresh. */
export function productSource(): TriggerSource {
  return { file: entryFile("."), root: packageDir() };
}

/** The naive codebase's `src/<name>.ts`, its modules afresh. */
export function naiveSource(name: string): TriggerSource {
  return { file: join(NAIVE_CODEBASE, "src", `${name}.ts`), root: NAIVE_CODEBASE };
}

/** Where each rollup's trigger is exported. */
function exporters(): Record<Rollup, TriggerSource & { name: string }> {
  return {
    ours: { ...productSource(), name: "rollupTotal" },
    naive: { ...naiveSource("naive"), name: "naiveRollupTotal" },
  };
}

const NAIVE_CODEBASE = join(dirname(__dirname), "naive");

const load = createRequire(__filename);

/**
 * A fresh evaluation of `file` and of every module below `root` it loads (but those of its node_modules,
 * which stay shared); the module cache is left as it was.
 */
export function freshCopy(file: string, root: string): TriggerModule {
  const own = (path: string) => path.startsWith(root + sep) && !path.includes(`${sep}node_modules${sep}`);
  const cached = Object.entries(load.cache).filter(([path]) => own(path));
  for (const [path] of cached) delete load.cache[path];
  try {
    return load(file) as TriggerModule;
  } finally {
    for (const path of Object.keys(load.cache)) if (own(path)) delete load.cache[path];
    for (const [path, module] of cached) load.cache[path] = module;
  }
}

export function wrappedFunctions(): WrappedFunctions {
  const fft = functionsTest({ projectId: WRAPPED_PROJECT });
  const app = getApps().find((a) => a.name === "[DEFAULT]") ?? initializeApp({ projectId: WRAPPED_PROJECT });
  if (app.options.projectId !== WRAPPED_PROJECT) throw new Error(`the default app is for ${app.options.projectId}, not ${WRAPPED_PROJECT}`);

  const wrap = (fn: CloudFunction<CloudEvent<unknown>>) => {
    const wrapped = fft.wrap(fn);
    // firebase-functions-test types the result as `any`: what the handler answers.
    return (event: TriggerInput): Promise<unknown> =>
      wrapped({
        data: fft.makeChange(event.before, event.after),
        // firebase-functions-test 3 does not derive params from the document path for v2 functions: pass them.
        params: event.params,
        id: event.eventId,
        time: event.time,
      }) as Promise<unknown>;
  };
  const triggers = (source: TriggerSource, pick: (module: TriggerModule) => unknown, count: number) =>
    Array.from({ length: count }, () => {
      const fn = pick(freshCopy(source.file, source.root));
      if (typeof fn !== "function") throw new Error(`${source.file} does not export the trigger asked for`);
      return wrap(fn as CloudFunction<CloudEvent<unknown>>);
    });

  return {
    app,
    db: getFirestore(app),
    instances(rollup, count) {
      const { name, ...source } = exporters()[rollup];
      return triggers(source, (module) => module[name], count).map((handler) => async (event: RecordedEvent) => {
        const { before, after, eventId, time } = event;
        await handler({ before, after, params: { counterId: event.record.counterId, shardId: String(event.record.shard) }, eventId, time });
      });
    },
    triggers,
    cleanup: () => fft.cleanup(),
  };
}
