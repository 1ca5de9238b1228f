// What the deployed functions run with, built in one place: the counters' database (the DATABASE_ID
// param, the same one the rollup trigger listens to, so a named database gets the callables' writes and
// its rollups in one place) and the rollup's dependencies (the Firestore store with the MIRRORS targets,
// ROLLUP_INTERVAL_MS as read now, the real clock). Each entry file reads only the params it uses
// (config/read.ts): a bad callable setting never stops the rollup, nor the other way round.
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import { databaseId } from "../config/params";
import { rollupConfig, rollupMirrorTargets } from "../config/read";
import { pause } from "../counters/backoff";
import { firestoreRollupStore } from "../rollup/firestore-store";
import type { RollupDeps } from "../rollup/types";

/** The counters' database; "(default)" unless DATABASE_ID names another one. */
export function countersDb(): Firestore {
  return getFirestore(databaseId.value());
}

/**
 * The rollup's dependencies as of now. `memos`: the instance's held claims and leading edges, which the
 * trigger's module keeps (one copy per instance); the sweep has none.
 */
export function rollupDeps(memos: Pick<RollupDeps, "claims" | "leads"> = {}): RollupDeps {
  const { intervalMs, staleAfterMs, growth } = rollupConfig();
  return {
    store: firestoreRollupStore(countersDb(), { mirrors: rollupMirrorTargets }),
    intervalMs,
    staleAfterMs,
    growth,
    nowMs: Date.now,
    sleep: pause,
    ...memos,
  };
}
