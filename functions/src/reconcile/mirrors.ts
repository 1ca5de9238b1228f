// Reconcile, a counter's mirrors (MIRRORS, docs/mirrors.md): every target field that holds something
// other than what the counter's parent holds, read with the parent at one read time. The backend writes a
// target's field only in the same atomic write as the parent's total (or windows), so a field present and
// different was written by someone else: a client the app's rules let write it (a post's author setting
// `commentCount: 999999`), an old trigger of the app's own. A target that does not exist, or lacks the field
// (created after the last commit: the next one fills it), is not stale. Reads the parent and the targets
// MIRRORS names for this counter, by path: nothing else of the app's.
import type { Firestore } from "firebase-admin/firestore";
import type { MirrorTarget } from "../model/mirror-rules";
import { counterRef } from "../model/paths";

/** A target field that does not hold its counter's value. */
export interface StaleMirror {
  path: string;
  field: string;
  /** What the field holds. */
  holds: unknown;
  /** What the parent holds for it: its total, or the window the target mirrors. */
  expected: number;
}

/** The stale targets of `counterId` (none when it has no targets), and the documents read to tell. */
export async function staleMirrors(db: Firestore, counterId: string, targets: readonly MirrorTarget[]): Promise<{ stale: StaleMirror[]; reads: number }> {
  if (targets.length === 0) return { stale: [], reads: 0 };
  const [parent, ...docs] = await db.getAll(counterRef(db, counterId), ...targets.map((t) => db.doc(t.path)));
  const stale: StaleMirror[] = [];
  targets.forEach((target, i) => {
    const expected = parent!.get(target.value === "total" ? "total" : `windows.${target.value}`) as unknown;
    const holds = docs[i]!.exists ? (docs[i]!.get(target.field) as unknown) : undefined;
    if (typeof expected === "number" && holds !== undefined && holds !== expected) stale.push({ path: target.path, field: target.field, holds, expected });
  });
  return { stale, reads: 1 + targets.length };
}
