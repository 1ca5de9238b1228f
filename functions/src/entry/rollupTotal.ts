// rollupTotal, on every write of a shard: keeps the parent's total exact (rollup/event.ts turns the event
// into a shard write; rollup/index.ts runs it through the steps). It reads only what the rollup uses
// (ROLLUP_INTERVAL_MS, MIRRORS, the database: deps.ts), so a bad callable setting never stops totals.
// Sizing (config/params.ts): a claiming invocation waits up to one rollup interval, so concurrency and
// MAX_INSTANCES bound how many counters can be rolled up at once; see docs/deploying.md.
import { onDocumentWritten } from "firebase-functions/v2/firestore";
import { databaseId, ROLLUP_CPU, rollupConcurrency, rollupMemoryMb, rollupMinInstances, rollupTimeoutSeconds } from "../config/params";
import { SHARD_DOCUMENT_PATTERN } from "../model/paths";
import { rollupShardEvent, type ShardEvent } from "../rollup/event";
import type { ClaimMemo, LeadMemo } from "../rollup/types";
import { rollupDeps } from "./deps";
import { EVERY_FUNCTION } from "./options";

// This instance's memos: module state, so one per instance (the benchmark loads this module once per
// simulated instance). Claims held by its running invocations, and its leading edges (rollup/types.ts).
const claims: ClaimMemo = new Map();
const leads: LeadMemo = new Map();

async function onShardWritten(event: ShardEvent): Promise<void> {
  await rollupShardEvent(event, rollupDeps({ claims, leads }));
}

export const rollupTotal = onDocumentWritten(
  {
    ...EVERY_FUNCTION,
    document: SHARD_DOCUMENT_PATTERN,
    retry: true,
    database: databaseId,
    timeoutSeconds: rollupTimeoutSeconds,
    memory: rollupMemoryMb,
    cpu: ROLLUP_CPU,
    concurrency: rollupConcurrency,
    // Warm instances cost money around the clock; 0 by default (docs/deploying.md, "Cold starts").
    minInstances: rollupMinInstances,
  },
  onShardWritten,
);
