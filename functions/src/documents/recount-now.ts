// A recounted counter counted now (the backfill's and reconcile's "one count per counter"): its parent read,
// created first if it is missing (kept by recount), and a count() of its documents committed by the rollup's own
// commit (rollup/commit.ts: conditioned on the parent as read, its mirrors in the same write, its promise
// kept). A dry run counts and writes nothing. A counter that is not kept by recount (created before this way
// existed, or moving to records) is left to the records: the caller observes its documents instead.
import { sumAndCommit } from "../rollup/commit";
import { noOps } from "../rollup/ops";
import { isRecounted } from "../rollup/plan";
import type { RollupDeps, Run } from "../rollup/types";
import type { NewCounterRule } from "../model/new-counter";
import { StaleRead, type DocumentStore } from "./store";

/** What a recount did: the total before (null: no counter) and after (dry: what it would be). */
export type RecountNow = { kind: "recounted"; before: number | null; after: number; created: boolean } | { kind: "records" } | { kind: "problem"; problem: string };

/** Attempts when the parent keeps changing under the commit (a rollup commits first: then it is usually whole already). */
const ATTEMPTS = 5;

export async function recountNow(deps: RollupDeps, store: DocumentStore, counterId: string, options: { newCounter: NewCounterRule; dryRun: boolean }): Promise<RecountNow> {
  const run: Run = { deps: { ...deps, leads: undefined, parents: undefined, onStage: undefined }, ops: noOps() };
  let created = false;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let parent = await deps.store.readParent(counterId);
    if (!parent.view.parentExists) {
      const read = await store.read(counterId, []);
      if (!read.counter.exists && read.counter.deleting) return deleting(counterId);
      let shape;
      try {
        shape = options.newCounter(counterId);
      } catch (error) {
        return { kind: "problem", problem: error instanceof Error ? error.message : String(error) };
      }
      const query = deps.recount?.query(counterId) ?? null;
      if (query === null) return { kind: "records" };
      if (options.dryRun) return { kind: "recounted", before: null, after: (await deps.store.count(query, null)).count, created: true };
      try {
        created = (await store.createRecounted(counterId, shape, read.counter.exists ? null : read.counter.deletedAt, deps.nowMs())) === "created";
      } catch (error) {
        // A deletion of the id began since the read: as above, its documents count once it is done.
        if (error instanceof StaleRead) return deleting(counterId);
        throw error;
      }
      parent = await deps.store.readParent(counterId);
    }
    if (!isRecounted(parent.view)) return { kind: "records" };
    const before = parent.view.total ?? 0;
    if (options.dryRun) {
      const query = deps.recount?.query(counterId) ?? null;
      if (query === null) return { kind: "problem", problem: `no DOCUMENT_COUNTERS rule recounts "${counterId}"` };
      return { kind: "recounted", before, after: (await deps.store.count(query, null)).count, created: false };
    }
    const step = await sumAndCommit(run, { counterId, parent, targetUs: 0, leadWrittenAtUs: null, sinceUs: deps.nowMs() * 1000 });
    if (step.kind === "committed") return { kind: "recounted", before: created ? null : before, after: step.total, created };
    if (step.kind === "gone") continue;
    if (step.kind === "overflow") return { kind: "problem", problem: `counter "${counterId}" could not be counted (see the error logged)` };
  }
  return { kind: "problem", problem: `counter "${counterId}" kept changing under ${ATTEMPTS} attempts: run it again` };
}

function deleting(counterId: string): RecountNow {
  return { kind: "problem", problem: `counter "${counterId}" is still being deleted; its documents count once that is done` };
}
