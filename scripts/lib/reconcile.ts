// Reconcile: compares every counter's total with the sum of its shards and, with `fix`, writes the sum
// (a regular rollup commit, conditioned on the parent being unchanged). Used by scripts/reconcile.ts.
import { FieldPath, FieldValue, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import { GRPC, grpcCode } from "../../functions/src/counters/errors";
import { COUNTERS, counterRef, shardsRef } from "../../functions/src/counters/paths";
import { microsCeil } from "../../functions/src/counters/plan";
import { commitTotal, coveredUntilUs, sumShards } from "../../functions/src/counters/rollup";
import { shardIds } from "../../functions/src/counters/shards";

/**
 * ok: total equals the shard sum. lagging: it does not, but a shard was written after the sum the total
 * holds, so a rollup is still due (normal for about one interval). drift: it does not although the total
 * claims to cover every shard write: a real inconsistency. overflow: the sum is beyond 2^53 - 1.
 */
export type Status = "ok" | "lagging" | "drift" | "overflow" | "missing";

export interface CounterReport {
  counterId: string;
  status: Status;
  total: number | null;
  sum: number | null;
  /** total − sum, or null when either is unknown. */
  drift: number | null;
  numShards: number | null;
  /** Shard documents with ids outside 0 … numShards-1. */
  strayShards: string[];
  /** Shard ids 0 … numShards-1 without a document. */
  missingShards: string[];
  fixed: boolean;
}

export interface ReconcileOptions {
  fix?: boolean;
  /** Only these counters; default: every document in `counters`, in id order. */
  counterIds?: string[];
  pageSize?: number;
  /** Counters checked at once (default 16); reports still come out in id order. */
  concurrency?: number;
  /** Resume: only counters whose id sorts after this one (ignored with counterIds). */
  startAfter?: string;
}

/** How many counters a run will visit: one count() aggregation (1 read per 1,000 counters). */
export async function countCounters(db: Firestore, options: Pick<ReconcileOptions, "counterIds" | "startAfter"> = {}): Promise<number> {
  if (options.counterIds !== undefined) return options.counterIds.length;
  let query = db.collection(COUNTERS).orderBy(FieldPath.documentId());
  if (options.startAfter !== undefined) query = query.startAfter(options.startAfter);
  return (await query.count().get()).data().count;
}

async function* counterSnapshots(db: Firestore, options: ReconcileOptions): AsyncGenerator<DocumentSnapshot> {
  if (options.counterIds !== undefined) {
    for (const id of options.counterIds) yield await counterRef(db, id).get();
    return;
  }
  let last: string | undefined = options.startAfter;
  for (;;) {
    let query = db.collection(COUNTERS).orderBy(FieldPath.documentId()).limit(options.pageSize ?? 100);
    if (last !== undefined) query = query.startAfter(last);
    const page = await query.get();
    for (const doc of page.docs) yield doc;
    if (page.size < (options.pageSize ?? 100)) return;
    last = page.docs[page.docs.length - 1]!.id;
  }
}

/** Checks one counter (and fixes it if asked). */
export async function reconcileCounter(db: Firestore, parent: DocumentSnapshot, fix: boolean): Promise<CounterReport> {
  const counterId = parent.id;
  const report: CounterReport = {
    counterId,
    status: "missing",
    total: null,
    sum: null,
    drift: null,
    numShards: null,
    strayShards: [],
    missingShards: [],
    fixed: false,
  };
  if (!parent.exists) return report;
  const total = parent.get("total") as unknown;
  const numShards = parent.get("numShards") as unknown;
  report.total = typeof total === "number" ? total : null;
  report.numShards = typeof numShards === "number" ? numShards : null;

  const shards = await shardsRef(db, counterId).select().get();
  const present = new Set(shards.docs.map((d) => d.id));
  const expected = new Set(report.numShards === null ? [] : shardIds(report.numShards));
  report.strayShards = [...present].filter((id) => !expected.has(id)).sort();
  report.missingShards = [...expected].filter((id) => !present.has(id));
  const lastShardWriteUs = Math.max(0, ...shards.docs.map((d) => microsCeil(d.updateTime)));

  const sum = await sumShards(db, counterId);
  if (sum.overflow) {
    report.status = "overflow";
    return report;
  }
  report.sum = sum.total;
  report.drift = report.total === null ? null : report.total - sum.total;
  if (report.drift === 0) {
    report.status = "ok";
    return report;
  }
  const coveredUs = coveredUntilUs(parent);
  report.status = coveredUs !== null && coveredUs >= lastShardWriteUs ? "drift" : "lagging";

  if (fix) {
    try {
      await commitTotal(parent, sum, { "rollup.reconciledAt": FieldValue.serverTimestamp() });
      report.fixed = true;
    } catch (error) {
      const code = grpcCode(error);
      // The parent changed (a rollup committed) or vanished while we looked: check again next run.
      if (code !== GRPC.FAILED_PRECONDITION && code !== GRPC.NOT_FOUND) throw error;
    }
  }
  return report;
}

/**
 * Reconciles the selected counters, up to `concurrency` at once, yielding a report for each in id order:
 * once a report is yielded, every counter before it is done, so its id is a safe `startAfter` to resume.
 */
export async function* reconcile(db: Firestore, options: ReconcileOptions = {}): AsyncGenerator<CounterReport> {
  const concurrency = Math.max(1, options.concurrency ?? 16);
  const inFlight: Promise<CounterReport>[] = [];
  const source = counterSnapshots(db, options);
  let exhausted = false;
  try {
    for (;;) {
      while (!exhausted && inFlight.length < concurrency) {
        const next = await source.next();
        if (next.done === true) exhausted = true;
        else {
          const work = reconcileCounter(db, next.value, options.fix ?? false);
          work.catch(() => undefined); // awaited in order below; this only avoids an unhandled rejection meanwhile
          inFlight.push(work);
        }
      }
      const head = inFlight.shift();
      if (head === undefined) return;
      yield await head;
    }
  } finally {
    await Promise.allSettled(inFlight);
  }
}
