// Driving the rollup directly (rollupShardWrite, sweepStaleClaims) over the Firestore emulator, as the
// trigger would, with injected clocks and failures: the write an event carries, and the dependencies
// the trigger would give it. Shared by the rollup's emulator tests.
import { randomUUID } from "node:crypto";
import { getFirestore } from "firebase-admin/firestore";
import { defaultApp } from "../../functions/src/default-app";
import type { IncrementResult } from "../../functions/src/counters/increment";
import { logger } from "./logger";
import { shardStateOf } from "../../functions/src/model/shards";
import { microsCeil } from "../../functions/src/model/time";
import { firestoreRollupStore } from "../../functions/src/rollup/firestore-store";
import { staleAfterMsFor } from "../../functions/src/rollup/plan";
import { HOT_FOR_MS } from "../../functions/src/rollup/growth";
import { type RollupDeps, type ShardWrite } from "../../functions/src/rollup/types";
import type { RecordedWrite } from "./functions";

/** The emulator tier's ROLLUP_INTERVAL_MS (functions/.env, loaded by setup-env.ts). */
export const INTERVAL_MS = Number(process.env.ROLLUP_INTERVAL_MS);

/** The same write as the trigger sees it. */
export function shardWriteOf(write: RecordedWrite): ShardWrite {
  return {
    eventId: write.eventId,
    counterId: write.counterId,
    shardId: write.shardId,
    writtenAtUs: microsCeil(write.after.updateTime!),
    ...shardCreated(write),
    // As the trigger (functions/src/entry/rollupTotal.ts): the after document is the shard at exactly that time.
    writtenAtExact: write.after.exists && write.after.updateTime!.nanoseconds % 1000 === 0,
    before: shardStateOf(write.before.exists ? write.before.data() : undefined),
    after: shardStateOf(write.after.exists ? write.after.data() : undefined),
  };
}

/** When the written shard document was created, as the trigger reads it (functions/src/entry/rollupTotal.ts). */
function shardCreated(write: RecordedWrite): { shardCreatedUs?: number } {
  const doc = write.after.exists ? write.after : write.before;
  return doc.exists && doc.createTime !== undefined ? { shardCreatedUs: microsCeil(doc.createTime) } : {};
}

/**
 * The event of an increment incrementCounter applied, as the rollup reads it: its shard, its commit time,
 * and a count that changed by `delta`. Its `after` is not the shard's document, so it is not marked exact:
 * the rollup sums the shards rather than take it as the sum (functions/src/rollup/plan.ts, the single-shard snapshot sum).
 */
export function shardWriteOfIncrement(counterId: string, result: IncrementResult, delta: number): ShardWrite {
  return {
    eventId: randomUUID(),
    counterId,
    shardId: String(result.shard),
    writtenAtUs: microsCeil(result.writeTime),
    before: shardStateOf({ count: 0 }),
    after: shardStateOf({ count: delta }),
  };
}

/** What the trigger gives the rollup (the Firestore store, the interval, growth, the real clock), with overrides. */
export function rollupDeps(overrides: Partial<RollupDeps> = {}): RollupDeps {
  return {
    store: firestoreRollupStore(getFirestore(defaultApp())),
    intervalMs: INTERVAL_MS,
    staleAfterMs: staleAfterMsFor(INTERVAL_MS),
    growth: {
      shardWritesPerSecond: Number(process.env.SHARD_WRITES_PER_SECOND),
      maxShards: Number(process.env.MAX_GROWN_SHARDS),
      hotForMs: HOT_FOR_MS,
    },
    nowMs: Date.now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    ...overrides,
  };
}

/**
 * Collects what the functions log at ERROR during each test of the file (as JSON lines). The logger
 * writes through the console it captured at load time, so the logger itself is watched.
 */
export function captureErrorLogs(): { lines: string[] } {
  const captured = { lines: [] as string[] };
  beforeEach(() => {
    captured.lines = [];
    jest.spyOn(logger, "error").mockImplementation((...args: unknown[]) => {
      captured.lines.push(JSON.stringify(args));
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  return captured;
}
