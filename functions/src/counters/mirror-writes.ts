// The one module that writes mirror targets (MIRRORS, mirror-rules.ts says where): every write of a
// counter's `total` writes the same value (or the window it names, mirror-rules.ts) to each existing target
// in the same atomic write. Used by the callables that write a total (create.ts, reset.ts, delete.ts: in
// their transaction, after reading the targets), by the rollup's commit (rollup/firestore-store.ts: in its
// batch, the targets found missing asserted still absent; rollup/mirrored.ts says why that is exact), and by
// the midnight commit (rollup/firestore-parent.ts: in its transaction, only the values that differ from
// what a target holds). A target document is never created: a missing one is skipped with a warning.
import type { DocumentData, DocumentReference, DocumentSnapshot, FieldValue, Firestore, UpdateData, WriteBatch } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import type { MirrorTarget } from "../model/mirror-rules";
import type { Windows } from "../model/windows";

/** The targets' documents, to read in the transaction (or the read) before the write. */
export function mirrorRefs(db: Firestore, mirrors: readonly MirrorTarget[]): DocumentReference[] {
  return mirrors.map((target) => db.doc(target.path));
}

/** What writeMirrors needs of a transaction or a batch. */
interface Updater {
  update(ref: DocumentReference, data: UpdateData<DocumentData>): unknown;
}

/**
 * Writes `value` (0, or a delete) to each target whose snapshot (read with mirrorRefs, in the same order)
 * exists, and warns of the others (not for a delete: it has nothing to take from a document that is gone,
 * such as the post whose deletion deletes its counters). The total and, on a windowed counter, every window are all that value
 * (created or reset: 0; deleted: gone). A window's target on a counter that is not windowed is left as it
 * is, as in the rollup's commit (writeTargets): that counter has no such window, and a 0 there would read
 * as "no views this week" (a WINDOWED_COUNTERS typo would otherwise zero a trending field).
 */
export function writeMirrors(
  tx: Updater,
  counterId: string,
  mirrors: readonly MirrorTarget[],
  snaps: readonly (DocumentSnapshot | undefined)[],
  value: number | FieldValue,
  counter: { windowed: boolean },
): void {
  mirrors.forEach((target, i) => {
    const snap = snaps[i];
    if (target.value !== "total" && !counter.windowed) logWindowOfPlainCounter(counterId, target);
    else if (snap?.exists) tx.update(snap.ref, { [target.field]: value });
    else if (typeof value === "number") logMissingMirror(counterId, target);
  });
}

/** The warning for a window's mirror on a counter that is not windowed: its target is left as it is. */
function logWindowOfPlainCounter(counterId: string, target: MirrorTarget): void {
  logger.warn("mirror of a window on a counter that is not windowed; left as it is (add the id's pattern to WINDOWED_COUNTERS)", {
    counterId,
    mirrorPath: target.path,
    mirrorField: target.field,
    window: target.value,
  });
}

/** What a commit writes: the total, and the windows of a windowed counter (null otherwise). */
export interface MirrorValues {
  total: number;
  windows: Windows | null;
}

/**
 * The value a target mirrors: the total, or the window it names; undefined for a window's target on a
 * counter that is not windowed (warned: there is no such window to mirror, the target is left as it is).
 */
export function mirroredValue(counterId: string, target: MirrorTarget, values: MirrorValues): number | undefined {
  if (target.value === "total") return values.total;
  if (values.windows !== null) return values.windows[target.value];
  logWindowOfPlainCounter(counterId, target);
  return undefined;
}

/**
 * The rollup's commit: each target of `present` gets its value (update: it must exist), and each of
 * `absent` is asserted absent.
 */
export function writeTargets(
  batch: WriteBatch,
  db: Firestore,
  counterId: string,
  present: readonly MirrorTarget[],
  absent: readonly string[],
  values: MirrorValues,
): void {
  for (const target of present) {
    const value = mirroredValue(counterId, target, values);
    if (value !== undefined) batch.update(db.doc(target.path), { [target.field]: value });
  }
  for (const path of absent) batch.delete(db.doc(path), { exists: false });
}

/**
 * The fields of one existing target document (`targets`: the mirrors that name it) whose value differs from
 * what the document holds: what a write that skips unchanged values writes (the midnight commit's, read in
 * its transaction). Empty when the document holds every value already.
 */
export function differingValues(counterId: string, doc: DocumentSnapshot, targets: readonly MirrorTarget[], values: MirrorValues): Record<string, number> {
  const update: Record<string, number> = {};
  for (const target of targets) {
    const value = mirroredValue(counterId, target, values);
    if (value !== undefined && doc.get(target.field) !== value) update[target.field] = value;
  }
  return update;
}

/** The warning for a mirror target that does not exist: the counter's total is written, its mirror skipped. */
export function logMissingMirror(counterId: string, target: MirrorTarget): void {
  logger.warn("mirror target does not exist; the total is committed without it (a target is never created)", {
    counterId,
    mirrorPath: target.path,
    mirrorField: target.field,
  });
}
