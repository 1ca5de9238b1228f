// A counter's shape: its parent's `numShards`, `unique` and `windowed`, read from the parent document, fresh or from a
// small per-instance cache. incrementCounter reads it through the cache so that an increment costs no
// parent read; setMember and the admin operations read the parent themselves.
import type { DocumentSnapshot, Firestore } from "firebase-admin/firestore";
import { CounterError } from "../model/errors";
import { counterRef } from "../model/paths";
import { storedCounter } from "../model/schema";
import { shapeCache } from "../model/shape-cache";

export interface CounterShape {
  numShards: number;
  /** A unique counter counts members (setMember), never increments (docs/unique-counters.md). */
  unique: boolean;
  /** A windowed counter's shard writes carry the day's count too (model/windows.ts). */
  windowed: boolean;
}

/**
 * The shape of a read parent: `not-found` if it does not exist, an internal error if it is malformed.
 * `unique` is false when absent (docs/api.md, "Data model").
 */
export function shapeIn(counterId: string, snap: DocumentSnapshot): CounterShape {
  if (!snap.exists) throw new CounterError("not-found", `counter "${counterId}" does not exist`);
  const parsed = storedCounter.safeParse(snap.data());
  if (!parsed.success) {
    // Only the functions write parents; a malformed one is a bug or a manual edit, not bad input.
    throw new Error(`counter "${counterId}" has a malformed parent document: ${parsed.error.message}`);
  }
  return { numShards: parsed.data.numShards, unique: parsed.data.unique ?? false, windowed: parsed.data.windowed ?? false };
}

/** The refusal of an operation that would let a unique counter's total differ from its members. */
export function notForUnique(counterId: string, operation: string, why: string): CounterError {
  return new CounterError("failed-precondition", `${operation}: counter "${counterId}" is a unique counter; ${why}`);
}

/** Attempts of the admin operations' transactions, which lock at most the parent and the shards being removed. */
export const ADMIN_TRANSACTION_ATTEMPTS = 20;

// ---------------------------------------------------------------------------------------------------
// The cache. Increments would otherwise read the parent every time. What staleness it allows, for at
// most SHAPE_CACHE_TTL_MS after another instance changed the counter:
// - numShards: harmless for correctness. An increment to a shard that no longer exists fails (update()
//   on a missing document) and is retried with a fresh read; a cache that misses newly added shards
//   only spreads load less evenly until it expires.
// - unique: a counter deleted and created again as the other kind (plain ↔ unique) within the TTL, on
//   another instance, can still take incrementCounter calls on this one (a stale "plain"), which then
//   land on the new unique counter's shards: its total then exceeds its members until reconcile --fix
//   repairs it from the members. A stale "unique" only refuses increments for the rest of the TTL.
//   UNIQUE_COUNTERS removes the first case for every id it matches: such an id can never be plain.
// - windowed: the same window of staleness for a counter deleted and created again as the other kind
//   (windowed ↔ not) on another instance: a stale "not windowed" lets increments land without their day,
//   so the new counter's windows miss them (its total does not); a stale "windowed" only writes day
//   fields nobody sums. WINDOWED_COUNTERS removes the first case for every id it matches.

// The cache itself, and how long it keeps a shape (SHAPE_CACHE_TTL_MS): model/shape-cache.ts.
const cache = shapeCache<CounterShape>();

export function rememberShape(counterId: string, shape: CounterShape): void {
  cache.remember(counterId, { ...shape }, Date.now());
}

export function forgetShape(counterId: string): void {
  cache.forget(counterId);
}

/** The shape of an existing counter (cached unless `fresh`), or `not-found`. */
export async function shapeOf(db: Firestore, counterId: string, fresh = false): Promise<CounterShape> {
  const cached = fresh ? undefined : cache.get(counterId, Date.now());
  if (cached !== undefined) return { ...cached };
  let shape: CounterShape;
  try {
    shape = shapeIn(counterId, await counterRef(db, counterId).get());
  } catch (error) {
    forgetShape(counterId);
    throw error;
  }
  rememberShape(counterId, shape);
  return shape;
}
