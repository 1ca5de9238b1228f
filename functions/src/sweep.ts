// The scheduled sweep (counters/rollup/sweep.ts): every few minutes, finish the rollup claims that
// nobody else will — a claimer whose event the platform gave up on, on a counter that got no later
// increment. Cost per run: one collection-group query (billed one read when it finds nothing), plus
// what each claim it finishes costs (a parent read, a sum, a commit, the lease deleted). Then it resumes
// deletions whose cleanup lost its runner: one more collection-group query over the deletion markers.
import { onSchedule } from "firebase-functions/v2/scheduler";
import { rollupConfig, rollupMirrorTargets } from "./config";
import { countersDb } from "./firestore";
import { pause } from "./counters/backoff";
import { firestoreRollupStore, sweepStaleClaims } from "./counters/rollup";
import { resumeStrandedCleanups } from "./counters/cleanup";

/** How often the sweep runs (Cloud Scheduler; App Engine cron syntax). A literal: the SDK takes no param here. */
export const SWEEP_SCHEDULE = "every 5 minutes";

export const rollupSweep = onSchedule({ schedule: SWEEP_SCHEDULE, timeoutSeconds: 300, memory: "256MiB", retryCount: 0 }, async () => {
  const { intervalMs, staleAfterMs } = rollupConfig();
  await sweepStaleClaims({
    store: firestoreRollupStore(countersDb(), { mirrors: rollupMirrorTargets }),
    intervalMs,
    staleAfterMs,
    nowMs: Date.now,
    sleep: pause,
  });
  // Deletions whose cleanup lost its runner (counters/cleanup.ts): one more query, usually empty.
  await resumeStrandedCleanups(countersDb(), { nowMs: Date.now });
});
