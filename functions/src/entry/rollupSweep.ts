// rollupSweep, scheduled: every few minutes, fulfil the rollup promises that nobody else will (an owner
// whose event the platform gave up on, on a counter that got no later increment: rollup/sweep.ts), then
// resume deletions whose cleanup lost its runner (counters/deletion.ts), and move document counters that grew
// past RECOUNT_LIMIT from recount to records (documents/move.ts); and check that the params the
// admin entry compares its copy with are the deployed ones (publish-params.ts). Cost per run: the sweep's
// mark (one read, one write), one query for the promises that came due since the last run and one for the
// previous version's leases (each billed one read when it finds nothing), plus one aggregation per promise
// found (a chain that ended quietly: nothing written), and one read of the published params; with
// LEADERBOARDS set, the same for the leaderboards' promises (a mark and one query more).
import { onSchedule } from "firebase-functions/v2/scheduler";
import { resumeStrandedCleanups } from "../counters/deletion";
import { sweepRollups } from "../rollup/sweep";
import { documentNewCounterRule, documentRules, leaderboardRules } from "../config/read";
import { firestoreDocumentStore } from "../documents/firestore-store";
import { moveCounters } from "../documents/move";
import { boardDeps, countersDb, rollupDeps } from "./deps";
import { publishParams } from "./publish-params";
import { EVERY_FUNCTION } from "./options";

/** How often the sweep runs (Cloud Scheduler; App Engine cron syntax). A literal: the SDK takes no param here. */
const SWEEP_SCHEDULE = "every 5 minutes";

export const rollupSweep = onSchedule({ ...EVERY_FUNCTION, schedule: SWEEP_SCHEDULE, timeoutSeconds: 300, memory: "256MiB", retryCount: 0 }, async () => {
  await publishParams({ recheck: true, by: "rollupSweep" });
  await sweepRollups(rollupDeps());
  // The leaderboards' summaries are rolled up the same way, with promises of their own (leaderboard/board-store.ts).
  if (leaderboardRules().length > 0) await sweepRollups(boardDeps());
  await resumeStrandedCleanups(countersDb(), { nowMs: Date.now });
  // Document counters moving from recount to records (documents/move.ts): a step of each, within the run's time.
  const rules = documentRules();
  if (rules.length > 0) {
    await moveCounters({ rollup: () => rollupDeps(), store: firestoreDocumentStore(countersDb()), rules, newCounter: (id) => documentNewCounterRule()(id) }, { limit: 20, budgetMs: 120_000 });
  }
});
