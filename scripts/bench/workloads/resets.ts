// Workload 8: resets of a hot counter under load. Increments at a steady rate on one counter of the
// maximum shard count, and a reset every so often, through the admin entry (the callables' operations with
// no callable layer, so what is measured is Firestore's locking, not the functions). Run twice: with the
// product's reset (a read-only snapshot, then a transaction that reads only the parent: no lock on the shards)
// and with the reset it replaced (one transaction that reads every shard and sets it to 0: a lock on every
// shard from its read to its commit), copied here as the baseline. Measured: how long increments take
// while a reset runs against the rest of the time, how long a reset takes, failures, and exactness: the
// shards must hold exactly the increments committed after the last reset's `rollup.readTime` (the run
// fails unless ours does, with no failed increment or reset).
//
// Its counters live in a project of their own that no trigger serves: the rollup plays no part in this,
// and 200 rollup events per baseline reset would only queue behind the emulator's one-at-a-time delivery.
import { getApps, initializeApp, type App } from "firebase-admin/app";
import { FieldValue, getFirestore, Timestamp, type Firestore } from "firebase-admin/firestore";
import { counterRef, shardRef } from "../../../functions/src/model/paths";
import { shardIds } from "../../../functions/src/model/shards";
import { HARD_MAX_SHARDS } from "../../../functions/src/model/param-rules";
import { counterOf, shardSum } from "../counters";
import { fixed, int, markdownTable, ms } from "../format";
import { paced, sleep } from "../pace";
import { adminEntry } from "../product";
import { summarize, type Summary } from "../stats";
import { step, type BenchContext } from "./context";
import { sizes } from "../options";
import { type Workload } from "./workload";

const RESETS_PROJECT = "demo-counter-bench-resets";
const MAX_IN_FLIGHT = 32;

export type ResetKind = "ours" | "transaction";

export interface ResetRow {
  reset: ResetKind;
  shards: number;
  increments: number;
  failedIncrements: number;
  resets: number;
  failedResets: number;
  /** How long each reset call took. */
  resetMs: Summary;
  /** Increments whose call overlapped a reset call, and the others. */
  duringMs: Summary;
  outsideMs: Summary;
  /** Shard sum − the increments committed after the last reset's rollup.readTime (must be 0). */
  drift: number;
}

export interface ResetsResult {
  rate: number;
  seconds: number;
  resetEveryMs: number;
  rows: ResetRow[];
}

interface Span {
  start: number;
  end: number;
}

const FLAGS = [
  { key: "resetRate", flag: "--reset-rate", full: 200, quick: 60, min: 1, help: `workload 8: increments per second on one counter of ${HARD_MAX_SHARDS} shards, resets running` },
  { key: "resetSeconds", flag: "--reset-seconds", full: 20, quick: 5, min: 1, help: "workload 8: duration, per reset implementation" },
  { key: "resetEveryMs", flag: "--reset-every-ms", full: 500, quick: 500, min: 1, help: "workload 8: pause between two resets" },
] as const;

export const resets: Workload<ResetsResult> = {
  id: "resets",
  flags: FLAGS,
  stages: ["last"],
  run(ctx) {
    const { resetRate: rate, resetSeconds: seconds, resetEveryMs } = sizes(ctx.options, FLAGS);
    return step(
      `workload 8, resets under load: ${rate} increments/s for ${seconds} s on one counter of ${HARD_MAX_SHARDS} shards, a reset every ${resetEveryMs} ms; ours, then the one-transaction reset it replaced`,
      () => resetsUnderLoad(ctx, rate, seconds, resetEveryMs),
    );
  },
  section: (r) => [
    `Workload 8, resets under load: ${r.rate} increments/s for ${r.seconds} s on one counter of ${r.rows[0]?.shards ?? 0} shards, a reset every ${fixed(r.resetEveryMs / 1000)} s; increment latency while a reset runs and otherwise:`,
    "",
    resetsTable(r),
  ],
  failures(r) {
    const ours = r.rows.find((row) => row.reset === "ours");
    if (ours !== undefined && ours.drift === 0 && ours.failedIncrements === 0 && ours.failedResets === 0) return [];
    return [`workload 8, our reset: drift ${ours?.drift}, ${ours?.failedIncrements} failed increments, ${ours?.failedResets} failed resets`];
  },
};

