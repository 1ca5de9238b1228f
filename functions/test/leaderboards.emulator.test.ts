// Leaderboards over the Firestore emulator, with the functions wrapped (test/helpers/functions.ts): the
// callables and rollupTotal write each counter's entry in the atomic write that sets its total, rollupBoard
// rolls the board's summary up from those entries (events delivered twice and out of order), and every rank
// rankOf reads equals the rank counted from the counters themselves: through increments, a reset, a delete
// and a creation again; existing counters joined by backfillBoard (exact while a rollup commits, a second run
// writing nothing, orphan entries removed); and a board of 2,500 entries split into buckets of at most 1,000,
// each count exact; and a board over document counters (kept by recount, and by records), whose ranks equal
// those counted from the app's documents with count() through the triggers' writes, deletes, lost events and
// the documents' backfill. Each test has a board and counter ids of its own (LEADERBOARDS is read per call).
import { randomUUID } from "node:crypto";
import { Timestamp, type DocumentSnapshot } from "firebase-admin/firestore";
import { ADMIN, call, db, deliver, functions, rfc3339, uniqueId, withParam, writeShard, type RecordedWrite } from "../../test/helpers/functions";
import { fft } from "../../test/helpers/wrapped";
import { requireEmulators } from "../../test/helpers/emulators";
import { appCollection, documentTriggersOf, recordWrite, type DocumentWriteEvent } from "../../test/helpers/document-writes";
import { backfillBoard, backfillDocuments, rankOf } from "../src/admin";
import { firestoreDocumentStore } from "../src/documents/firestore-store";
import { entryKey, summaryOf } from "../src/model/board";
import { BUCKET_CAP } from "../src/model/board-buckets";
import { boardRef, counterRef, entriesRef, entryRef } from "../src/model/paths";
import { rollupBoard } from "../src/entry/rollupBoard";

jest.setTimeout(120_000);
beforeAll(requireEmulators);

const wrappedBoard = fft.wrap(rollupBoard) as unknown as (event: Record<string, unknown>) => Promise<unknown>;

/** A board and a counter-id prefix no other test uses, and LEADERBOARDS naming them for each test of the describe. */
function freshBoard(): { board: string; prefix: string } {
  const tag = randomUUID().slice(0, 8);
  const names = { board: `b${tag}`, prefix: `lb${tag}` };
  withParam("LEADERBOARDS", `${names.board}=${names.prefix}-{id}`);
  // Short slots: a busy board's chain ends within a few hundred ms of its last entry write.
  withParam("ROLLUP_INTERVAL_MS", "200");
  return names;
}

/** The entry as it is now (what an event's `before` holds for the next write of it). */
function entryNow(board: string, counterId: string): Promise<DocumentSnapshot> {
  return entryRef(db, board, counterId).get();
}

/** Delivers the event of the entry's last write (from `before` to what it holds now) to the wrapped rollupBoard, as the platform would. */
async function deliverEntry(board: string, counterId: string, before: DocumentSnapshot): Promise<void> {
  const after = await entryNow(board, counterId);
  const time = after.exists ? after.updateTime! : Timestamp.now();
  await wrappedBoard({ data: fft.makeChange(before, after), params: { board, entry: entryKey(counterId) }, id: randomUUID(), time: rfc3339(time) });
}

/** The rank of each counter counted from the counters themselves: 1 + those of `ids` whose total is greater. */
async function truth(ids: readonly string[]): Promise<Map<string, { rank: number; total: number }>> {
  const totals = new Map<string, number>();
  for (const id of ids) {
    const parent = await counterRef(db, id).get();
    if (parent.exists) totals.set(id, parent.get("total") as number);
  }
  return new Map([...totals].map(([id, total]) => [id, { rank: 1 + [...totals.values()].filter((t) => t > total).length, total }]));
}

async function expectRanksExact(board: string, ids: readonly string[]): Promise<void> {
  const expected = await truth(ids);
  for (const [counterId, { rank, total }] of expected) {
    await expect(rankOf(counterId)).resolves.toEqual({ board, counterId, rank, of: expected.size, total });
  }
}

/** Increments a counter's shard by `delta` and delivers the rollup's events (twice, the later one first) and then the entry's. */
async function add(board: string, counterId: string, deltas: number[]): Promise<void> {
  const before = await entryNow(board, counterId);
  const writes: RecordedWrite[] = [];
  for (const delta of deltas) writes.push(await writeShard(counterId, 0, delta));
  for (const write of [...writes].reverse()) await deliver(write);
  for (const write of writes) await deliver(write);
  await deliverEntry(board, counterId, before);
}

