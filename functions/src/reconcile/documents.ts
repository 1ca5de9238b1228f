// Reconcile, a document counter (DOCUMENT_COUNTERS): its shards against its documents, both read at one
// read time: `count()` of the documents that match the rule (`sum()` of its field), from the one
// collection that holds them. With `fix`, a difference is repaired by the backfill of that counter
// (documents/backfill.ts: exact while the triggers run and the app writes), and checked again.
import { AggregateField, type Firestore, type Query } from "firebase-admin/firestore";
import { backfillDocuments } from "../documents/backfill";
import { firestoreDocumentStore } from "../documents/firestore-store";
import { bindingOfCounter, listingOf } from "../model/document-match";
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
  const report = await backfillDocuments(firestoreDocumentStore(db), rules, { counter: counterId, newCounter: options.newCounter });
  const problems = report.rules.flatMap((r) => r.problems);
  return { ...(await countAtOnce(db, counterId, rule)), backfill: { counted: report.counted, takenOut: report.takenOut, problems } };
}

/** The documents' count (or sum) and the shard sum, in one read-only transaction: at one read time, without a lock. */
async function countAtOnce(db: Firestore, counterId: string, rule: DocumentRule): Promise<Omit<DocumentsCheck, "backfill">> {
  const listing = listingOf(rule.document, bindingOfCounter(rule, counterId));
  let query: Query | null = null;
  if ("collection" in listing) {
    query = db.collection(listing.collection);
    for (const condition of rule.conditions) query = query.where(condition.field, "==", condition.value);
  }
  return db.runTransaction(
    async (tx) => {
      const shards = await tx.get(shardsRef(db, counterId).aggregate({ sum: AggregateField.sum("count") }));
      const shardSum = shards.data().sum;
      if (query === null) return { rule: rule.source, documents: null, shardSum, drift: null };
      const counted = rule.field === null ? (await tx.get(query.count())).data().count : (await tx.get(query.aggregate({ sum: AggregateField.sum(rule.field) }))).data().sum;
      return { rule: rule.source, documents: counted, shardSum, drift: shardSum - counted };
    },
    { readOnly: true },
  );
}
