// What a deleted counter leaves behind, and its removal: the deletion marker
// (counters/{id}/exactCounterCleanup/pending), the members of a unique counter and their membership
// history, the idempotency records and the records of its documents (paths.ts, DOCUMENT_RECORDS). What the
// id took over from the firestore-counter extension (EXTENSION_RECORDS) stays: a fact about the id, so that
// a counter created again never takes that field a second time (model/extension-field.ts).
//
// Why a marker, and why this is exact. deleteCounter's transaction deletes the parent and the shards and
// writes the marker (markDeleted). The marker is the single source of truth for "this id is being
// deleted":
// - createCounter refuses the id while the marker exists (its transaction reads it), so there is no live
//   counter with this id while the marker exists, and so every page a cleanup deletes (each in a
//   transaction that reads the marker, below) removes only what dead counters left behind, never a new
//   counter's members.
// - Nothing can add a member, a membership or idempotency record, or a document record that counts
//   something, while the counter has no shards: each is written only in a batch with `update()` of a shard,
//   which fails on a missing one (a document record's batch may instead create the counter, asserting that
//   no marker exists: documents/; a record counting nothing that lands behind a cursor expires by its TTL).
//   A setMember racing the delete either committed before the delete's transaction (its documents are then
//   removed here) or fails on the missing shard and writes nothing. So while the marker exists, what is
//   left under the counter only shrinks.
// - The marker is removed last, in a transaction that sees nothing left. After that, a counter created
//   with the same id starts with no member and no record from before.
//
// Where each page starts: from a cursor kept in the marker, per collection (`cursors.<collection>`: the
// id of the last document deleted), never from the head. Firestore keeps a deleted document's index
// entries for a while, and a query that starts from the head skips all of them again, page after page:
// a large delete would slow down as it goes while the id stays blocked. With the cursor, each page starts
// where the last one ended, across rounds and resumed runs. Why that misses nothing: a page lists the
// first documents after the cursor, in id order, and deletes exactly those in the transaction that moves
// the cursor to the last of them; what is left only shrinks (above), so nothing can appear behind a
// cursor. The transaction moves the cursor only from the position the page was listed from: a cleanup
// running next to another (a resumed round and a late runner of the one before) finds the cursor moved,
// deletes nothing and lists again from the new position, so the pages of all of them follow one another.
// Hence "nothing after any cursor" is "nothing left", which is what the last transaction checks before it
// removes the marker.
//
// Who runs it, so that no timeout cuts it off. A cleanup runs for a bounded time (a budget well inside
// its function's timeout) and then hands off: the deleteCounter call first (most counters are done well
// within its budget), then, if documents remain, the trigger cleanupDeletedCounter (entry/
// cleanupDeletedCounter.ts), one budgeted round per event. A handoff is the marker's `round` going up by one, in a
// transaction that checks the round it takes over from: each round ends by handing off at most once, so
// a duplicated event cannot start a second chain. (Each page's update of the marker wakes the trigger
// too; it returns at once, the round being unchanged.) A round whose runner died without handing off (an
// instance lost mid-call) is resumed by the scheduled sweep (resumeStrandedCleanups) once the marker has
// not changed for longer than any round can last. Several cleanups at once are safe, only wasteful.
import {
  FieldPath,
  FieldValue,
  type DocumentSnapshot,
  type Firestore,
  type QueryDocumentSnapshot,
  type Transaction,
} from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { cleanupRef, CLEANUP, counterRef, DOCUMENT_RECORDS, isUnderCounter, MEMBERS, MEMBERSHIPS, PENDING_ID, REQUESTS } from "../model/paths";

/** Deletes per transaction: under the 500 writes a commit may hold. */
const PAGE_SIZE = 400;

/** How long the deleteCounter call cleans up before handing off (the callable's timeout is 60 s). */
export const INLINE_BUDGET_MS = 20_000;
/** How long one round of the trigger cleans up before handing off (its timeout: CLEANUP_TIMEOUT_SECONDS). */
export const ROUND_BUDGET_MS = 60_000;
export const CLEANUP_TIMEOUT_SECONDS = 300;
/** A marker unchanged for this long has no live runner: no round lasts longer than its timeout. */
const STRANDED_AFTER_MS = 2 * CLEANUP_TIMEOUT_SECONDS * 1000;

export interface Clock {
  nowMs: () => number;
}

/** Writes the marker in the deleting transaction: round 0 is the deleteCounter call's; no cursor yet. */
export function markDeleted(tx: Transaction, db: Firestore, counterId: string): void {
  tx.set(cleanupRef(db, counterId), { startedAt: FieldValue.serverTimestamp(), round: 0, removed: 0 });
}

/** The marker's round, as a transaction or a read saw it (0 if the field is missing or malformed). */
export function roundOf(marker: DocumentSnapshot): number {
  const round = marker.get("round") as unknown;
  return typeof round === "number" && Number.isSafeInteger(round) ? round : 0;
}