describe("a counter on a leaderboard", () => {
  const { board, prefix } = freshBoard();

  it("is created on its board at 0, its entry named by a hash of its id, and leaves it when deleted", async () => {
    const counterId = `${prefix}-${randomUUID().slice(0, 6)}`;
    await call(functions.createCounter, { counterId, numShards: 1 });
    const entry = await entryNow(board, counterId);
    expect(entry.id).not.toContain(counterId);
    expect(entry.data()).toEqual({ total: 0, changedAt: expect.any(Timestamp) as unknown });
    expect((await counterRef(db, counterId).get()).get("board")).toBe(board);
    await call(functions.deleteCounter, { counterId }, ADMIN);
    expect((await entryNow(board, counterId)).exists).toBe(false);
  });

  it("is off every board when no rule names it", async () => {
    const counterId = uniqueId("lb-none");
    await call(functions.createCounter, { counterId, numShards: 1 });
    expect((await counterRef(db, counterId).get()).get("board")).toBeUndefined();
    await expect(rankOf(counterId)).rejects.toMatchObject({ code: "not-found", message: expect.stringMatching(/is on no leaderboard/) as unknown });
    await expect(rankOf(uniqueId("lb-missing"))).rejects.toMatchObject({ code: "not-found", message: expect.stringMatching(/does not exist/) as unknown });
    await expect(rankOf("not an id")).rejects.toMatchObject({ code: "invalid-argument" });
  });
});

describe("ranks", () => {
  const { board, prefix } = freshBoard();

  it("equal the ranks counted from the counters through increments, duplicated and reordered events, a reset, a delete and a creation again", async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `${prefix}-p${i}`);
    for (const counterId of ids) {
      const before = await entryNow(board, counterId);
      await call(functions.createCounter, { counterId, numShards: 1 });
      await deliverEntry(board, counterId, before);
    }
    await expectRanksExact(board, ids);
    // Ties share a rank: p1 and p2 both at 5.
    const deltas = [[3, 4], [5], [2, 3], [1], [9, -2], [4]];
    for (const [i, counterId] of ids.entries()) await add(board, counterId, deltas[i]!);
    await expectRanksExact(board, ids);
    expect((await rankOf(ids[1]!)).rank).toBe((await rankOf(ids[2]!)).rank);

    let before = await entryNow(board, ids[4]!);
    await call(functions.resetCounter, { counterId: ids[4]! }, ADMIN);
    await deliverEntry(board, ids[4]!, before);
    await expectRanksExact(board, ids);

    before = await entryNow(board, ids[0]!);
    await call(functions.deleteCounter, { counterId: ids[0]! }, ADMIN);
    await deliverEntry(board, ids[0]!, before);
    await expectRanksExact(board, ids.slice(1));
    expect((await rankOf(ids[1]!)).of).toBe(5);

    before = await entryNow(board, ids[0]!);
    await call(functions.createCounter, { counterId: ids[0]!, numShards: 2 });
    await deliverEntry(board, ids[0]!, before);
    await add(board, ids[0]!, [20]);
    await expectRanksExact(board, ids);
    expect((await rankOf(ids[0]!)).rank).toBe(1);
    // The summary names no counter: its buckets and counts only.
    expect(Object.keys((await boardRef(db, board).get()).data()!).sort()).toEqual(["bounds", "counts", "of", "rollup"]);
  });
});

