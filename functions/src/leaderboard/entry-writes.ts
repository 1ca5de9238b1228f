// The one write a board adds to a counter's own (docs/leaderboards.md): the counter's entry, at the total
// that same atomic write gives the counter, and `board` on its parent; or the entry's removal, in the write
// that deletes the counter. Every writer of a total carries it in its batch or transaction: the rollup's
// commit (rollup/firestore-parent.ts) and reconcile's repair through it, a reset (counters/reset.ts), a
// creation (counters/create.ts, and a fold's: extension/fold.ts), a deletion (counters/delete.ts) and the
// backfill (leaderboard/backfill.ts). So an entry holds its counter's total at every read time: a summary
// counted at or after a write counts it exactly (model/board-buckets.ts).
import { FieldValue, type DocumentData, type DocumentReference, type Firestore } from "firebase-admin/firestore";
import { entryRef } from "../model/paths";

/** A batch or a transaction: what an entry's write goes into. */
export interface EntryWriter {
  set(ref: DocumentReference, data: DocumentData): unknown;
  delete(ref: DocumentReference): unknown;
}

/** The parent's field that names its board: written with the entry, what a rank read starts from. */
export const BOARD_FIELD = "board";

/** The counter's entry on `board` at `total`, in `writer` (whose own write gives the counter that total and sets `board`). */
export function writeEntry(writer: EntryWriter, db: Firestore, board: string, counterId: string, total: number): void {
  writer.set(entryRef(db, board, counterId), { total, changedAt: FieldValue.serverTimestamp() });
}

/**
 * The counter's entries removed, in the write that deletes it: on the board its parent names (where its
 * entry is) and on the board the params put it on now, if another (a rule changed since).
 */
export function deleteEntries(writer: EntryWriter, db: Firestore, counterId: string, boards: readonly (string | null | undefined)[]): void {
  for (const board of new Set(boards)) if (typeof board === "string") writer.delete(entryRef(db, board, counterId));
}

/** The parent's `board` as read; null when absent or not a string. */
export function parentBoardOf(parent: { get(field: string): unknown }): string | null {
  const board = parent.get(BOARD_FIELD);
  return typeof board === "string" ? board : null;
}
