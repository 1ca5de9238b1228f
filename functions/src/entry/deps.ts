// What the deployed functions run with, built in one place: the app's default admin app (initialized here
// at a function's first run when the app has none, never at import), the counters' database (the
// DATABASE_ID param, the same one the rollup trigger listens to, so a named database gets the callables'
// writes and its rollups in one place) and the rollup's dependencies (the Firestore store with the MIRRORS targets,
// ROLLUP_INTERVAL_MS as read now, the real clock). Each entry file reads only the params it uses
// (config/read.ts): a bad callable setting never stops the rollup, nor the other way round.
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import { defaultApp } from "../default-app";
import { databaseId } from "../config/params";
import { rollupBoardOf, rollupConfig, rollupMirrorTargets } from "../config/read";
import { pause } from "../model/backoff";
import { firestoreRollupStore } from "../rollup/firestore-store";
import { firestoreBoardStore } from "../leaderboard/board-store";
import type { RollupDeps } from "../rollup/types";

/** The counters' database; "(default)" unless DATABASE_ID names another one. */
export function countersDb(): Firestore {
  return getFirestore(defaultApp(), databaseId.value());
}

/**
 * The rollup's dependencies as of now. `memos`: the instance's commits at once and last known parents, which the
 * trigger's module keeps (one copy per instance); the sweep has none.
 */
export function rollupDeps(memos: Pick<RollupDeps, "leads" | "parents"> = {}): RollupDeps {
  const { intervalMs, staleAfterMs, growth, chainBudgetMs, recount } = rollupConfig();
  return {
    store: firestoreRollupStore(countersDb(), { mirrors: rollupMirrorTargets, boards: rollupBoardOf }),
    intervalMs,
    staleAfterMs,
    growth,
    chainBudgetMs,
    recount,
    nowMs: Date.now,
    sleep: pause,
    ...memos,
  };
}

/**
 * The dependencies of a leaderboard's rollup (entry/rollupBoard.ts, and the sweep): the rollup's own settings
 * over the boards' store (leaderboard/board-store.ts); no growth (a board's entries are not shards).
 */
export function boardDeps(memos: Pick<RollupDeps, "leads" | "parents"> = {}): RollupDeps {
  const { intervalMs, staleAfterMs, chainBudgetMs } = rollupConfig();
  return { store: firestoreBoardStore(countersDb()), intervalMs, staleAfterMs, chainBudgetMs, nowMs: Date.now, sleep: pause, ...memos };
}