describe("backfillBoard", () => {
  const { board, prefix } = freshBoard();

  it("joins counters that existed before the rule, exactly while their rollup commits, and a second run writes nothing", async () => {
    const ids = Array.from({ length: 4 }, (_, i) => `${prefix}-old${i}`);
    const env = { ...process.env };
    // Created, and moved, before the board named them.
    process.env.LEADERBOARDS = "";
    const writes: RecordedWrite[] = [];
    for (const [i, counterId] of ids.entries()) {
      await call(functions.createCounter, { counterId, numShards: 1 });
      writes.push(await writeShard(counterId, 0, i + 1));
      await deliver(writes[i]!);
    }
    process.env.LEADERBOARDS = env.LEADERBOARDS;
    // An entry whose counter is gone (a rule changed, an old delete): the backfill takes it out.
    const orphan = entriesRef(db, board).doc(entryKey(`${prefix}-gone`));
    await orphan.set({ total: 99, changedAt: Timestamp.now() });
    // A shard write not rolled up yet: its commit races the backfill.
    const late = await writeShard(ids[3]!, 0, 10);
    const [report] = await Promise.all([backfillBoard(board), deliver(late)]);
    // The late write's own commit puts its counter on the board too when it lands before the backfill reads
    // it (the rollup writes the entry of a parent that names no board): either is exact.
    expect(report).toMatchObject({ board, seen: 4, removed: 1, dryRun: false });
    expect([3, 4]).toContain(report.joined);
    for (const counterId of ids) {
      const [parent, entry] = await Promise.all([counterRef(db, counterId).get(), entryNow(board, counterId)]);
      expect({ board: parent.get("board") as unknown, total: entry.get("total") as unknown }).toEqual({ board, total: parent.get("total") as unknown });
    }
    expect((await orphan.get()).exists).toBe(false);
    await expect(backfillBoard(board)).resolves.toEqual({ board, seen: 4, joined: 0, removed: 0, dryRun: false });
    await deliverEntry(board, ids[0]!, await db.doc("counters/~exactCounter/none/x").get());
    await expectRanksExact(board, ids);
  });

  it("refuses a board no rule names, and a dry run writes nothing", async () => {
    await expect(backfillBoard("nosuchboard")).rejects.toMatchObject({ code: "invalid-argument", message: expect.stringMatching(/no LEADERBOARDS rule names the board "nosuchboard"/) as unknown });
    await expect(backfillBoard("bad board")).rejects.toMatchObject({ code: "invalid-argument" });
    const counterId = `${prefix}-dry`;
    process.env.LEADERBOARDS = "";
    await call(functions.createCounter, { counterId, numShards: 1 });
    process.env.LEADERBOARDS = `${board}=${prefix}-{id}`;
    await expect(backfillBoard(board, { dryRun: true })).resolves.toMatchObject({ joined: 1, dryRun: true });
    expect((await entryNow(board, counterId)).exists).toBe(false);
  });
});

describe("a board of thousands", () => {
  const { board } = freshBoard();

  it("splits into buckets of at most 1,000 counters, each count exact, and ranks from one bucket's count", async () => {
    const totals = Array.from({ length: 2_500 }, (_, i) => (i * 7919) % 3001);
    for (let i = 0; i < totals.length; i += 500) {
      const batch = db.batch();
      totals.slice(i, i + 500).forEach((total, j) => batch.set(entriesRef(db, board).doc(`e${i + j}`), { total, changedAt: Timestamp.now() }));
      await batch.commit();
    }
    const missing = await db.doc("counters/~exactCounter/none/x").get();
    await wrappedBoard({ data: fft.makeChange(missing, await entriesRef(db, board).doc("e0").get()), params: { board, entry: "e0" }, id: randomUUID(), time: rfc3339(Timestamp.now()) });
    const summary = summaryOf((await boardRef(db, board).get()).data());
    expect(summary.of).toBe(2_500);
    expect(summary.counts.length).toBeGreaterThanOrEqual(3);
    summary.counts.forEach((n, i) => {
      const lo = i === 0 ? -Infinity : summary.bounds[i - 1]!;
      const hi = i < summary.bounds.length ? summary.bounds[i]! : Infinity;
      expect(n).toBeLessThanOrEqual(BUCKET_CAP);
      expect(n).toBe(totals.filter((t) => t >= lo && t < hi).length);
    });
    // A counter on it, at a total in the middle: its rank as counted from every total.
    const counterId = uniqueId("lb-big");
    await counterRef(db, counterId).set({ numShards: 1, total: 1500, board });
    const rank = 1 + totals.filter((t) => t > 1500).length;
    await expect(rankOf(counterId)).resolves.toEqual({ board, counterId, rank, of: 2_500, total: 1500 });
  });
});

