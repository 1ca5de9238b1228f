// Operations and cost per 1,000,000 increments, counted from what the functions did: both rollups log one
// "rollup ops" line per invocation (the product's in functions/src/rollup/ops.ts, the naive one in
// naive/src/naive.ts) with the document reads, writes and aggregation queries it made and the time it
// spent waiting for a slot. Those lines reach <out>/emulators.log, from the functions emulator's workers
// and, where the benchmark delivers events itself, from this process's own handlers; the benchmark reads
// them back at the end.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { InstanceSize } from "./product";

/** Where main.ts writes every line that is not the benchmark's own (emulators and function logs). */
export function emulatorLogPath(outDir: string): string {
  return join(outDir, "emulators.log");
}

export interface Ops {
  invocations: number;
  reads: number;
  writes: number;
  /** Of `writes`, those the rollup's commits made (the parent, its mirror targets, grown shards); ours only. */
  commitWrites: number;
  aggregations: number;
  waitMs: number;
  /** Σ of the invocations' own durations. */
  durationMs: number;
}

const ZERO: Ops = { invocations: 0, reads: 0, writes: 0, commitWrites: 0, aggregations: 0, waitMs: 0, durationMs: 0 };

export interface OpsLine {
  counterId: string;
  outcome: string;
  reads: number;
  writes: number;
  /** Of `writes`, the commits' (ours; the naive rollup's lines have none: its writes are all its commit's). */
  commitWrites: number;
  aggregations: number;
  waitMs: number;
  /** The invocation's own duration, from the handler's start (module load and delivery not included). */
  durationMs: number;
  /** The total committed, on commits; null otherwise. */
  total: number | null;
  /** A leading edge that started from the parent its instance's last commit left: still the parent ("hit") or not. */
  parentMemo: "hit" | "missed" | null;
  /** A rollup the document trigger ran on its own shard write, inside its invocation (functions/src/rollup/types.ts). */
  inline: boolean;
}

/** The outcome of a rollup the document trigger ran on its own shard write, as the tables name it. */
export const INLINE = "document trigger's rollup: ";

/** The outcome with where a leading edge's parent came from (functions/src/rollup/types.ts, ParentMemo), as the tables name it. */
export const REMEMBERED = { hit: " (parent remembered)", missed: " (remembered parent changed)" } as const;

function opsLineOf(line: string): OpsLine | undefined {
  const at = line.indexOf("{");
  if (at === -1 || !line.includes('"rollup ops"')) return undefined;
  try {
    const entry = JSON.parse(line.slice(at)) as Record<string, unknown>;
    if (entry.message !== "rollup ops" || typeof entry.counterId !== "string") return undefined;
    const n = (key: string): number => {
      const value = entry[key];
      return typeof value === "number" ? value : 0;
    };
    return {
      counterId: entry.counterId,
      outcome: typeof entry.outcome === "string" ? entry.outcome : "",
      reads: n("reads"),
      writes: n("writes"),
      commitWrites: typeof entry.commitWrites === "number" ? entry.commitWrites : n("writes"),
      aggregations: n("aggregations"),
      waitMs: n("waitMs"),
      durationMs: n("durationMs"),
      total: typeof entry.total === "number" ? entry.total : null,
      parentMemo: entry.parentMemo === "hit" || entry.parentMemo === "missed" ? entry.parentMemo : null,
      inline: entry.inline === true,
    };
  } catch {
    return undefined;
  }
}

/**
 * Sums the ops lines of the counters whose ids start with `prefix`. Invocations for a write that did not
 * change a count (the shards a counter is created with) are left out: they come from creating counters,
 * not from increments, and return before any read.
 */
export function opsOf(logPath: string, prefix: string): Ops {
  const total = { ...ZERO };
  for (const { ops } of opsByOutcome(logPath, prefix)) {
    for (const key of Object.keys(total) as (keyof Ops)[]) total[key] += ops[key];
  }
  return total;
}

