// The record of what a counter took of an extension counter's field (model/extension-field.ts says when it is
// written and why it is written once): one document per document and field,
// counters/{id}/exactCounterExtension/{key} (model/paths.ts, extensionRecordRef). Written by a fold
// (fold.ts) and by the creation of a counter that EXTENSION_COUNTERS names (counters/create.ts), always with
// create(), in the write that adds what it says was taken. It outlives deleteCounter: it is a fact about the
// counter id.
import { FieldValue } from "firebase-admin/firestore";
import type { ExtensionSource } from "../model/extension-rules";

/** The record's data: the source, what was taken of the field (0: left, or nothing there) and when. */
export function extensionRecord(source: ExtensionSource, taken: number): Record<string, unknown> {
  return { document: source.document, field: source.field, taken, takenAt: FieldValue.serverTimestamp() };
}
