// rollupWindows, scheduled: at every UTC midnight and every 10 minutes after, commit again the windowed
// counters whose windows moved at a UTC midnight since their last commit (rollup/midnight.ts), so "today"
// goes back to 0 and the week moves on although nobody touched them, mirrors included. The run at 00:00 finds
// every windowed counter with a window not at 0; the rest of the day, none (one read per run). Cost per
// counter it moves: one document read (the query), one write (the parent), and with mirrors one read per
// target document and a write only for a target whose values changed.
import { onSchedule } from "firebase-functions/v2/scheduler";
import { commitMidnight } from "../rollup/midnight";
import { rollupDeps } from "./deps";
import { EVERY_FUNCTION } from "./options";

/**
 * When it runs (Cloud Scheduler, unix-cron in WINDOWS_TIME_ZONE): on the minute of every UTC midnight, so
 * that the windows move within minutes of it, and every 10 minutes after for what a run left. A literal:
 * the SDK takes no param here.
 */
const WINDOWS_SCHEDULE = "*/10 * * * *";
const WINDOWS_TIME_ZONE = "UTC";

/** Long enough for the midnight commit's budget (MIDNIGHT_DEFAULTS.budgetMs) and the moves still running at its end. */
const WINDOWS_TIMEOUT_SECONDS = 540;

export const rollupWindows = onSchedule(
  // One CPU: the run keeps 64 Firestore calls in flight and decodes pages of 500 parents.
  { ...EVERY_FUNCTION, schedule: WINDOWS_SCHEDULE, timeZone: WINDOWS_TIME_ZONE, timeoutSeconds: WINDOWS_TIMEOUT_SECONDS, memory: "512MiB", cpu: 1, retryCount: 0 },
  async () => {
    await commitMidnight(rollupDeps());
  },
);
