// rollupSweep, scheduled: every few minutes, finish the rollup claims that nobody else will (a claimer
// whose event the platform gave up on, on a counter that got no later increment: rollup/sweep.ts), then
// resume deletions whose cleanup lost its runner (counters/deletion.ts); and check that the params the
// admin entry compares its copy with are the deployed ones (publish-params.ts). Cost per run: one
// collection-group query each (billed one read when it finds nothing), plus what each claim it finishes
// costs (a parent read, a sum, a commit, the lease deleted), and one read of the published params.
import { onSchedule } from "firebase-functions/v2/scheduler";
import { resumeStrandedCleanups } from "../counters/deletion";
import { sweepStaleClaims } from "../rollup/sweep";
import { countersDb, rollupDeps } from "./deps";
import { publishParams } from "./publish-params";
import { EVERY_FUNCTION } from "./options";

/** How often the sweep runs (Cloud Scheduler; App Engine cron syntax). A literal: the SDK takes no param here. */
const SWEEP_SCHEDULE = "every 5 minutes";

export const rollupSweep = onSchedule({ ...EVERY_FUNCTION, schedule: SWEEP_SCHEDULE, timeoutSeconds: 300, memory: "256MiB", retryCount: 0 }, async () => {
  await publishParams({ recheck: true, by: "rollupSweep" });
  await sweepStaleClaims(rollupDeps());
  await resumeStrandedCleanups(countersDb(), { nowMs: Date.now });
});
