// The callable side of an increment, counted from what the benchmark's increments did. The benchmark makes
// each increment's shard write itself (counters.ts, delivery/events.ts) so that it knows the write's time
// and its before and after snapshots; before an increment of ours it also asks the product's shape cache
// (functions/src/model/shape-cache.ts) for the counter's shape, as incrementCounter's shapeOf does: a hit
// reads nothing, a miss reads the parent. This process is one callable instance: one cache,
// SHAPE_CACHE_TTL_MS long. A phase starts with its counters forgotten (forgetPhaseShapes): the instance that
// serves a counter's increments is not the one whose createCounter remembered its shape. The naive callable
// reads nothing: one shard write.
import { shapeCache, SHAPE_CACHE_TTL_MS } from "../../functions/src/model/shape-cache";
import type { Counter } from "./counters";

/** How long the product's cache keeps a shape (the workloads' idle gaps and a hot counter's stale shapes follow it). */
export { SHAPE_CACHE_TTL_MS };

/** This process's shape cache: the product's own (functions/src/model/shape-cache.ts), as one callable instance holds it. */
const shapes = shapeCache<true>();

/** What the calls of a phase did in Firestore: calls counted, document reads and writes they made. */
export interface CallableOps {
  calls: number;
  reads: number;
  writes: number;
}

const tally = new Map<string, CallableOps>();

function add(counterId: string, reads: number, writes: number): void {
  const ops = tally.get(counterId) ?? { calls: 0, reads: 0, writes: 0 };
  ops.calls += 1;
  ops.reads += reads;
  ops.writes += writes;
  tally.set(counterId, ops);
}

/**
 * What incrementCounter reads before its write: the shape through the product's cache (ours), nothing
 * (naive). Call it before making the increment's one write; it counts the call, its reads and that write.
 */
export function callableRead(counter: Counter): void {
  if (counter.rollup === "naive") {
    add(counter.id, 0, 1);
    return;
  }
  // incrementCounter's shapeOf: a shape the instance holds costs nothing; a miss reads the parent and keeps its shape.
  const now = Date.now();
  const miss = shapes.get(counter.id, now) === undefined;
  if (miss) shapes.remember(counter.id, true, now);
  add(counter.id, miss ? 1 : 0, 1);
}

/** Drops the shapes of a phase's counters from this process's cache: its calls start on a callable instance that has not seen them. */
export function forgetPhaseShapes(counters: readonly Counter[]): void {
  for (const counter of counters) shapes.forget(counter.id);
}

/** The calls counted on the counters whose ids start with `prefix` (a phase's: workloads/context.ts). */
export function callableOpsOf(prefix: string): CallableOps {
  const total = { calls: 0, reads: 0, writes: 0 };
  for (const [id, ops] of tally) {
    if (!id.startsWith(prefix)) continue;
    total.calls += ops.calls;
    total.reads += ops.reads;
    total.writes += ops.writes;
  }
  return total;
}
