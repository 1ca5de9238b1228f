// The claim step: the first event of a busy slot writes the lease (a compare-and-set on its version, so
// exactly one event wins), and holds the claim in the instance's memo while it waits, sums and commits
// (finish.ts, which also deletes the lease).
import type { LeaseRead } from "./store";
import type { ClaimMemo, Invocation } from "./types";

/** Writes the lease for a claim due at `dueMs`; returns its version, or null if another event got there first. */
export async function claimSlot(inv: Invocation, current: LeaseRead, dueMs: number, intervalMs: number): Promise<string | null> {
  const version = await inv.deps.store.writeClaim(inv.write.counterId, current, { eventId: inv.write.eventId, dueMs, intervalMs });
  if (version !== null) inv.ops.writes += 1;
  return version;
}

/** The latest due time of a claim of this counter held by a running invocation of this instance, if any. */
export function heldDueMs(claims: ClaimMemo | undefined, counterId: string): number | undefined {
  return claims?.get(counterId);
}

/** Runs `work` with a claim due at `dueMs` recorded in the instance's memo, and removes it however work ends. */
export async function holdingClaim<T>(claims: ClaimMemo | undefined, counterId: string, dueMs: number, work: () => Promise<T>): Promise<T> {
  const previous = claims?.get(counterId);
  if (claims !== undefined && (previous === undefined || previous < dueMs)) claims.set(counterId, dueMs);
  try {
    return await work();
  } finally {
    // Only our own entry: another invocation of this instance may hold a later claim by now.
    if (claims?.get(counterId) === dueMs) claims.delete(counterId);
  }
}
