// Reconcile, a document counter (DOCUMENT_COUNTERS): its shards against its documents, both read at one
// read time: `count()` of the documents that match the rule (`sum()` of its field), from the one
// collection that holds them. With `fix`, a difference is repaired by the backfill of that counter
// (documents/backfill.ts: exact while the triggers run and the app writes), and checked again.
// `sum()` adds every number (2.5, 1e20) where the counter adds safe integers only (match.ts):
// when it differs from the shards, the field is read from each document at the same read time and summed as
// the counter sums it, so a rating of 2.5 is no drift; only a real difference costs those reads.
import { AggregateField, FieldPath, type DocumentSnapshot, type Firestore, type Query, type Transaction } from "firebase-admin/firestore";
import { emptyReport, type CounterReport } from "../reconcile/counter";
import { recountQuery } from "../rollup/firestore-store";
import type { RollupDeps } from "../rollup/types";
import { BackfillRefused, backfillDocuments } from "./backfill";
import { firestoreDocumentStore } from "./firestore-store";
import { bindingOfCounter, contributionOf, listingOf } from "./match";
import type { DocumentRule } from "../model/document-rules";
import type { NewCounterRule } from "../model/new-counter";
import { shardsRef } from "../model/paths";

export interface DocumentsCheck {
  /** The rule that names the counter, as written. */
  rule: string;
  /**
   * count() (or sum() of the field) of its documents that match, at one read time; null when its documents
   * lie in more than one collection (a wildcard before the counter's own), which no single query counts.
   */
  documents: number | null;
  /** The sum of the shards' counts at that read time. */
  shardSum: number;
  /** shardSum − documents; null when documents is null. Events of the last moments may still be on their way. */
  drift: number | null;
  /** With fix, when it drifted: what the backfill of the counter counted and took out. */
  backfill: { counted: number; takenOut: number; problems: string[] } | null;
}

/** The counter `counterId` (which `rule` names) against its documents; with `fix`, a drift backfilled and checked again. */
export async function checkDocuments(db: Firestore, counterId: string, rule: DocumentRule, options: { fix: boolean; newCounter: NewCounterRule }): Promise<DocumentsCheck> {
  const first = await countAtOnce(db, counterId, rule);
  if (!options.fix || first.drift === null || first.drift === 0) return { ...first, backfill: null };
  const rules = [rule];
  let report;
  try {
    report = await backfillDocuments(firestoreDocumentStore(db), rules, { counter: counterId, newCounter: options.newCounter });
  } catch (error) {
    // What looks like a typo in the rule is not repaired here: the backfill of the counter, forced, does it if it is right.
    if (!(error instanceof BackfillRefused)) throw error;
    return { ...first, backfill: { counted: 0, takenOut: 0, problems: [`${error.warnings.join("; ")}; if that is right: backfill --counter ${counterId} --force`] } };
  }
  const problems = report.rules.flatMap((r) => r.problems);
  return { ...(await countAtOnce(db, counterId, rule)), backfill: { counted: report.counted, takenOut: report.takenOut, problems } };
}

/**
 * A counter kept by recount (recount.ts): its total against the count() of its documents, read at one read time
 * with the parent (so a change after the total's own read time shows as drift until the next commit counts it);
 * with `fix`, a drift is repaired by the counter's backfill (one count, committed: recount-now.ts), and checked again.
 */
