// A document counter kept by recount whose documents grew past RECOUNT_LIMIT moves to records, by itself and
// for good (docs/documents.md, "Two ways to keep a count"). The recount that found more documents than the
// limit counted them all once and committed `kept: "moving"` (rollup/commit.ts). From then on:
// - the trigger takes every change both ways (documents/trigger.ts): the rollup still recounts the counter (in
//   full: its total stays exact), and the change's record and shard delta are written as for records;
// - the sweep (rollupSweep, every 5 minutes) runs this: once no instance can still decide a change from a
//   memory of the parent from before the move (rollup/plan.ts, RECOUNT_MEMO_MS: after that, every change is
//   recorded), the counter's backfill observes every one of its documents by records (backfill.ts, `records`),
//   so that a record stands for each; then one commit ends the move: the sum of the shards (which the records
//   hold exactly: each record and its delta are one write) becomes the total, `kept: "records"`. From then on
//   rollupTotal keeps it, as any counter kept by records. A move that ran out of time goes on at the next run,
//   from where it stopped.
import * as logger from "firebase-functions/logger";
import { sumAndCommit } from "../rollup/commit";
import { noOps } from "../rollup/ops";
import { RECOUNT_MEMO_MS } from "../rollup/plan";
import type { RollupDeps, Run } from "../rollup/types";
import type { DocumentRule } from "../model/document-rules";
import type { NewCounterRule } from "../model/new-counter";
import { backfillDocuments } from "./backfill";
import type { DocumentSource, DocumentStore } from "./store";

export interface MoveDeps {
  rollup: () => RollupDeps;
  store: DocumentStore & DocumentSource;
  rules: readonly DocumentRule[];
  newCounter: NewCounterRule;
}

/** How a step of a move went: done (kept by records now), not yet (within its memory window), paused (out of time, at `position`), not moving. */
export type MoveStep = { kind: "done"; total: number } | { kind: "not-yet" } | { kind: "paused"; position: string | undefined } | { kind: "not-moving" };

/** Attempts of the ending commit when the parent keeps changing (the rollup recounts it meanwhile). */
const ATTEMPTS = 8;

class OutOfTime extends Error {
  constructor(readonly position: string | undefined) {
    super("out of time");
  }
}

/**
 * One step of `counterId`'s move (see the header), within `budgetMs`, going on from where an earlier step of
 * the same move stopped (`positions`: a backfill position per move, named by its counter and its start).
 */
export async function moveToRecords(deps: MoveDeps, counterId: string, options: { budgetMs: number; positions?: Map<string, string | undefined> }): Promise<MoveStep> {
  const rollup = deps.rollup();
  const parent = await rollup.store.readParent(counterId);
  if (!parent.view.parentExists || parent.view.kept !== "moving") return { kind: "not-moving" };
  const sinceUs = parent.view.movingSinceUs ?? 0;
  const move = `${counterId}@${sinceUs}`;
  const startAfter = options.positions?.get(move);
  const step = await moveStep(deps, rollup, counterId, sinceUs, startAfter, options.budgetMs);
  if (step.kind === "paused") options.positions?.set(move, step.position);
  else options.positions?.delete(move);
  return step;
}

async function moveStep(deps: MoveDeps, rollup: RollupDeps, counterId: string, sinceUs: number, startAfter: string | undefined, budgetMs: number): Promise<MoveStep> {
  if (rollup.nowMs() * 1000 < sinceUs + 2 * RECOUNT_MEMO_MS * 1000) return { kind: "not-yet" };
  const started = rollup.nowMs();
  let position = startAfter;
  try {
    const report = await backfillDocuments(deps.store, deps.rules, {
      counter: counterId,
      records: true,
      force: true,
      newCounter: deps.newCounter,
      ...(startAfter === undefined ? {} : { startAfter }),
      onProgress: (progress) => {
        position = progress.position;
        if (rollup.nowMs() - started > budgetMs) throw new OutOfTime(position);
      },
    });
    // What could not be done now (contention): the next run goes over the counter again.
    if (report.rules.some((r) => r.problems.length > 0)) return { kind: "paused", position: undefined };
  } catch (error) {
    if (error instanceof OutOfTime) return { kind: "paused", position: error.position };
    throw error;
  }
  const run: Run = { deps: { ...rollup, leads: undefined, parents: undefined, onStage: undefined }, ops: noOps() };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = await rollup.store.readParent(counterId);
    if (!now.view.parentExists || now.view.kept !== "moving") return { kind: "not-moving" };
    const step = await sumAndCommit(run, { counterId, parent: now, targetUs: 0, leadWrittenAtUs: null, sinceUs: rollup.nowMs() * 1000, toRecords: true });
    if (step.kind === "committed") return { kind: "done", total: step.total };
    if (step.kind === "gone") return { kind: "not-moving" };
  }
  return { kind: "paused", position };
}

/** Where each move stopped, across the sweep's runs of one instance (another instance starts that move over: it is idempotent). */
const POSITIONS = new Map<string, string | undefined>();

/** The sweep's part: a step of every move under way (up to `limit` counters), each within `budgetMs`. */
export async function moveCounters(deps: MoveDeps, options: { limit: number; budgetMs: number; positions?: Map<string, string | undefined> }): Promise<Record<string, number>> {
  const outcomes: Record<string, number> = {};
  for (const counterId of await deps.store.listMoving(options.limit)) {
    const step = await moveToRecords(deps, counterId, { budgetMs: options.budgetMs, positions: options.positions ?? POSITIONS });
    outcomes[step.kind] = (outcomes[step.kind] ?? 0) + 1;
    if (step.kind === "done") logger.info("document counter moved to records", { counterId, total: step.total });
    else if (step.kind === "paused") logger.info("document counter still moving to records; the next sweep goes on from where this one stopped", { counterId });
  }
  return outcomes;
}
