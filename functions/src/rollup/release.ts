// Releasing a claim: the last step of every rollup that claimed (finish.ts), and all that is left of a
// claim whose sum is already on the parent (index.ts, decision "release").
import type { Run } from "./types";

/** Deletes the lease if it still is the claim at `version` (a newer claim is never deleted). */
export async function releaseClaim(run: Run, counterId: string, version: string | null): Promise<void> {
  if (version === null) return;
  if (await run.deps.store.deleteClaim(counterId, version)) run.ops.writes += 1;
}
