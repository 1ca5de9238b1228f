// The rollup's dependencies for the admin entry's runs (the backfill and reconcile of document counters kept
// by recount: documents/recount-now.ts): the rollup's Firestore store with the MIRRORS targets and the
// LEADERBOARDS board each commit carries the entry of (leaderboard/entry-writes.ts), the interval a
// commit records, and the recount rules, all from the run's settings (the params' values it was given). The
// deployed functions build theirs from the deployed params (entry/deps.ts).
import type { Firestore } from "firebase-admin/firestore";
import { recountQueryFor } from "../documents/recount";
import { pause } from "../model/backoff";
import type { DocumentRule } from "../model/document-rules";
import type { Settings } from "../model/settings";
import { firestoreRollupStore } from "../rollup/firestore-store";
import { staleAfterMsFor } from "../rollup/plan";
import type { RollupDeps } from "../rollup/types";

export function toolRollupDeps(db: Firestore, settings: Settings, rules: readonly DocumentRule[]): () => RollupDeps {
  return () => {
    const intervalMs = settings.rollupIntervalMs();
    return {
      store: firestoreRollupStore(db, { mirrors: (counterId) => settings.mirrorsFor(counterId), boards: (counterId) => settings.boardFor(counterId) }),
      intervalMs,
      staleAfterMs: staleAfterMsFor(intervalMs),
      nowMs: Date.now,
      sleep: pause,
      recount: { query: (counterId) => recountQueryFor(rules, counterId), limit: settings.recountLimit() },
    };
  };
}