/** Workload 8: the product's reset against the transactional one it replaced. */
function resetsTable(r: ResetsResult): string {
  const rows = r.rows.map((row) => [
    row.reset === "ours" ? "ours (snapshot, then a transaction over the parent: no shard lock)" : "one transaction (before)",
    `${int(row.resets)} (${int(row.failedResets)} failed)`,
    `${ms(row.resetMs.p50)} / ${ms(row.resetMs.max)}`,
    `${int(row.increments)} (${int(row.failedIncrements)} failed)`,
    `${ms(row.outsideMs.p50)} / ${ms(row.outsideMs.p99)}`,
    `${ms(row.duringMs.p50)} / ${ms(row.duringMs.p99)} / ${ms(row.duringMs.max)}`,
    int(row.drift),
  ]);
  return markdownTable(
    ["reset", "resets", "reset p50 / max ms", "increments", "no reset: p50 / p99 ms", "during a reset: p50 / p99 / max ms", "drift"],
    rows,
    1,
  );
}

async function resetsUnderLoad(ctx: BenchContext, rate: number, seconds: number, resetEveryMs: number): Promise<ResetsResult> {
  const app = getApps().find((a) => a.name === "resets") ?? initializeApp({ projectId: RESETS_PROJECT }, "resets");
  const rows: ResetRow[] = [];
  for (const kind of ["ours", "transaction"] as const) {
    rows.push(await run(app, `${kind}-${ctx.runId}`, kind, rate, seconds, resetEveryMs));
  }
  return { rate, seconds, resetEveryMs, rows };
}

async function run(app: App, counterId: string, kind: ResetKind, rate: number, seconds: number, resetEveryMs: number): Promise<ResetRow> {
  const db = getFirestore(app);
  const admin = adminEntry();
  const shards = HARD_MAX_SHARDS;
  const id = `reset-${counterId}`;
  await admin.createCounter(id, { numShards: shards, app });
  const resetSpans: (Span & { ok: boolean })[] = [];
  const incrementSpans: (Span & { ok: boolean; writeTime: Timestamp | null })[] = [];
  let running = true;
  const resetter = (async () => {
    await sleep(resetEveryMs / 2);
    while (running) {
      const start = Date.now();
      let ok = true;
      try {
        await (kind === "ours" ? admin.resetCounter(id, { app }) : transactionReset(db, id));
      } catch {
        ok = false;
      }
      resetSpans.push({ start, end: Date.now(), ok });
      await sleep(resetEveryMs);
    }
  })();
  await paced(Math.round(rate * seconds), rate, MAX_IN_FLIGHT, async () => {
    const start = Date.now();
    try {
      const r = await admin.incrementCounter(id, 1, { app });
      incrementSpans.push({ start, end: Date.now(), ok: true, writeTime: new Timestamp(r.writeTime.seconds, r.writeTime.nanoseconds) });
    } catch {
      incrementSpans.push({ start, end: Date.now(), ok: false, writeTime: null });
    }
  });
  running = false;
  await resetter;

  const readTime = (await counterRef(db, id).get()).get("rollup.readTime") as Timestamp | undefined;
  const after = incrementSpans.filter((s) => s.writeTime !== null && (readTime === undefined || s.writeTime.valueOf() > readTime.valueOf())).length;
  const overlaps = (s: Span) => resetSpans.some((r) => s.start < r.end && s.end > r.start);
  const ok = incrementSpans.filter((s) => s.ok);
  return {
    reset: kind,
    shards,
    increments: incrementSpans.length,
    failedIncrements: incrementSpans.length - ok.length,
    resets: resetSpans.length,
    failedResets: resetSpans.filter((r) => !r.ok).length,
    resetMs: summarize(resetSpans.map((r) => r.end - r.start)),
    duringMs: summarize(ok.filter(overlaps).map((s) => s.end - s.start)),
    outsideMs: summarize(ok.filter((s) => !overlaps(s)).map((s) => s.end - s.start)),
    drift: (await shardSum(counterOf(db, "ours", id, shards))) - after,
  };
}

/**
 * The reset this product shipped before (the transaction reset that came before the snapshot reset of functions/src/counters/reset.ts), kept as the baseline: one transaction
 * that reads the parent and every shard (locking them until it commits), sets every shard to 0, and
 * covers up to the latest update time it read.
 */
async function transactionReset(db: Firestore, counterId: string): Promise<void> {
  await db.runTransaction(
    async (tx) => {
      const parent = await tx.get(counterRef(db, counterId));
      const numShards = parent.get("numShards") as number;
      const shards = await tx.getAll(...shardIds(numShards).map((s) => shardRef(db, counterId, s)));
      let coveredUntil = parent.updateTime!;
      for (const shard of shards) if (shard.updateTime!.valueOf() > coveredUntil.valueOf()) coveredUntil = shard.updateTime!;
      for (const shard of shards) tx.set(shard.ref, { count: 0 });
      tx.update(parent.ref, { total: 0, resetAt: FieldValue.serverTimestamp(), "rollup.readTime": coveredUntil });
    },
    { maxAttempts: 20 },
  );
}
