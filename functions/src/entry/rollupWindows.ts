// rollupWindows, scheduled: every few minutes, commit again the windowed counters whose windows moved at a
// UTC midnight since their last commit (rollup/midnight.ts), so "today" goes back to 0 and the week moves on
// although nobody touched them, mirrors included. Shortly after midnight it finds every windowed counter
// with a window not at 0; the rest of the day, none (one read per run). Cost per counter it commits: one
// document read (the query), one aggregation per open day plus one for the total, one write, and its mirrors.
import { onSchedule } from "firebase-functions/v2/scheduler";
import { commitMovedWindows } from "../rollup/midnight";
import { findMovedWindows } from "../rollup/firestore-store";
import { countersDb, rollupDeps } from "./deps";
import { EVERY_FUNCTION } from "./options";

/** How often it runs (Cloud Scheduler; App Engine cron syntax): within this long after each UTC midnight. */
const WINDOWS_SCHEDULE = "every 10 minutes";

export const rollupWindows = onSchedule({ ...EVERY_FUNCTION, schedule: WINDOWS_SCHEDULE, timeoutSeconds: 300, memory: "256MiB", retryCount: 0 }, async () => {
  await commitMovedWindows(rollupDeps(), findMovedWindows(countersDb()));
});