/** Where the next page of each collection starts: after this document id (absent: from the start). */
type Cursors = Partial<Record<string, string>>;

/** The marker's cursors, by collection id. */
function cursorsOf(marker: DocumentSnapshot): Cursors {
  const cursors: Cursors = {};
  for (const collection of LEFTOVER_COLLECTIONS) {
    const id = marker.get(new FieldPath("cursors", collection)) as unknown;
    if (typeof id === "string") cursors[collection] = id;
  }
  return cursors;
}

function sameCursors(a: Cursors, b: Cursors): boolean {
  return LEFTOVER_COLLECTIONS.every((collection) => a[collection] === b[collection]);
}

export interface CleanupProgress {
  /** True when the marker is gone: nothing is left (or another cleanup finished first). */
  done: boolean;
  /** Documents this call removed. */
  removed: number;
  /** Documents this call read (the pages it listed, the marker), as billed: a query that finds nothing is one. */
  reads: number;
}

export interface CleanupOptions {
  /** Tests: hears each page as it is listed, with the cursors it was listed from. */
  onPage?: (page: { from: Cursors; ids: { collection: string; id: string }[] }) => void;
}

/**
 * Removes what a deleted counter left behind, page by page from the marker's cursors, then the marker,
 * until done or past `deadlineMs`. Each page is deleted in a transaction that reads the marker: if
 * another cleanup finished first (the id may already belong to a new counter), this one stops without
 * deleting anything; if another moved the cursor since the page was listed, it lists again from there.
 */
export async function cleanUp(db: Firestore, counterId: string, deadlineMs: number, clock: Clock, options: CleanupOptions = {}): Promise<CleanupProgress> {
  const marker = cleanupRef(db, counterId);
  const progress = { removed: 0, reads: 0 };
  let cursors: Cursors | null = null;
  /** Collections found empty after their cursor by this call: nothing can appear in them again. */
  const exhausted = new Set<string>();
  while (clock.nowMs() < deadlineMs) {
    if (cursors === null) {
      const snap = await marker.get();
      progress.reads += 1;
      if (!snap.exists) return { done: true, ...progress };
      cursors = cursorsOf(snap);
    }
    const page = await leftovers(db, counterId, cursors, exhausted, progress);
    options.onPage?.({ from: cursors, ids: page.map((d) => ({ collection: d.ref.parent.id, id: d.id })) });
    if (page.length === 0) {
      if (await removeMarkerIfDone(db, counterId, progress)) return { done: true, ...progress };
      cursors = null; // another cleanup's page was still committing: look again from the marker
      exhausted.clear();
      continue;
    }
    const next: Cursors = { ...cursors };
    for (const doc of page) next[doc.ref.parent.id] = doc.id; // in id order: the last one of each collection
    const from: Cursors = cursors;
    const outcome = await db.runTransaction(async (tx) => {
      const snap = await tx.get(marker);
      if (!snap.exists) return "gone";
      if (!sameCursors(cursorsOf(snap), from)) return "moved";
      for (const doc of page) tx.delete(doc.ref);
      const moved: Record<string, unknown> = { removed: FieldValue.increment(page.length) };
      for (const collection of LEFTOVER_COLLECTIONS) if (next[collection] !== from[collection]) moved[`cursors.${collection}`] = next[collection];
      tx.update(marker, moved);
      return "deleted";
    });
    progress.reads += 1;
    if (outcome === "gone") return { done: true, ...progress };
    if (outcome === "moved") {
      cursors = null; // another cleanup deleted this page first: go on from where it left off
      continue;
    }
    progress.removed += page.length;
    cursors = next;
  }
  return { done: false, ...progress };
}

/** Hands the cleanup on to the next round (the trigger), if it is still at `fromRound`: true if this call handed off. */
export async function handOff(db: Firestore, counterId: string, fromRound: number): Promise<boolean> {
  return db.runTransaction(async (tx) => {
    const marker = await tx.get(cleanupRef(db, counterId));
    if (!marker.exists || roundOf(marker) !== fromRound) return false;
    tx.update(marker.ref, { round: fromRound + 1, handedOffAt: FieldValue.serverTimestamp() });
    return true;
  });
}

/**
 * One budgeted round of a cleanup, run for the event that handed it `round`. A stale or duplicated event
 * (the marker is gone, or already at another round) does nothing. Unfinished: hands off to the next round.
 */
export async function cleanupRound(
  db: Firestore,
  counterId: string,
  round: number,
  budgetMs: number,
  clock: Clock,
  options: CleanupOptions = {},
): Promise<CleanupProgress & { stale: boolean }> {
  const marker = await cleanupRef(db, counterId).get();
  if (!marker.exists || roundOf(marker) !== round) return { done: !marker.exists, removed: 0, reads: 1, stale: true };
  const progress = await cleanUp(db, counterId, clock.nowMs() + budgetMs, clock, options);
  if (!progress.done) await handOff(db, counterId, round);
  return { ...progress, reads: progress.reads + 1, stale: false };
}

