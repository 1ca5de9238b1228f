// A migration from the firestore-counter extension: every document one rule names that has a count (the
// field, even at 0, or documents in its `_counter_shards_`) is folded into its counter (fold.ts), one after the other
// with a few at once, the results in a stable order. Which documents: those of the rule's collection that
// hold the field, and every parent of a `_counter_shards_` document that the rule names, including parents
// that do not exist themselves (the extension's clients write shards under any document; its workers
// created the document only when folding). A document of the rule's collection whose id cannot become a
// counter id is reported, not passed over. Re-runnable: a second run finds the field taken and moves what
// the shards received since.
import { FieldPath, type DocumentSnapshot, type Firestore, type Query } from "firebase-admin/firestore";
import { foldSource, type FoldReport } from "./fold";
import { fieldSegments } from "../model/extension-data";
import type { DocumentRule } from "../model/document-rules";
import type { NewCounterRule } from "../model/new-counter";
import { collectionIdOf, collectionOf, EXTENSION_SHARDS, nearMiss, sourceFor, type ExtensionRule } from "../model/extension-rules";

export interface MigrateOptions {
  dryRun: boolean;
  newCounter: NewCounterRule;
  /** DOCUMENT_COUNTERS: the counters they name take no extension amount (fold.ts). */
  documentRules?: readonly DocumentRule[];
  /** Documents folded at once (default 8). */
  concurrency?: number;
  /** Shard documents per page and batch (fold.ts). */
  pageSize?: number;
}

export type MigrationItem =
  | { kind: "folded"; report: FoldReport }
  /** A document with a count that no counter id can stand for (its id holds other characters, or is too long). */
  | { kind: "unmapped"; document: string }
  /** An unexpected error while folding this document; nothing of the page it was on was written. */
  | { kind: "failed"; document: string; counterId: string; error: string };

/** What the listing saw, for progress and the summary. */
export interface MigrationScan {
  /** Documents of the rule's collection listed. */
  documents: number;
  /** `_counter_shards_` documents listed (in the whole database: the extension's shards are found by collection group). */
  shardDocuments: number;
}

/** Documents listed per query page. */
const LIST_PAGE = 500;

/** Folds every document `rule` names that has a count; yields one item per such document, in listing order. */
export async function* migrate(db: Firestore, rule: ExtensionRule, options: MigrateOptions, scan: MigrationScan = { documents: 0, shardDocuments: 0 }): AsyncGenerator<MigrationItem> {
  const withShards = new Set<string>();
  const unmapped = new Set<string>();
  for await (const shard of pages(db.collectionGroup(EXTENSION_SHARDS).select())) {
    scan.shardDocuments++;
    const parent = shard.ref.parent.parent;
    if (parent === null) continue;
    if (sourceFor(rule, parent.path) !== null) withShards.add(parent.path);
    else if (nearMiss(rule, parent.path)) unmapped.add(parent.path);
  }

  const window: Promise<MigrationItem>[] = [];
  const concurrency = options.concurrency ?? 8;
  const fold = (document: string): Promise<MigrationItem> => foldOne(db, rule, document, options);

  const field = new FieldPath(...fieldSegments(rule.field));
  for await (const doc of listDocuments(db, rule, field)) {
    scan.documents++;
    const path = doc.ref.path;
    const hasField = doc.get(field) !== undefined;
    if (sourceFor(rule, path) === null) {
      if (hasField && nearMiss(rule, path)) unmapped.add(path);
      continue;
    }
    if (!withShards.delete(path) && !hasField) continue;
    window.push(fold(path));
    if (window.length >= concurrency) yield await window.shift()!;
  }
  // Parents with shards that the listing did not return: documents that do not exist (or appeared since).
  for (const path of withShards) {
    window.push(fold(path));
    if (window.length >= concurrency) yield await window.shift()!;
  }
  while (window.length > 0) yield await window.shift()!;
  for (const document of [...unmapped].sort()) yield { kind: "unmapped", document };
}

async function foldOne(db: Firestore, rule: ExtensionRule, document: string, options: MigrateOptions): Promise<MigrationItem> {
  const source = sourceFor(rule, document)!;
  try {
    const report = await foldSource(db, source, {
      by: "migration",
      day: null,
      newCounter: options.newCounter,
      dryRun: options.dryRun,
      ...(options.documentRules === undefined ? {} : { documentRules: options.documentRules }),
      ...(options.pageSize ? { pageSize: options.pageSize } : {}),
    });
    return { kind: "folded", report };
  } catch (error) {
    return { kind: "failed", document, counterId: source.counterId, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The documents the rule's pattern can name, with the counted field only: its collection, or its collection group. */
function listDocuments(db: Firestore, rule: ExtensionRule, field: FieldPath): AsyncGenerator<DocumentSnapshot> {
  if (rule.document.placeholder === null) return single(db, rule.document.source);
  const collection = collectionOf(rule);
  const query = collection !== null ? db.collection(collection) : db.collectionGroup(collectionIdOf(rule));
  return pages(query.select(field));
}

async function* single(db: Firestore, path: string): AsyncGenerator<DocumentSnapshot> {
  // A literal pattern names one document: listed whether or not it exists (its shards may; a missing
  // document's snapshot holds no field).
  yield await db.doc(path).get();
}

/** Every document of `query`, in document-name order, page by page. */
async function* pages(query: Query): AsyncGenerator<DocumentSnapshot> {
  let after: DocumentSnapshot | undefined;
  for (;;) {
    let page = query.orderBy(FieldPath.documentId()).limit(LIST_PAGE);
    if (after !== undefined) page = page.startAfter(after);
    const snap = await page.get();
    yield* snap.docs;
    if (snap.size < LIST_PAGE) return;
    after = snap.docs[snap.size - 1];
  }
}
