// Claims of the previous version (before promises on the parent: plan.ts), finished by the sweep. That
// version wrote a lease `counters/{id}/exactCounterRollup/lease` per busy slot, and events deferred to it.
// A claim pending when this version is deployed is finished by its claimer if that instance still runs it;
// if the claimer failed, its retry runs this version, which no longer reads leases: so the sweep finds every
// lease due more than the stale time ago (sweep.ts) and finishes it as a claimer would have: a sum read at
// or after its due time committed (the parent's promise, if any, kept), then the lease deleted. Nothing
// writes leases any more: once the sweep finds none, the next release removes this file, the lease query
// and its index (docs/rollup.md, "Upgrading from the lease").
import { sumAndCommit } from "./commit";
import { isCovered } from "./plan";
import type { FoundClaim } from "./store";
import type { Run } from "./types";

/** Attempts when the parent keeps changing; the next sweep tries again. */
const ATTEMPTS = 8;

/** How finishing a legacy claim ended. */
export type LegacyOutcome = "committed" | "covered-by-other" | "gone" | "overflow";

/** Finishes a legacy claim (see the header); throws if it does not settle (the next sweep tries again). */
export async function finishLegacyClaim(run: Run, found: FoundClaim): Promise<{ outcome: LegacyOutcome; total?: number }> {
  const { deps, ops } = run;
  const { counterId, claim } = found;
  const dueUs = claim.dueMs * 1000;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const parent = await deps.store.readParent(counterId);
    ops.reads += 1;
    let result: { outcome: LegacyOutcome; total?: number } | undefined;
    if (!parent.view.parentExists) result = { outcome: "gone" };
    else if (isCovered(parent.view.coveredUntilUs, dueUs)) result = { outcome: "covered-by-other" };
    else {
      // The parent's promise, if any, stays (no `promise`): its owner still fulfils it.
      const step = await sumAndCommit(run, { counterId, parent, targetUs: dueUs, leadWrittenAtUs: null, sinceUs: dueUs });
      if (step.kind === "committed") result = { outcome: "committed", total: step.total };
      else if (step.kind === "overflow" || step.kind === "gone") result = { outcome: step.kind };
      // "changed": read again; "early" cannot be (the claim is stale: its due time passed long ago).
    }
    if (result !== undefined) {
      if (await deps.store.deleteClaim(counterId, found.version)) ops.writes += 1;
      return result;
    }
  }
  throw new Error(`legacy claim of counter "${counterId}" due ${new Date(claim.dueMs).toISOString()} did not settle`);
}
