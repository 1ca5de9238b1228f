// The midnight commit's reads and writes over Firestore (midnight.ts): the query for the counters whose
// windows moved, and the conditioned write of a counter's moved windows with only the mirror values that
// changed (RollupStore.moveWindows; firestore-store.ts hands it on to here).
import { Timestamp, type DocumentReference, type Firestore, type QueryDocumentSnapshot } from "firebase-admin/firestore";
import { GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { differingValues, logMissingMirror, type MirrorValues } from "../counters/mirror-writes";
import { COUNTERS, counterRef, WINDOWS_MOVE_AT } from "../model/paths";
import type { WindowsState } from "../model/windows";
import type { FindMovedWindows } from "./midnight";
import { parentReadOf, timestampOf, windowsFields } from "./firestore-parent";
import type { MoveResult, ParentRead } from "./store";

/**
 * A windowed counter's windows moved to a later day (midnight.ts), on condition that the parent is still at
 * `parent.version`: one update without mirrors; with them, one transaction (moveMirrored).
 */
export async function moveWindows(db: Firestore, counterId: string, parent: ParentRead, moved: WindowsState, targets: readonly MirrorTarget[]): Promise<MoveResult> {
  if (parent.version === null) return { kind: "gone", targetWrites: 0, reads: 0 };
  const ref = counterRef(db, counterId);
  const lastUpdateTime = timestampOf(parent.version);
  if (targets.length > 0) return await moveMirrored(ref, lastUpdateTime, moved, targets);
  try {
    await ref.update(windowsFields(moved), { lastUpdateTime });
    return { kind: "committed", targetWrites: 0, reads: 0 };
  } catch (error) {
    const code = grpcCode(error);
    if (code === GRPC.FAILED_PRECONDITION) return { kind: "changed", targetWrites: 0, reads: 0 };
    if (code === GRPC.NOT_FOUND) return { kind: "gone", targetWrites: 0, reads: 0 };
    throw error;
  }
}

/**
 * The midnight commit's query (midnight.ts): counters whose `rollup.windowsMoveAt` is at or before a time,
 * in (windowsMoveAt, name) order, paged by the last document of the page before. Its single-field index is
 * declared in firestore.indexes.json (the rest of `rollup` is not indexed).
 */
export function findMovedWindows(db: Firestore): FindMovedWindows {
  return async (atMs, limit, after) => {
    let query = db.collection(COUNTERS).where(WINDOWS_MOVE_AT, "<=", Timestamp.fromMillis(atMs)).orderBy(WINDOWS_MOVE_AT).limit(limit);
    if (after !== undefined) query = query.startAfter(after as QueryDocumentSnapshot);
    const snap = await query.get();
    return {
      counters: snap.docs.map((doc) => ({ counterId: doc.id, parent: parentReadOf(doc) })),
      reads: Math.max(1, snap.size),
      next: snap.size < limit ? null : snap.docs[snap.size - 1]!,
    };
  };
}

/**
 * A mirrored counter's move of its windows: one transaction reads the parent and the target documents
 * (locked until it commits, so none can appear, disappear or change between the read and the write) and
 * writes the parent's windows and, on each target that exists, only the values that differ from what it
 * holds: a target that appeared since the last commit gets them all, one that holds them is not written.
 * The total stays as it is, so its targets are written only where they lost it.
 */
async function moveMirrored(ref: DocumentReference, lastUpdateTime: Timestamp, moved: WindowsState, targets: readonly MirrorTarget[]): Promise<MoveResult> {
  const db = ref.firestore;
  const paths = [...new Set(targets.map((t) => t.path))];
  return await db.runTransaction(async (tx) => {
    const [parent, ...docs] = await tx.getAll(ref, ...paths.map((path) => db.doc(path)));
    const reads = 1 + paths.length;
    if (!parent!.exists) return { kind: "gone", targetWrites: 0, reads };
    if (!parent!.updateTime!.isEqual(lastUpdateTime)) return { kind: "changed", targetWrites: 0, reads };
    const total = parent!.get("total") as unknown;
    if (typeof total !== "number") throw new Error(`counter "${ref.id}" has no numeric total to mirror`);
    const values: MirrorValues = { total, windows: moved.windows };
    let targetWrites = 0;
    docs.forEach((doc, i) => {
      const mirrors = targets.filter((t) => t.path === paths[i]);
      if (!doc.exists) return mirrors.forEach((target) => logMissingMirror(ref.id, target));
      const update = differingValues(ref.id, doc, mirrors, values);
      if (Object.keys(update).length === 0) return;
      tx.update(doc.ref, update);
      targetWrites++;
    });
    tx.update(ref, windowsFields(moved));
    return { kind: "committed", targetWrites, reads };
  });
}
