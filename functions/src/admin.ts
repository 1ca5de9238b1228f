// @firestore-exact-counter/functions/admin: the counters' operations for an app's own Cloud Functions and
// scripts, with admin rights and no callable round trip (docs/admin.md, "From your own functions"): the same
// validation, param rules, answers and error codes as the callables (admin/operations.ts); a refusal throws
// a CounterError whose `code` is the callable's. And the maintenance runs the firestore-exact-counter
// command line is made of (admin/maintenance.ts, admin/documents.ts, admin/leaderboards.ts): reconcile,
// migrateExtension, backfillDocuments and backfillBoard; and a counter's rank on its leaderboard (rankOf).
// Importing it deploys nothing: no function, no param, no initializeApp; the default admin app is found (or
// initialized) on the first call, unless the call names an app.
export { createCounter, incrementCounter, setMember, resetCounter, reshardCounter, deleteCounter } from "./admin/operations";
export { reconcile, countCounters, migrateExtension, type ToolOptions } from "./admin/maintenance";
export { backfillDocuments, type BackfillDocumentsOptions } from "./admin/documents";
export { rankOf, backfillBoard } from "./admin/leaderboards";
export type { AdminOptions } from "./admin/options";

export { CounterError, type CounterErrorCode } from "./model/errors";
export type { Time } from "./model/time";
export type { CreateResult } from "./counters/create";
export type { IncrementResult } from "./counters/increment";
export type { SetMemberResult } from "./counters/members";
export type { CounterReport, ReconcileStatus } from "./reconcile/counter";
export { STUCK_INTERVALS, STUCK_MARGIN_MS, stuckAfterMsFor, type ReconcileOptions } from "./reconcile/run";
export type { MigrationItem, MigrationScan } from "./extension/migrate";
export type { FoldReport } from "./extension/fold";
export type { BackfillProgress, BackfillReport, RuleBackfill } from "./documents/backfill";
export type { RankOf } from "./leaderboard/rank";
export type { BoardBackfillReport } from "./leaderboard/backfill";