describe("a board over document counters", () => {
  // Comments of posts, kept by recount (a count rule over one collection), and replies of threads, kept by
  // records (a pattern over several collections): both on one board.
  const POSTS = appCollection("lbposts");
  const FORUMS = appCollection("lbforums");
  const RULES = `${POSTS}/{post}/comments/{c}=${POSTS}-{post}-comments, ${FORUMS}/{forum}/threads/{thread}/replies/{r}=${FORUMS}-{thread}-replies`;
  const board = `b${randomUUID().slice(0, 8)}`;
  withParam("DOCUMENT_COUNTERS", RULES);
  withParam("LEADERBOARDS", `${board}=${POSTS}-{post}-comments,${board}=${FORUMS}-{thread}-replies`);
  withParam("ROLLUP_INTERVAL_MS", "200");
  const deliverDocument = documentTriggersOf(RULES);
  const missing = () => db.doc("counters/~exactCounter/none/x").get();

  const posts = ["p0", "p1", "p2", "p3"];
  const threads = ["t0", "t1"];
  const comments = (post: string) => `${POSTS}/${post}/comments`;
  const replies = (thread: string) => `${FORUMS}/f1/threads/${thread}/replies`;
  /** Every counter of the board with the collection whose documents it counts. */
  const counted = [...posts.map((p) => ({ counterId: `${POSTS}-${p}-comments`, collection: comments(p) })), ...threads.map((t) => ({ counterId: `${FORUMS}-${t}-replies`, collection: replies(t) }))];

  /** Writes `n` documents in `collection` (ids from `from`), their events delivered (each twice, the later one first) or, `lost`, never. */
  async function write(collection: string, from: number, n: number, lost = false): Promise<void> {
    const events: DocumentWriteEvent[] = [];
    for (let i = from; i < from + n; i++) events.push(await recordWrite(db, `${collection}/c${i}`, (ref) => ref.set({ text: "hi" })));
    if (lost) return;
    for (const event of [...events].reverse()) await deliverDocument(event);
    for (const event of events) await deliverDocument(event);
  }

  async function remove(collection: string, ids: readonly number[]): Promise<void> {
    for (const i of ids) await deliverDocument(await recordWrite(db, `${collection}/c${i}`, (ref) => ref.delete()));
  }

  /** rollupBoard's event for each counter's entry as it is now (the summary's commit recounts every bucket). */
  async function deliverEntries(): Promise<void> {
    for (const { counterId } of counted) await deliverEntry(board, counterId, await missing());
  }

  /** Every rank rankOf reads equals 1 + the counters of the board with more documents, by count() of the documents; `of` the counters that exist. */
  async function expectRanksFromDocuments(): Promise<void> {
    const totals = new Map<string, number>();
    for (const { counterId, collection } of counted) {
      if ((await counterRef(db, counterId).get()).exists) totals.set(counterId, (await db.collection(collection).count().get()).data().count);
    }
    for (const [counterId, total] of totals) {
      const rank = 1 + [...totals.values()].filter((t) => t > total).length;
      await expect(rankOf(counterId)).resolves.toEqual({ board, counterId, rank, of: totals.size, total });
    }
  }

  it("creates a document counter on its board at 0, in the batch that creates it", async () => {
    const counterId = `${POSTS}-created-comments`;
    await firestoreDocumentStore(db).createRecounted(counterId, { numShards: 1, windowed: false, board }, null, Date.now());
    const [parent, entry] = await Promise.all([counterRef(db, counterId).get(), entryNow(board, counterId)]);
    expect({ board: parent.get("board") as unknown, kept: parent.get("kept") as unknown, entry: entry.get("total") as unknown }).toEqual({ board, kept: "recount", entry: 0 });
    await call(functions.deleteCounter, { counterId }, ADMIN);
    expect((await entryNow(board, counterId)).exists).toBe(false);
  });

  it("ranks as counted from the documents through the triggers' writes and deletes, and through the backfill of lost events", async () => {
    // Created by their first documents: p0 3, p1 1, p2 4, t0 2, t1 4 (ties share a rank); p3 has none yet.
    await write(comments("p0"), 0, 3);
    await write(comments("p1"), 0, 1);
    await write(comments("p2"), 0, 4);
    await write(replies("t0"), 0, 2);
    await write(replies("t1"), 0, 4);
    await deliverEntries();
    await expectRanksFromDocuments();
    expect((await counterRef(db, `${FORUMS}-t0-replies`).get()).get("kept")).toBe("records");
    expect((await counterRef(db, `${POSTS}-p0-comments`).get()).get("kept")).toBe("recount");

    // Deletes: p2 drops to 1, every comment of p1 goes (its counter stays, at 0, on the board), t1 drops to 3.
    await remove(comments("p2"), [0, 1, 2]);
    await remove(comments("p1"), [0]);
    await remove(replies("t1"), [3]);
    await deliverEntries();
    await expectRanksFromDocuments();
    expect((await rankOf(`${POSTS}-p1-comments`)).total).toBe(0);

    // Lost events: comments written with no trigger run (p3's counter does not exist yet), then the backfill,
    // which counts each recounted counter once and commits it through the rollup's commit, with its entry.
    await write(comments("p3"), 0, 6, true);
    await write(comments("p1"), 10, 5, true);
    const report = await backfillDocuments({});
    expect(report).toMatchObject({ takenOut: 0 });
    await deliverEntries();
    await expectRanksFromDocuments();
    expect(await rankOf(`${POSTS}-p3-comments`)).toEqual({ board, counterId: `${POSTS}-p3-comments`, rank: 1, of: 6, total: 6 });
    await expect(backfillBoard(board)).resolves.toMatchObject({ joined: 0, removed: 0 });
  });
});
