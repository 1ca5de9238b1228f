// The claim step: the first event of a busy slot writes the lease (a compare-and-set on its version, so
// exactly one event wins), and holds the claim in the instance's memo while it waits, sums and commits.
import type { ClaimMemo, Invocation } from "./context";
import type { LeaseRead } from "./storage";

/** Writes the lease for `slot`; returns its version, or null if another invocation got there first. */
export async function claimSlot(inv: Invocation, current: LeaseRead, slot: number, dueMs: number): Promise<string | null> {
  const version = await inv.deps.store.writeClaim(inv.write.counterId, current, { slot, eventId: inv.write.eventId, dueMs });
  if (version !== null) inv.ops.writes += 1;
  return version;
}

/** A slot of this counter held by a running invocation of this instance, if any (see ClaimMemo). */
export function heldSlot(claims: ClaimMemo | undefined, counterId: string): number | undefined {
  return claims?.get(counterId);
}

/** Runs `work` with `slot` recorded in the instance's claim memo, and removes it however work ends. */
export async function holdingClaim<T>(claims: ClaimMemo | undefined, counterId: string, slot: number, work: () => Promise<T>): Promise<T> {
  const previous = claims?.get(counterId);
  if (claims !== undefined && (previous === undefined || previous < slot)) claims.set(counterId, slot);
  try {
    return await work();
  } finally {
    // Only our own entry: another invocation of this instance may hold a later slot by now.
    if (claims?.get(counterId) === slot) claims.delete(counterId);
  }
}
