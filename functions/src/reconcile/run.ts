// Reconcile, every counter (or the ones named): pages through `counters` in id order, checks up to
// `concurrency` counters at once (counter.ts) and yields their reports in id order, so that a run over
// 100,000 counters can be followed, interrupted and resumed after the last id it printed. What the admin
// entry's reconcile() and the CLI's `firestore-exact-counter reconcile` run.
import { FieldPath, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import type { MirrorTarget } from "../model/mirror-rules";
import { ruleNaming, type DocumentRule } from "../model/document-rules";
import type { NewCounterRule } from "../model/new-counter";
import { COUNTERS, counterRef } from "../model/paths";
import { reconcileCounter, type CheckOptions, type CounterReport } from "./counter";
import { checkDocuments, checkRecounted } from "../documents/reconcile";
import type { RollupDeps } from "../rollup/types";
import { stuckAfterMsFor } from "../model/stuck";

export { STUCK_INTERVALS, STUCK_MARGIN_MS, stuckAfterMsFor } from "../model/stuck";

export interface ReconcileOptions {
  /** Repair what is wrong (default false: only report). */
  fix?: boolean;
  /** Only these counters; default: every document in `counters`, in id order. */
  counterIds?: string[];
  /** Counters read per page (default 100). */
  pageSize?: number;
  /** Counters checked at once (default 16); reports still come out in id order. */
  concurrency?: number;
  /** Resume: only counters whose id sorts after this one (ignored with counterIds). */
  startAfter?: string;
  /** A missing write older than this makes a lagging counter stuck (default: stuckAfterMsFor(1000)). */
  stuckAfterMs?: number;
  /** The clock the ages are measured with (default Date.now). */
  nowMs?: () => number;
  /** Where a counter's total is mirrored (MIRRORS): a fix writes the total there too, as the rollup does. */
  mirrors?: (counterId: string) => MirrorTarget[];
  /** The leaderboard a counter is on (LEADERBOARDS): a fix writes its entry too, as the rollup's commit does. */
  boards?: (counterId: string) => string | undefined;
  /** DOCUMENT_COUNTERS: the counters they name are checked against their documents too (documents.ts). */
  documentRules?: readonly DocumentRule[];
  /** How a fix's backfill would create a missing counter (it never does here: the counter exists). */
  newCounter?: NewCounterRule;
  /** The rollup's dependencies with the recount rules: a counter kept by recount is checked, and fixed, by a count. */
  rollup?: () => RollupDeps;
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
  const pageSize = options.pageSize ?? 100;
  let last: string | undefined = options.startAfter;
  for (;;) {
    let query = db.collection(COUNTERS).orderBy(FieldPath.documentId()).limit(pageSize);
    if (last !== undefined) query = query.startAfter(last);
    const page = await query.get();
    for (const doc of page.docs) yield doc;
    if (page.size < pageSize) return;
    last = page.docs[page.docs.length - 1]!.id;
  }
}

/**
 * Reconciles the selected counters, up to `concurrency` at once, yielding a report for each in id order:
 * once a report is yielded, every counter before it is done, so its id is a safe `startAfter` to resume.
 */
export async function* reconcile(db: Firestore, options: ReconcileOptions = {}): AsyncGenerator<CounterReport> {
  const concurrency = Math.max(1, options.concurrency ?? 16);
  const check = {
    stuckAfterMs: options.stuckAfterMs ?? stuckAfterMsFor(1000),
    nowMs: options.nowMs ?? Date.now,
    ...(options.mirrors === undefined ? {} : { mirrors: options.mirrors }),
    ...(options.boards === undefined ? {} : { boards: options.boards }),
  };
  const inFlight: Promise<CounterReport>[] = [];
  const source = counterSnapshots(db, options);
  let exhausted = false;
  try {
    for (;;) {
      while (!exhausted && inFlight.length < concurrency) {
        const next = await source.next();
        if (next.done === true) exhausted = true;
        else {
          const work = reconcileOne(db, next.value, options, check);
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

/**
 * One counter: its total against its shards; a document counter's shards against its documents first, so
 * that a fix's backfill is in the sum that the total's repair then commits.
 */
async function reconcileOne(db: Firestore, parent: DocumentSnapshot, options: ReconcileOptions, check: CheckOptions): Promise<CounterReport> {
  const fix = options.fix ?? false;
  const rule = parent.exists ? ruleNaming(options.documentRules ?? [], parent.id) : undefined;
  if (rule === undefined) return reconcileCounter(db, parent, fix, check);
  const newCounter =
    options.newCounter ??
    ((id: string) => {
      throw new Error(`counter "${id}" would be created`);
    });
  const kept = parent.get("kept") as unknown;
  if ((kept === "recount" || kept === "moving") && options.rollup !== undefined) return checkRecounted(db, parent, rule, { fix, newCounter, rollup: options.rollup });
  const documents = await checkDocuments(db, parent.id, rule, { fix, newCounter });
  // After a backfill the parent is read again: the total's repair is conditioned on the parent as it is.
  const report = await reconcileCounter(db, documents.backfill === null ? parent : await parent.ref.get(), fix, check);
  const found = documents.backfill !== null || (documents.drift !== null && documents.drift !== 0);
  const status = found && (report.status === "ok" || report.status === "lagging") ? "drift" : report.status;
  return { ...report, status, documents, fixed: report.fixed || (documents.backfill !== null && documents.drift === 0) };
}