/** What the invocations did, per outcome (the creation's shard events left out, as in opsOf), most frequent first. */
export function opsByOutcome(logPath: string, prefix: string): { outcome: string; ops: Ops }[] {
  const byOutcome = new Map<string, Ops>();
  for (const line of readFileSync(logPath, "utf8").split("\n")) {
    const ops = opsLineOf(line);
    if (ops === undefined || !ops.counterId.startsWith(prefix) || ops.outcome === "skip-unchanged") continue;
    const outcome = (ops.inline ? INLINE : "") + ops.outcome + (ops.parentMemo === null ? "" : REMEMBERED[ops.parentMemo]);
    const total = byOutcome.get(outcome) ?? { ...ZERO };
    // An inline rollup is part of the document trigger's invocation, whose own line has its time.
    total.invocations += ops.inline ? 0 : 1;
    total.reads += ops.reads;
    total.writes += ops.writes;
    total.commitWrites += ops.commitWrites;
    total.aggregations += ops.aggregations;
    total.waitMs += ops.waitMs;
    total.durationMs += ops.inline ? 0 : ops.durationMs;
    byOutcome.set(outcome, total);
  }
  return [...byOutcome].map(([outcome, ops]) => ({ outcome, ops })).sort((a, b) => b.ops.invocations - a.ops.invocations);
}

/** The "rollup ops" lines of one counter, in the order they reached the log. */
export function rollupInvocationsOf(logPath: string, counterId: string): OpsLine[] {
  return readFileSync(logPath, "utf8")
    .split("\n")
    .map(opsLineOf)
    .filter((ops): ops is OpsLine => ops !== undefined && ops.counterId === counterId);
}

/**
 * List prices (USD), looked up on 2026-11-23:
 * - Firestore, nam5 (multi-region): $0.06 per 100,000 document reads, $0.18 per 100,000 writes
 *   (https://cloud.google.com/firestore/pricing); an aggregation query is billed as one read per 1,000
 *   index entries (minimum one), and a counter has at most 200 shards, so one read each;
 * - Cloud Run functions (Cloud Functions 2nd gen), Tier 1 region (us-central1), CPU allocated during
 *   requests: $0.40 per million requests, $0.000024 per vCPU-second, $0.0000025 per GiB-second
 *   (https://cloud.google.com/run/pricing). Free tiers are left out.
 */
export const PRICES = {
  read: 0.06 / 100_000,
  write: 0.18 / 100_000,
  invocation: 0.4 / 1_000_000,
  vcpuSecond: 0.000024,
  gibSecond: 0.0000025,
};

export interface CostPerMillion {
  invocations: number;
  reads: number;
  writes: number;
  aggregations: number;
  /** Instance-seconds invocations spent waiting for their slot (part of instanceSeconds, not priced apart). */
  waitSeconds: number;
  /** Instance-seconds billed (see perMillion). */
  instanceSeconds: number;
  dollars: { firestore: number; invocations: number; instances: number; total: number };
}

/**
 * Scales what `increments` increments cost to a million. `instanceMs` is the instance time the invocations
 * were billed: Cloud Run bills an instance (`size`: rollupTotal's CPU and memory, product.ts) for the time it serves at
 * least one request, and up to ROLLUP_CONCURRENCY invocations share that time. Where the benchmark
 * delivers events itself, it is measured as exactly that (the deliverer's busyMs); under the emulator's
 * delivery, which runs one event at a time, it is the sum of the invocations' durations (nothing shared:
 * an upper bound of what production would bill).
 */
export function perMillion(ops: Ops, increments: number, instanceMs: number, size: InstanceSize): CostPerMillion {
  return priced(ops, instanceMs, increments === 0 ? 0 : 1_000_000 / increments, size);
}

/** What `ops` and `instanceMs` of instance time (at `size`) cost at the list prices, every figure times `scale`. */
export function priced(ops: Ops, instanceMs: number, scale: number, size: InstanceSize): CostPerMillion {
  const invocations = ops.invocations * scale;
  const reads = ops.reads * scale;
  const writes = ops.writes * scale;
  const aggregations = ops.aggregations * scale;
  const waitSeconds = (ops.waitMs / 1000) * scale;
  const instanceSeconds = (instanceMs / 1000) * scale;
  const firestore = (reads + aggregations) * PRICES.read + writes * PRICES.write;
  const invocationDollars = invocations * PRICES.invocation;
  const instances = instanceSeconds * (size.vcpu * PRICES.vcpuSecond + size.gib * PRICES.gibSecond);
  return {
    invocations,
    reads,
    writes,
    aggregations,
    waitSeconds,
    instanceSeconds,
    dollars: { firestore, invocations: invocationDollars, instances, total: firestore + invocationDollars + instances },
  };
}