export async function checkRecounted(db: Firestore, parent: DocumentSnapshot, rule: DocumentRule, options: { fix: boolean; newCounter: NewCounterRule; rollup: () => RollupDeps }): Promise<CounterReport> {
  const counterId = parent.id;
  const report = emptyReport(counterId);
  const query = options.rollup().recount?.query(counterId) ?? null;
  const check = async (): Promise<{ total: number | null; count: number | null }> => {
    if (query === null) return { total: null, count: null };
    return db.runTransaction(
      async (tx) => {
        const [snap, counted] = await Promise.all([tx.get(parent.ref), tx.get(recountQuery(db, query).count())]);
        const total = snap.get("total") as unknown;
        return { total: typeof total === "number" ? total : null, count: counted.data().count };
      },
      { readOnly: true },
    );
  };
  const first = await check();
  let seen = first;
  report.reads += 1 + Math.max(1, Math.ceil((seen.count ?? 0) / 1000));
  const driftOf = (at: typeof seen) => (at.total === null || at.count === null ? null : at.total - at.count);
  const drift = () => driftOf(seen);
  const documents: DocumentsCheck = { rule: rule.source, documents: seen.count, shardSum: seen.total ?? 0, drift: drift(), backfill: null };
  if (options.fix && documents.drift !== null && documents.drift !== 0) {
    // The counter's backfill counts it again (recount-now.ts), after the same check for a typo in the rule as
    // any backfill: a rule whose condition names a field no document has must not zero the count.
    try {
      const result = await backfillDocuments(firestoreDocumentStore(db), [rule], { counter: counterId, newCounter: options.newCounter, rollup: options.rollup });
      documents.backfill = { counted: result.counted, takenOut: result.takenOut, problems: result.rules.flatMap((r) => r.problems) };
    } catch (error) {
      if (!(error instanceof BackfillRefused)) throw error;
      documents.backfill = { counted: 0, takenOut: 0, problems: [`${error.warnings.join("; ")}; if that is right: backfill --counter ${counterId} --force`] };
    }
    seen = await check();
    Object.assign(documents, { documents: seen.count, shardSum: seen.total ?? 0, drift: drift() });
    report.fixed = documents.drift === 0;
  }
  // What was found (as for a counter kept by records: a drift repaired is reported as the drift it was, FIXED);
  // `documents` says how it stands after the repair.
  report.total = first.total;
  report.sum = first.count;
  report.drift = driftOf(first);
  report.numShards = typeof parent.get("numShards") === "number" ? (parent.get("numShards") as number) : null;
  report.status = report.drift === null ? "missing" : report.drift === 0 ? "ok" : "drift";
  return { ...report, documents };
}

/** The documents' count (or sum) and the shard sum, in one read-only transaction: at one read time, without a lock. */
async function countAtOnce(db: Firestore, counterId: string, rule: DocumentRule): Promise<Omit<DocumentsCheck, "backfill">> {
  const binding = bindingOfCounter(rule, counterId);
  const listing = listingOf(rule.document, binding);
  let query: Query | null = null;
  if ("collection" in listing) {
    query = db.collection(listing.collection);
    for (const condition of rule.conditions) query = query.where(condition.field, "==", condition.value);
    // A counter id from a field (`{=author}`): its documents are those whose field holds its id part.
    if (rule.idField !== null) query = query.where(rule.idField, "==", binding[`=${rule.idField}`]);
  }
  return db.runTransaction(
    async (tx) => {
      const shards = await tx.get(shardsRef(db, counterId).aggregate({ sum: AggregateField.sum("count") }));
      const shardSum = shards.data().sum;
      if (query === null) return { rule: rule.source, documents: null, shardSum, drift: null };
      let counted = rule.field === null ? (await tx.get(query.count())).data().count : (await tx.get(query.aggregate({ sum: AggregateField.sum(rule.field) }))).data().sum;
      if (rule.field !== null && counted !== shardSum) counted = await safeSum(tx, query, rule);
      return { rule: rule.source, documents: counted, shardSum, drift: shardSum - counted };
    },
    { readOnly: true },
  );
}

/** Documents read per page when a sum is checked document by document (only the fields the rule reads). */
const SUM_PAGE = 1000;

/** The rule's field summed over `query`'s documents as the counter sums it (a value that is not a safe integer adds 0), in `tx`'s read time. */
async function safeSum(tx: Transaction, query: Query, rule: DocumentRule): Promise<number> {
  let sum = 0;
  let after: string | undefined;
  for (;;) {
    // The fields the rule reads, so that contributionOf sees each document as the counter does.
    let page = query.select(rule.field!, ...rule.conditions.map((c) => c.field)).orderBy(FieldPath.documentId()).limit(SUM_PAGE);
    if (after !== undefined) page = page.startAfter(after);
    const docs = (await tx.get(page)).docs;
    for (const doc of docs) sum += contributionOf(rule, doc.data()).value;
    if (docs.length < SUM_PAGE) return sum;
    after = docs[docs.length - 1]!.id;
  }
}
