// A counter created for an id that EXTENSION_COUNTERS names (createCounter, the admin entry, AUTO_CREATE:
// create.ts, writeNewCounter) settles, in the transaction that creates it, what it takes of the
// firestore-counter extension's field: for each source (a document and field whose count moves to this id),
// the field's value when no record says the id settled it before, with the record (model/extension-field.ts
// says why that takes the field at most once per id, whatever the order of steps). So a counter made before
// migrate-extension or the fold trigger ran starts at the extension's value, and its mirror writing the
// total back into that field is never taken as the extension's history. A unique counter takes nothing (it
// counts members; the fold moves nothing into it either).
import { FieldValue, type DocumentReference, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { CounterError } from "../model/errors";
import { fieldDecision } from "../model/extension-field";
import type { ExtensionSource } from "../model/extension-rules";
import type { MirrorTarget } from "../model/mirror-rules";
import { extensionRecordRef } from "../model/paths";
import { fieldAmount } from "../model/extension-data";

/**
 * The record of what a counter id took of an extension's field (model/paths.ts, extensionRecordRef;
 * model/extension-field.ts says when it is written and why once): the source, what was taken (0: left, or
 * nothing there) and when. Written with create(), here and by a fold (extension/fold.ts), in the write that
 * adds what it says was taken; it outlives deleteCounter (counters/deletion.ts).
 */
export function extensionRecord(source: ExtensionSource, taken: number): Record<string, unknown> {
  return { document: source.document, field: source.field, taken, takenAt: FieldValue.serverTimestamp() };
}

/** Each source's document and record as the creating transaction read them (extensionRefs' order). */
export type ExtensionReads = readonly (DocumentSnapshot | undefined)[];

/** The documents to read in the creating transaction: each source's document, then its record. */
export function extensionRefs(db: Firestore, counter: { unique: boolean; extension?: readonly ExtensionSource[] }): DocumentReference[] {
  if (counter.unique) return [];
  return (counter.extension ?? []).flatMap((source) => [db.doc(source.document), extensionRecordRef(db, source.counterId, source.document, source.field)]);
}

export interface Settled {
  /** What the new counter takes of the sources' fields, in all. */
  taken: number;
  /** Whether a mirror target is a field whose value the counter took now (it already shows it: left as it is). */
  keeps(target: MirrorTarget): boolean;
}

/**
 * Decides, from `reads`, what the new counter `counterId` takes of each source, and writes the records (with
 * create(): the transaction fails if one appeared since). Throws failed-precondition, naming the document
 * and field, when a field holds something that is not an integer: nothing is written.
 */
export function settleExtension(tx: Transaction, db: Firestore, counterId: string, counter: { unique: boolean; extension?: readonly ExtensionSource[] }, reads: ExtensionReads): Settled {
  const sources = counter.unique ? [] : (counter.extension ?? []);
  let taken = 0;
  const kept = new Set<string>();
  sources.forEach((source, i) => {
    const document = reads[2 * i];
    const record = reads[2 * i + 1];
    const field = fieldAmount(document?.data(), source.field);
    if (typeof field === "string") {
      throw new CounterError(
        "failed-precondition",
        `counter "${counterId}" takes over ${source.document}'s ${source.field} (EXTENSION_COUNTERS), which ${field.slice(field.indexOf(" holds ") + 1)}: fix the field, then create the counter`,
      );
    }
    const decision = fieldDecision({ record: record?.exists === true, parent: false }, field);
    if (decision.createRecord) tx.create(extensionRecordRef(db, counterId, source.document, source.field), extensionRecord(source, decision.taken));
    taken += decision.taken;
    if (decision.taken !== 0) kept.add(`${source.document}\u0000${source.field}`);
  });
  if (!Number.isSafeInteger(taken)) throw new CounterError("failed-precondition", `counter "${counterId}" would take over more than 2^53 - 1 from its EXTENSION_COUNTERS fields`);
  return { taken, keeps: (target) => target.value === "total" && kept.has(`${target.path}\u0000${target.field}`) };
}
