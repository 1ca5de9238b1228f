// Workload 11's move (documents.ts): a counter kept by recount grows past a small RECOUNT_LIMIT, set for its
// phase only (documents-load.ts sets it in this process's environment, where its functions read it as they
// run), and moves to records (functions/src/documents/move.ts). This runs beside the phase's load: it watches
// the parent's `kept`, and once the counter is "moving" and the move may start, it runs the product's own
// sweep (`rollupSweep` of the built main entry, a fresh copy, loaded with the phase's params: in production
// Cloud Scheduler runs it every 5 minutes; here as soon as the move may start, then every second until the
// counter is kept by records) while the comments keep changing. What each run of the sweep did in Firestore is
// counted on its calls (delivery/op-count.ts, with the queries' and transactions' reads) and logged as a
// "rollup ops" line, so the cost tables add it to the phase's row. The phase's other measurements are
// documents-load.ts's: drift against the documents at the end, and every parent version before the move
// ended exact at its read time (documents-measure.ts, recountStatesOff).
import { Timestamp, type DocumentSnapshot } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { microsCeil } from "../../../functions/src/model/time";
import type { Counter } from "../counters";
import { counting } from "../delivery/op-count";
import { freshCopy, productSource } from "../delivery/wrapped";
import { sleep } from "../pace";

/**
 * How long after the move began its step may start: 2 × RECOUNT_MEMO_MS (functions/src/rollup/plan.ts), until
 * no instance can still decide a change from a memory of the parent from before. A sweep before then does
 * nothing of the move (the runs here would only cost their fixed reads).
 */
export const MOVE_MAY_START_MS = 20_000;

/** What the move came to: when it began and ended (parent update times, µs), its steps and what they did. */
export interface MoveResult {
  /** The commit that found more documents than the limit (`kept: "moving"`), and the one that ended the move (`kept: "records"`). */
  movingAtUs: number | null;
  recordsAtUs: number | null;
  /** The sweep's runs until the move ended, and the document reads and writes they made in all (their fixed ones too). */
  steps: number;
  reads: number;
  writes: number;
  /** Wall time the runs took, ms (what the sweep's instance is billed for them). */
  runningMs: number;
}

/** Longest the move may take once it may start (the load keeps writing meanwhile). */
const MOVE_TIMEOUT_MS = 60_000;

/** The product's scheduled sweep, as its scheduler runs it (firebase-functions v2 keeps the handler as `run`). */
type Sweep = { run: (event: { jobName: string; scheduleTime: string }) => Promise<unknown> };

/** Watches `counter`'s parent and runs the sweep once the move may start (header). */
export async function driveMove(counter: Counter, result: MoveResult, loadEndedMs: () => number | null): Promise<void> {
  let kept: string | null = null;
  let failure: Error | undefined;
  const stop = counter.parent.onSnapshot(
    (snap: DocumentSnapshot) => {
      const value = snap.exists ? (snap.get("kept") as unknown) : undefined;
      if (typeof value !== "string" || snap.updateTime === undefined) return;
      // `rollup.movingSince` is the commit time of the count that began the move (a server timestamp), on every later state too.
      const since = snap.get("rollup.movingSince") as unknown;
      if (result.movingAtUs === null && since instanceof Timestamp) result.movingAtUs = microsCeil(since);
      if (value === "records" && result.recordsAtUs === null) result.recordsAtUs = microsCeil(snap.updateTime);
      kept = value;
    },
    (error) => {
      failure = error;
    },
  );
  try {
    // Until the counter moves: the load may end first (then there is no move to run: the phase says so).
    while (result.movingAtUs === null) {
      if (failure !== undefined) throw failure;
      const ended = loadEndedMs();
      if (ended !== null && Date.now() > ended + 5_000) return;
      await sleep(100);
    }
    const sweep = freshCopy(productSource().file, productSource().root).rollupSweep as Sweep | undefined;
    if (typeof sweep?.run !== "function") throw new Error("the main entry exports no rollupSweep to run");
    await sleep(Math.max(0, result.movingAtUs / 1000 + MOVE_MAY_START_MS - Date.now()));
    const gaveUpAt = Date.now() + MOVE_TIMEOUT_MS;
    while (kept !== "records") {
      if (failure !== undefined) throw failure;
      if (Date.now() > gaveUpAt) throw new Error(`the move of ${counter.id} did not end within ${MOVE_TIMEOUT_MS} ms of when it could start`);
      const started = performance.now();
      const run = await counting(() => sweep.run({ jobName: "bench-move", scheduleTime: new Date().toISOString() }));
      const ms = performance.now() - started;
      if ("error" in run) throw run.error;
      result.steps++;
      result.runningMs += ms;
      const reads = run.ops.reads + run.ops.otherReads;
      result.reads += reads;
      result.writes += run.ops.writes;
      // The sweep's invocation, as the cost tables count one (its own function: its instance time is its running time).
      logger.debug("rollup ops", { counterId: counter.id, outcome: "the sweep's run (the move)", reads, writes: run.ops.writes, aggregations: 0, waitMs: 0, durationMs: Math.round(ms) });
      // The listener sees the commit that ends the move a moment after it.
      const waited = Date.now();
      while ((kept as string | null) !== "records" && Date.now() - waited < 1000) await sleep(50);
    }
  } finally {
    stop();
  }
}

export function newMoveResult(): MoveResult {
  return { movingAtUs: null, recordsAtUs: null, steps: 0, reads: 0, writes: 0, runningMs: 0 };
}
