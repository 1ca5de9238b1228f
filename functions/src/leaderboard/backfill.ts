// A leaderboard's backfill (docs/leaderboards.md, "Counters that existed before"): every counter whose id a
// rule of the board names gets its entry at its total, and `board` on its parent, in one batch conditioned on
// the parent being the version read (so a rollup commit in between makes it read again: exact while the
// rollup runs); every entry of the board whose counter is gone or no longer named by the board is removed,
// on condition that it is unchanged since the run began (an entry written since belongs to a counter alive
// then). A second run writes nothing.
import { FieldPath, type DocumentSnapshot, type Firestore, type Query, type Timestamp } from "firebase-admin/firestore";
import { entryKey } from "../model/board";
import { GRPC, grpcCode } from "../model/errors";
import { matchTemplate, type Template } from "../model/patterns";
import type { BoardRule } from "../model/leaderboard-rules";
import { COUNTERS, counterRef, entriesRef, entryRef } from "../model/paths";
import { microsFloor } from "../model/time";
import { BOARD_FIELD, parentBoardOf, writeEntry } from "./entry-writes";

export interface BoardBackfillReport {
  board: string;
  /** Counters the board's rules name. */
  seen: number;
  /** Of those, the ones whose entry (or `board`) was missing or stale: written (or, in a dry run, to write). */
  joined: number;
  /** Entries of counters that are gone or that no rule of the board names any more: removed (or to remove). */
  removed: number;
  dryRun: boolean;
}

const PAGE = 300;
/** Attempts per counter when rollup commits keep landing between its read and its write. */
const ATTEMPTS = 10;

/** Backfills `board` from its `rules` (see the header). */
export async function backfillBoard(db: Firestore, board: string, rules: readonly BoardRule[], options: { dryRun?: boolean } = {}): Promise<BoardBackfillReport> {
  const dryRun = options.dryRun === true;
  const report: BoardBackfillReport = { board, seen: 0, joined: 0, removed: 0, dryRun };
  const named = new Set<string>();
  // When the run began: an entry written since is left as it is (see the header).
  const began = (await db.collection(COUNTERS).limit(1).get()).readTime;
  for (const rule of rules) {
    for await (const page of counterPages(db, rule.counter)) {
      const matched = page.filter((doc) => matchTemplate(rule.counter, doc.id) !== null);
      const entries = matched.length === 0 ? [] : await db.getAll(...matched.map((doc) => entryRef(db, board, doc.id)));
      for (const [i, parent] of matched.entries()) {
        named.add(entryKey(parent.id));
        report.seen++;
        if (!stale(board, parent, entries[i]!)) continue;
        if (dryRun || (await join(db, board, parent))) report.joined++;
      }
    }
  }
  report.removed = await removeOthers(db, board, named, began, dryRun);
  return report;
}

/** Whether the counter's entry (or its parent's `board`) is missing or does not hold its total. */
function stale(board: string, parent: DocumentSnapshot, entry: DocumentSnapshot): boolean {
  return parentBoardOf(parent) !== board || !entry.exists || entry.get("total") !== parent.get("total");
}

/** Writes the counter's entry and `board`, conditioned on the parent read; reads again while it keeps changing. False if it is gone. */
async function join(db: Firestore, board: string, first: DocumentSnapshot): Promise<boolean> {
  let parent = first;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) parent = await counterRef(db, first.id).get();
    const total = parent.get("total") as unknown;
    if (!parent.exists || typeof total !== "number") return false;
    const batch = db.batch();
    batch.update(parent.ref, { [BOARD_FIELD]: board }, { lastUpdateTime: parent.updateTime! });
    writeEntry(batch, db, board, parent.id, total);
    try {
      await batch.commit();
      return true;
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.NOT_FOUND) return false;
      if (code !== GRPC.FAILED_PRECONDITION) throw error;
    }
  }
  throw new Error(`backfill --board ${board}: counter "${first.id}" kept changing; run it again`);
}

/** The counters whose ids could match `pattern`, page by page in id order (a range of ids for a literal prefix). */
async function* counterPages(db: Firestore, pattern: Template): AsyncGenerator<DocumentSnapshot[]> {
  if (pattern.placeholder === null) {
    yield [await counterRef(db, pattern.prefix).get()].filter((doc) => doc.exists);
    return;
  }
  let query: Query = db.collection(COUNTERS).orderBy(FieldPath.documentId());
  // Ids are A-Z, a-z, 0-9, _ and -: every id that starts with the prefix sorts before prefix + "~".
  if (pattern.prefix !== "") query = query.where(FieldPath.documentId(), ">=", pattern.prefix).where(FieldPath.documentId(), "<", `${pattern.prefix}~`);
  query = query.select("total", BOARD_FIELD).limit(PAGE);
  let after: string | undefined;
  for (;;) {
    const page = await (after === undefined ? query : query.startAfter(after)).get();
    yield page.docs;
    if (page.size < PAGE) return;
    after = page.docs[page.size - 1]!.id;
  }
}

/** Removes the board's entries whose key is not in `named`, unchanged since `began`; how many it removed (or would). */
async function removeOthers(db: Firestore, board: string, named: ReadonlySet<string>, began: Timestamp, dryRun: boolean): Promise<number> {
  let removed = 0;
  let after: string | undefined;
  const query = entriesRef(db, board).orderBy(FieldPath.documentId()).select("changedAt").limit(PAGE);
  for (;;) {
    const page = await (after === undefined ? query : query.startAfter(after)).get();
    for (const entry of page.docs) {
      if (named.has(entry.id) || microsFloor(entry.updateTime) > microsFloor(began)) continue;
      if (dryRun) removed++;
      else {
        try {
          await entry.ref.delete({ lastUpdateTime: entry.updateTime });
          removed++;
        } catch (error) {
          // Written since it was listed: its counter wrote it, so it stays.
          if (grpcCode(error) !== GRPC.FAILED_PRECONDITION) throw error;
        }
      }
    }
    if (page.size < PAGE) return removed;
    after = page.docs[page.size - 1]!.id;
  }
}
