// The rollup's log lines that people and tools filter on, by their exact messages: docs/operations.md's
// log-based metrics and alerts, `npm start`'s output (which shows the commits and hides the rest), and the
// benchmark (which adds up the operations lines). rollup/ops.ts writes them;
// functions/test/logs.emulator.test.ts holds them to these texts.

/** INFO, one per commit of a total by the rollup, with `counterId`, `total`, `lagMs` (the lag metric) and `path`. */
export const COMMITTED_MESSAGE = "rollup committed";
/** WARNING, one per invocation that failed and will be retried by the platform. */
export const THREW_MESSAGE = "rollup threw; the event is retried";
/** DEBUG, one per invocation: its outcome and what it cost (reads, writes, aggregations, waitMs, durationMs). */
export const OPS_MESSAGE = "rollup ops";
/** WARNING, one per promise an event took over because its owner left it past the stale time. */
export const TAKEOVER_MESSAGE = "taking over a stale rollup promise";
/** WARNING, one per overdue promise its owner's retry resumed. */
export const RESUMED_MESSAGE = "resuming an overdue rollup promise";