/** What a deleted counter leaves behind: the collections' ids, in the order they are removed. */
const LEFTOVER_COLLECTIONS = [MEMBERS, MEMBERSHIPS, REQUESTS, DOCUMENT_RECORDS] as const;

/**
 * Up to PAGE_SIZE documents the counter left behind (names only), each collection from its cursor on, in
 * id order; adds what listing them read to `cost` and what it found empty to `exhausted`.
 */
async function leftovers(
  db: Firestore,
  counterId: string,
  cursors: Cursors,
  exhausted: Set<string>,
  cost: { reads: number },
): Promise<QueryDocumentSnapshot[]> {
  const docs: QueryDocumentSnapshot[] = [];
  for (const collection of LEFTOVER_COLLECTIONS) {
    if (docs.length >= PAGE_SIZE) break;
    if (exhausted.has(collection)) continue;
    const want = PAGE_SIZE - docs.length;
    let query = counterRef(db, counterId).collection(collection).orderBy(FieldPath.documentId()).select();
    const after = cursors[collection];
    if (after !== undefined) query = query.startAfter(after);
    const page = await query.limit(want).get();
    cost.reads += Math.max(1, page.size);
    docs.push(...page.docs);
    if (page.size < want) exhausted.add(collection);
  }
  return docs;
}

/**
 * The last step: in one transaction, removes the marker if nothing is left after its cursors. True when the
 * marker is gone (removed here, or by another cleanup); false if documents remain (delete them first). The
 * transaction matters when cleanups overlap: a cleanup that saw "nothing left" a while ago must not
 * remove the marker of a later deletion of the same id whose members are still being removed.
 */
async function removeMarkerIfDone(db: Firestore, counterId: string, cost: { reads: number }): Promise<boolean> {
  return db.runTransaction(async (tx) => {
    const marker = await tx.get(cleanupRef(db, counterId));
    cost.reads += 1;
    if (!marker.exists) return true;
    const cursors = cursorsOf(marker);
    for (const collection of LEFTOVER_COLLECTIONS) {
      let query = counterRef(db, counterId).collection(collection).orderBy(FieldPath.documentId()).select();
      const after = cursors[collection];
      if (after !== undefined) query = query.startAfter(after);
      const left = await tx.get(query.limit(1));
      cost.reads += 1;
      if (!left.empty) return false;
    }
    tx.delete(marker.ref);
    return true;
  });
}

export interface StrandedReport {
  /** Markers found. */
  pending: number;
  /** Stranded ones handed to a new round. */
  resumed: number;
  /** Documents the query returned (only markers, in a database where nothing else shares their collection id). */
  scanned: number;
  /** Documents read as billed (an empty page is one). */
  reads: number;
}

/** Markers read per page of the stranded-cleanup query. */
const STRANDED_PAGE_SIZE = 200;

/**
 * For the scheduled sweep: every pending deletion whose marker has not changed for `strandedAfterMs` has
 * no live runner (its deleteCounter call or round died before handing off); hand it to a new round. One
 * collection-group query over the markers (deletions in progress are few), in document-name order (no
 * index needed), paged by a cursor: the group's id is the backend's own (paths.ts), and a document in it
 * that is no marker is skipped without ending the paging.
 */
export async function resumeStrandedCleanups(db: Firestore, clock: Clock, strandedAfterMs = STRANDED_AFTER_MS): Promise<StrandedReport> {
  const report: StrandedReport = { pending: 0, resumed: 0, scanned: 0, reads: 0 };
  let after: QueryDocumentSnapshot | undefined;
  for (;;) {
    let query = db.collectionGroup(CLEANUP).limit(STRANDED_PAGE_SIZE);
    if (after !== undefined) query = query.startAfter(after);
    const page = await query.get();
    report.scanned += page.size;
    report.reads += Math.max(1, page.size);
    for (const marker of page.docs) {
      if (!isUnderCounter(marker.ref, CLEANUP, PENDING_ID)) continue;
      report.pending++;
      const idleMs = clock.nowMs() - marker.updateTime.toMillis();
      if (idleMs < strandedAfterMs) continue;
      const counterId = marker.ref.parent.parent!.id;
      const round = roundOf(marker);
      if (await handOff(db, counterId, round)) {
        report.resumed++;
        logger.warn("deletion cleanup resumed: its last runner stopped without handing off", {
          counterId,
          round: round + 1,
          removed: marker.get("removed") as unknown,
          idleMs,
        });
      }
    }
    if (page.size < STRANDED_PAGE_SIZE) return report;
    after = page.docs[page.docs.length - 1];
  }
}
