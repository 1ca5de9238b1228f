// Document counters (DOCUMENT_COUNTERS, docs/documents.md) against the Firestore emulator: an app's comments
// and ratings written for real, each write's event (its real before and after snapshots) delivered to the
// wrapped document trigger as the platform delivers them: twice, out of order, at once, again after a
// failure. Both ways of keeping a count run side by side on the same app: a post's comments (one collection:
// kept by recount) and a thread's replies under a forum (a wildcard that is not the counter's: kept by
// records). Every count ends exact either way; what a deleted document leaves behind carries its expiry;
// nobody else moves a document counter; a deleted counter stays gone until a new change. Randomized orders
// print their seed (DOCUMENTS_TEST_SEED=<seed> replays it).
import * as admin from "../src/admin";
import { captureLogs } from "../../test/helpers/logger";
import { randomUUID } from "node:crypto";
import { ADMIN, USER, call, db, deliver as deliverShardWrite, documentsUnder, functions, httpsErrorOf, rfc3339, shardSum, withParam } from "../../test/helpers/functions";
import { withConcurrency } from "../../test/helpers/client";
import { firestoreHost, requireEmulators } from "../../test/helpers/emulators";
import { TEST_PROJECT } from "../../test/helpers/wrapped";
import { appCollection, documentTriggersOf, recordWrite, shuffled, withSeed, type DocumentWriteEvent } from "../../test/helpers/document-writes";
import { cleanupRef, counterRef, deletedRef, documentRecordRef, documentRecordsRef, shardsRef } from "../src/model/paths";
import { RECORD_TTL_MS } from "../src/documents/records";
import { microsCeil, microsFloor } from "../src/model/time";

beforeAll(requireEmulators);
jest.setTimeout(120_000);

const POSTS = appCollection("dposts");
const FORUMS = appCollection("dforums");
const PRODUCTS = appCollection("dproducts");
const ARTICLES = appCollection("darticles");
const RULES =
  `${POSTS}/{post}/comments/{comment}=${POSTS}-{post}-comments, ${POSTS}/{post}/comments/{c}[status==published]=${POSTS}-{post}-published, ` +
  `${FORUMS}/{forum}/threads/{thread}/replies/{r}=${FORUMS}-{thread}-comments, ${FORUMS}/{forum}/threads/{thread}/replies/{r}[status==published]=${FORUMS}-{thread}-published, ` +
  `${PRODUCTS}/{product}/ratings/{r}:stars=${PRODUCTS}-{product}-stars, ` +
  // Conditions of every type, both ways: a number (by value), a dotted path into a map, null.
  `${POSTS}/{post}/typed/{t}[meta.rank==1][flag==null]=${POSTS}-{post}-typed, ${FORUMS}/{forum}/threads/{thread}/typed/{t}[meta.rank==1][flag==null]=${FORUMS}-{thread}-typed, ` +
  // Counter ids from a field: each author's published articles (one collection: kept by recount) and each user's
  // replies over every forum's threads (several collections: kept by records, beside the replies' other rules).
  `${ARTICLES}/{a}[status==published]=${ARTICLES}-{=author}-published, ${FORUMS}/{forum}/threads/{thread}/replies/{r}=${FORUMS}-by-{=by.uid}-replies`;
withParam("DOCUMENT_COUNTERS", RULES);
const deliver = documentTriggersOf(RULES);

const logs = captureLogs();

/** One of the two ways: where a "post"'s comments live, and its two counters. */
interface Way {
  kept: "recount" | "records";
  comment: (post: string, id: string) => string;
  post: (post: string) => string;
  comments: (post: string) => string;
  published: (post: string) => string;
}

const WAYS: readonly Way[] = [
  { kept: "recount", comment: (p, id) => `${POSTS}/${p}/comments/${id}`, post: (p) => `${POSTS}/${p}`, comments: (p) => `${POSTS}-${p}-comments`, published: (p) => `${POSTS}-${p}-published` },
  {
    kept: "records",
    comment: (p, id) => `${FORUMS}/f1/threads/${p}/replies/${id}`,
    post: (p) => `${FORUMS}/f1/threads/${p}`,
    comments: (p) => `${FORUMS}-${p}-comments`,
    published: (p) => `${FORUMS}-${p}-published`,
  },
];

const set = (data: Record<string, unknown>) => (ref: FirebaseFirestore.DocumentReference) => ref.set(data);
const update = (data: Record<string, unknown>) => (ref: FirebaseFirestore.DocumentReference) => ref.update(data);
const remove = (ref: FirebaseFirestore.DocumentReference) => ref.delete();

/** Every event once and a copy of about half of them, shuffled, delivered 8 at a time. */
async function deliverHostile(events: DocumentWriteEvent[], random: () => number): Promise<void> {
  const deliveries = shuffled([...events, ...events.filter(() => random() < 0.5)], random);
  await withConcurrency(8, deliveries.map((event) => () => deliver(event)));
}

/** What a counter shows once its events are delivered: its total, how it is kept, and the sum of its shards. */
async function counted(counterId: string): Promise<{ total: unknown; kept: unknown; shards: number }> {
  const parent = await counterRef(db, counterId).get();
  return { total: parent.get("total") ?? null, kept: parent.get("kept") ?? null, shards: await shardSum(counterId) };
}

/**
 * Kept by records, a backfill's shard writes reach the total through rollupTotal, which the wrapped tests' project
 * does not run: delivers, for each shard, the event of the write that left it as it is (by recount, nothing to do).
 */
async function rollUpBackfill(way: Way, counterId: string): Promise<void> {
  if (way.kept === "recount") return;
  const shards = await shardsRef(db, counterId).get();
  const none = await db.doc(`${FORUMS}-none/none`).get();
  for (const shard of shards.docs) await deliverShardWrite({ counterId, shardId: shard.id, before: none, after: shard, eventId: randomUUID(), time: rfc3339(shard.updateTime) });
}

/** What `counted` shows for `n` documents: kept by recount, the shards stay at 0; by records, they sum to the total. */
function shows(way: Way, n: number): { total: number; kept: string; shards: number } {
  return { total: n, kept: way.kept, shards: way.kept === "records" ? n : 0 };
}

describe.each(WAYS)("documentCounters, the trigger, a counter kept by $kept", (way) => {
  const comment = way.comment;

  it("counts comments created, edited, deleted and created again, published and unpublished, exactly under duplicated and reordered events", async () => {
    await withSeed(`comments under hostile delivery (${way.kept})`, async (random) => {
      const events: DocumentWriteEvent[] = [];
      const write = async (path: string, change: (ref: FirebaseFirestore.DocumentReference) => Promise<unknown>) => events.push(await recordWrite(db, path, change));
      await write(comment("p1", "c1"), set({ text: "first", status: "published" }));
      await write(comment("p1", "c2"), set({ text: "draft", status: "draft" }));
      await write(comment("p1", "c1"), update({ text: "first, edited" }));
      await write(comment("p1", "c2"), update({ status: "published" }));
      await write(comment("p1", "c1"), update({ status: "hidden" }));
      await write(comment("p1", "c2"), remove);
      await write(comment("p1", "c2"), set({ text: "again", status: "published" }));
      await write(comment("p1", "c3"), set({ text: "third", status: "published" }));
      await write(comment("p1", "c4"), set({ text: "fourth" }));
      await write(comment("p1", "c4"), remove);
      await deliverHostile(events, random);
      expect(await counted(way.comments("p1"))).toEqual(shows(way, 3)); // c1, c2 (again), c3
      expect(await counted(way.published("p1"))).toEqual(shows(way, 2)); // c2 (again), c3
      // Delivered once more, every event changes nothing.
      await deliverHostile(events, random);
      expect(await counted(way.comments("p1"))).toEqual(shows(way, 3));
      expect(await counted(way.published("p1"))).toEqual(shows(way, 2));
    });
  });

  it("reads and writes nothing for an edit that changes no count, nor for a document no condition counts", async () => {
    await deliver(await recordWrite(db, comment("p3", "c1"), set({ text: "a", status: "draft" })));
    const parent = await counterRef(db, way.comments("p3")).get();
    const record = await documentRecordRef(db, way.comments("p3"), comment("p3", "c1")).get();
    logs.length = 0;
    await deliver(await recordWrite(db, comment("p3", "c1"), update({ text: "b" })));
    expect((await counterRef(db, way.comments("p3")).get()).updateTime).toEqual(parent.updateTime);
    expect((await documentRecordRef(db, way.comments("p3"), comment("p3", "c1")).get()).updateTime).toEqual(record.updateTime);
    expect(logs).toEqual([]);
    // A draft is in no published count: that counter is not even created.
    expect(await documentsUnder(way.published("p3"))).toEqual([]);
  });

  it("counts no document whose id cannot be part of a counter id, with one warning per document", async () => {
    const write = await recordWrite(db, comment("hello world", "c1"), set({ status: "published" }));
    await deliver(write);
    await deliver(write);
    expect(logs.filter((l) => l.level === "warn" && l.line.includes("cannot be part of a counter id"))).toHaveLength(1);
  });

  it("takes out the comments of a post deleted recursively", async () => {
    const post = way.post("p4");
    await db.doc(post).set({ title: "p4" });
    const created = await Promise.all(["c1", "c2", "c3"].map((c) => recordWrite(db, comment("p4", c), set({ status: "published" }))));
    await Promise.all(created.map(deliver));
    expect(await counted(way.comments("p4"))).toEqual(shows(way, 3));
    const before = await Promise.all(created.map((e) => db.doc(e.path).get()));
    await db.recursiveDelete(db.doc(post));
    const deletes = await Promise.all(
      before.map(async (snap, i): Promise<DocumentWriteEvent> => {
        const after = await snap.ref.get();
        return { path: snap.ref.path, before: snap, after, eventId: `del-${i}`, time: after.readTime.toDate().toISOString() };
      }),
    );
    await Promise.all([...deletes, ...deletes].map(deliver));
    expect(await counted(way.comments("p4"))).toEqual(shows(way, 0));
    expect(await counted(way.published("p4"))).toEqual(shows(way, 0));
  });

  it("fails an event while the counter is still being deleted (the platform delivers it again), and counts it once that is done", async () => {
    const marker = cleanupRef(db, way.comments("p5"));
    await marker.set({ round: 0, removed: 0 });
    const write = await recordWrite(db, comment("p5", "c1"), set({ status: "published" }));
    await expect(deliver(write)).rejects.toThrow("still being deleted");
    expect((await counterRef(db, way.comments("p5")).get()).exists).toBe(false);
    await marker.delete();
    await deliver(write);
    expect(await counted(way.comments("p5"))).toEqual(shows(way, 1));
  });

  it("stays deleted after deleteCounter whatever late events arrive; the next change creates it, and the backfill makes it whole", async () => {
    const id = way.comments("p6");
    const events = await Promise.all(["c1", "c2", "c3"].map((c) => recordWrite(db, comment("p6", c), set({ status: "draft" }))));
    await Promise.all(events.map(deliver));
    expect(await counted(id)).toEqual(shows(way, 3));
    await admin.deleteCounter(id);
    expect((await documentRecordsRef(db, id).get()).size).toBe(0);
    expect((await deletedRef(db, id).get()).exists).toBe(true);
    await Promise.all(events.map(deliver)); // late copies of the events from before the deletion
    expect((await counterRef(db, id).get()).exists).toBe(false);
    await deliver(await recordWrite(db, comment("p6", "c4"), set({ status: "draft" })));
    // Kept by recount, the counter the next change creates counts its comments at once: it is whole. Kept by
    // records, it counts the changes since the deletion until a backfill counts the rest.
    const whole = way.kept === "recount";
    expect(await counted(id)).toEqual(shows(way, whole ? 4 : 1));
    await Promise.all(events.map(deliver)); // still late: they count nothing in the new counter either
    expect(await counted(id)).toEqual(shows(way, whole ? 4 : 1));
    const report = await admin.backfillDocuments({ counter: id });
    expect(report).toMatchObject({ counted: whole ? 0 : 3, takenOut: 0 });
    await rollUpBackfill(way, id);
    expect(await counted(id)).toEqual(shows(way, 4));
  });

  it("takes out a document counted again by the backfill after deleteCounter when it is deleted later", async () => {
    const id = way.comments("p9");
    const first = await Promise.all(["c1", "c2"].map((c) => recordWrite(db, comment("p9", c), set({ status: "draft" }))));
    await Promise.all(first.map(deliver));
    await admin.deleteCounter(id);
    // The documented way back: the backfill counts the documents again, at the versions they have had since before the deletion.
    expect(await admin.backfillDocuments({ counter: id })).toMatchObject({ counted: 2, takenOut: 0 });
    await rollUpBackfill(way, id);
    expect(await counted(id)).toEqual(shows(way, 2));
    const deleted = await recordWrite(db, comment("p9", "c1"), remove);
    await Promise.all([deleted, deleted].map(deliver));
    expect(await counted(id)).toEqual(shows(way, 1));
    // Nothing left for a backfill to repair.
    expect(await admin.backfillDocuments({ counter: id })).toMatchObject({ counted: 0, takenOut: 0 });
  });
});

describe("documentCounters, what each way keeps", () => {
  const [recount, records] = WAYS as [Way, Way];

  it("keeps by records a record per document: what it counts and the version; a deleted one carries its expiry, a counted one none", async () => {
    const created = await recordWrite(db, records.comment("p2", "c1"), set({ text: "hi", status: "published" }));
    await deliver(created);
    const record = (await documentRecordRef(db, records.comments("p2"), records.comment("p2", "c1")).get()).data();
    expect(record).toEqual({ document: records.comment("p2", "c1"), counted: 1, version: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/) as string });
    const deleted = await recordWrite(db, records.comment("p2", "c1"), remove);
    const before = Date.now();
    await deliver(deleted);
    const gone = (await documentRecordRef(db, records.comments("p2"), records.comment("p2", "c1")).get()).data()!;
    expect(gone).toMatchObject({ counted: 0, version: `${String(record!.version)}+` });
    const expireAt = (gone.expireAt as FirebaseFirestore.Timestamp).toMillis();
    expect(expireAt).toBeGreaterThanOrEqual(before + RECORD_TTL_MS - 1000);
    expect(expireAt).toBeLessThanOrEqual(Date.now() + RECORD_TTL_MS);
    expect(await counted(records.comments("p2"))).toEqual(shows(records, 0));
  });

  it("keeps by recount no record and no shard delta: the total is the count of the comments at rollup.readTime, after the last write", async () => {
    const events = await Promise.all(["c1", "c2", "c3"].map((c) => recordWrite(db, recount.comment("p2", c), set({ status: "published" }))));
    await Promise.all(events.map(deliver));
    const parent = await counterRef(db, recount.comments("p2")).get();
    expect(parent.get("kept")).toBe("recount");
    expect(parent.get("total")).toBe(3);
    const readTime = parent.get("rollup.readTime") as FirebaseFirestore.Timestamp;
    for (const event of events) expect(microsFloor(readTime)).toBeGreaterThanOrEqual(microsCeil(event.after.updateTime!));
    expect((await documentRecordsRef(db, recount.comments("p2")).get()).size).toBe(0);
    expect(await shardSum(recount.comments("p2"))).toBe(0);
  });

  it("heals an event lost for good at the next change of any of the counter's comments (kept by recount)", async () => {
    const lost = await recordWrite(db, recount.comment("p11", "c1"), set({ status: "published" }));
    const next = await recordWrite(db, recount.comment("p11", "c2"), set({ status: "draft" }));
    expect(lost.eventId).not.toBe(next.eventId); // c1's event is never delivered
    await deliver(next);
    expect(await counted(recount.comments("p11"))).toEqual(shows(recount, 2));
    expect(await counted(recount.published("p11"))).toEqual({ total: null, kept: null, shards: 0 }); // c1 is published, but nothing changed a published count since
  });
});

describe("conditions, both ways", () => {
  /** Writes `fields` (Firestore's REST values) to `path` as a client can: here a double, which no JS number writes. */
  async function restWrite(path: string, fields: Record<string, unknown>): Promise<void> {
    const url = `http://${firestoreHost()}/v1/projects/${TEST_PROJECT}/databases/(default)/documents/${path}`;
    const response = await fetch(url, { method: "PATCH", headers: { Authorization: "Bearer owner", "Content-Type": "application/json" }, body: JSON.stringify({ fields }) });
    if (!response.ok) throw new Error(`REST write of ${path}: ${response.status} ${await response.text()}`);
  }

  it("count the same documents whether recounted or recorded: numbers by value (1 and 1.0), a dotted path into a map, null but not a missing field", async () => {
    const documents: [string, Record<string, unknown> | "double"][] = [
      ["a", { meta: { rank: 1 }, flag: null }], // counted
      ["b", "double"], // meta.rank 1.0 (a double), flag null: counted
      ["c", { meta: { rank: 1, other: 5 }, flag: null }], // counted
      ["d", { meta: { rank: "1" }, flag: null }], // text
      ["e", { meta: { rank: 1 } }], // no flag: not null
      ["f", { meta: { rank: 1 }, flag: "null" }], // text
      ["g", { meta: "rank", flag: null }], // no map
      ["h", { meta: { rank: true }, flag: null }], // a boolean
      ["i", { meta: { rank: 2 }, flag: null }],
      ["j", { "meta.rank": 1, flag: null }], // a field whose name has a dot: not the path meta.rank
    ];
    for (const [base, counter] of [
      [`${POSTS}/p14/typed`, `${POSTS}-p14-typed`],
      [`${FORUMS}/f1/threads/p14/typed`, `${FORUMS}-p14-typed`],
    ] as const) {
      const events: DocumentWriteEvent[] = [];
      for (const [id, data] of documents) {
        const path = `${base}/${id}`;
        events.push(
          await recordWrite(db, path, (ref) => (data === "double" ? restWrite(path, { meta: { mapValue: { fields: { rank: { doubleValue: 1.0 } } } }, flag: { nullValue: null } }) : ref.set(data))),
        );
      }
      await Promise.all(events.map(deliver));
      expect({ counter, total: (await counterRef(db, counter).get()).get("total") as unknown }).toEqual({ counter, total: 3 });
    }
  });
});

describe("counts per author: a counter id from a field ({=FIELD})", () => {
  const AUTHORS = ["ann", "bob", "cy"];
  const article = (id: string) => `${ARTICLES}/${id}`;
  const reply = (thread: string, id: string) => `${FORUMS}/f${thread.length}/threads/${thread}/replies/${id}`;

  /** Each author's published articles and replies, from the documents themselves. */
  async function truth(): Promise<Record<string, [number, number]>> {
    const out = Object.fromEntries(AUTHORS.map((a) => [a, [0, 0] as [number, number]]));
    for (const doc of (await db.collection(ARTICLES).get()).docs) if (doc.get("status") === "published" && out[doc.get("author") as string] !== undefined) out[doc.get("author") as string]![0]++;
    for (const doc of (await db.collectionGroup("replies").get()).docs) if (doc.ref.path.startsWith(`${FORUMS}/`) && out[doc.get("by.uid") as string] !== undefined) out[doc.get("by.uid") as string]![1]++;
    return out;
  }

  async function counts(): Promise<Record<string, [number, number]>> {
    const out: Record<string, [number, number]> = {};
    for (const a of AUTHORS) {
      const [articles, replies] = [await counted(`${ARTICLES}-${a}-published`), await counted(`${FORUMS}-by-${a}-replies`)];
      expect({ articles: articles.kept ?? "recount", replies: replies.kept ?? "records" }).toEqual({ articles: "recount", replies: "records" });
      out[a] = [(articles.total as number | null) ?? 0, replies.shards];
    }
    return out;
  }

  it("counts each document toward the counter its field names now, moves it when the field changes, and counts none while the field names no id: exact under duplicated and reordered events", async () => {
    await withSeed("authors under hostile delivery", async (random) => {
      const events: DocumentWriteEvent[] = [];
      const pick = <T,>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
      for (let i = 0; i < 60; i++) {
        const who = pick([...AUTHORS, ...AUTHORS, "not an id", undefined]);
        const roll = random();
        const path = i % 2 === 0 ? article(`a${Math.floor(random() * 6)}`) : reply(pick(["t1", "t22"]), `r${Math.floor(random() * 6)}`);
        // A missing field (undefined) is left out of the document.
        const named = (field: string) => (who === undefined ? {} : { [field]: who });
        const data = path.startsWith(`${ARTICLES}/`) ? { ...named("author"), status: pick(["published", "published", "draft"]) } : { by: named("uid"), text: String(i) };
        events.push(await recordWrite(db, path, (ref) => (roll < 0.15 ? ref.delete() : ref.set(data))));
      }
      await deliverHostile(events, random);
      const expected = await truth();
      expect(Object.values(expected).some(([a, r]) => a > 0 && r > 0)).toBe(true);
      expect(await counts()).toEqual(expected);
      // A document whose field holds no id part: one warning, naming the field.
      expect(logs.some((l) => l.level === "warn" && l.line.includes("document not counted: it cannot name a counter") && l.line.includes("its field "))).toBe(true);
    });
  });

  it("moves a published article from one author to another and back, each count exact after every step", async () => {
    const id = `moved${randomUUID().slice(0, 6)}`;
    const steps: [Record<string, unknown> | null, Record<string, number>][] = [
      [{ author: "ann", status: "published" }, { ann: 1, bob: 0 }],
      [{ author: "bob", status: "published" }, { ann: 0, bob: 1 }],
      [{ author: "bob", status: "draft" }, { ann: 0, bob: 0 }],
      [{ author: "ann", status: "published" }, { ann: 1, bob: 0 }],
      [null, { ann: 0, bob: 0 }],
    ];
    // An author's counter not created yet counts 0.
    const totalOf = async (author: string) => ((await counted(`${ARTICLES}-${author}-published`)).total as number | null) ?? 0;
    const before = { ann: await totalOf("ann"), bob: await totalOf("bob") };
    for (const [data, want] of steps) {
      await deliver(await recordWrite(db, article(id), (ref) => (data === null ? ref.delete() : ref.set(data))));
      const now = { ann: await totalOf("ann"), bob: await totalOf("bob") };
      expect(now).toEqual({ ann: before.ann + want.ann!, bob: before.bob + want.bob! });
    }
  });

  it("backfills each author's counts from the documents, counting the documents no event counted and taking out those that moved away unseen", async () => {
    // Written with no event delivered: one for cy each way, and one whose field names nobody.
    await db.doc(article("unseen")).set({ author: "cy", status: "published" });
    await db.doc(reply("t1", "unseen")).set({ by: { uid: "cy" } });
    await db.doc(article("nobody")).set({ status: "published" });
    // Counted for ann by their events, then moved to bob with no event: ann's counts must lose them, bob's gain them.
    await deliver(await recordWrite(db, reply("t1", "moving"), set({ by: { uid: "ann" } })));
    await deliver(await recordWrite(db, article("moving"), set({ author: "ann", status: "published" })));
    await db.doc(reply("t1", "moving")).update({ "by.uid": "bob" });
    await db.doc(article("moving")).update({ author: "bob" });
    const report = await admin.backfillDocuments({ env: { ...process.env, DOCUMENT_COUNTERS: RULES.split(", ").filter((r) => r.includes("{=")).join(",") } });
    expect(report.notCountable).toBeGreaterThan(0);
    expect(report.takenOut).toBeGreaterThanOrEqual(2);
    for (const a of AUTHORS) await rollUpBackfill(WAYS[1]!, `${FORUMS}-by-${a}-replies`);
    expect(await counts()).toEqual(await truth());
    const again = await admin.backfillDocuments({ env: { ...process.env, DOCUMENT_COUNTERS: RULES.split(", ").filter((r) => r.includes("{=")).join(",") } });
    expect({ counted: again.counted, takenOut: again.takenOut }).toEqual({ counted: 0, takenOut: 0 });
  });
});

describe("reconcile of counters named by a field", () => {
  it("compares each author's sum (kept by records: a sum) with that author's documents alone", async () => {
    const RATINGS = appCollection("dratings");
    const rule = `${RATINGS}/{r}:stars=${RATINGS}-by-{=author}-stars`;
    process.env.DOCUMENT_COUNTERS = rule; // the trigger and reconcile read it; withParam restores RULES after the test
    const deliverRating = documentTriggersOf(rule);
    for (const [r, author, stars] of [["r1", "ann", 4], ["r2", "ann", 2], ["r3", "bob", 5]] as const) await deliverRating(await recordWrite(db, `${RATINGS}/${r}`, set({ author, stars })));
    const reports = [];
    for await (const report of admin.reconcile({ counterIds: [`${RATINGS}-by-ann-stars`, `${RATINGS}-by-bob-stars`] })) reports.push(report.documents);
    expect(reports).toMatchObject([
      { documents: 6, shardSum: 6, drift: 0 },
      { documents: 5, shardSum: 5, drift: 0 },
    ]);
  });
});

describe("a product's stars (kept by records: a sum)", () => {
  it("sums a product's stars; a value that is not a safe integer adds 0, with one warning", async () => {
    const rating = (id: string) => `${PRODUCTS}/shoe/ratings/${id}`;
    const events = [
      await recordWrite(db, rating("r1"), set({ stars: 5 })),
      await recordWrite(db, rating("r2"), set({ stars: 3 })),
      await recordWrite(db, rating("r3"), set({ stars: 4.5 })),
      await recordWrite(db, rating("r2"), update({ stars: 1 })),
      await recordWrite(db, rating("r4"), set({ comment: "no stars" })),
      await recordWrite(db, rating("r4"), update({ stars: 2 })),
    ];
    await withSeed("stars", (random) => deliverHostile(events, random));
    expect(await counted(`${PRODUCTS}-shoe-stars`)).toEqual({ total: 8, kept: "records", shards: 8 }); // 5 + 1 + 0 + 2
    expect(logs.filter((l) => l.level === "warn" && l.line.includes("stars holds 4.5, not a safe integer"))).toHaveLength(1);
  });

  it("takes a delete of a document that never existed (an event with neither side) as nothing: no warning, no error", async () => {
    const ghost = await recordWrite(db, `${PRODUCTS}/ghost/ratings/r1`, remove);
    expect([ghost.before.exists, ghost.after.exists]).toEqual([false, false]);
    await deliver(ghost);
    expect(logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
    expect(await documentsUnder(`${PRODUCTS}-ghost-stars`)).toEqual([]);
  });
});

describe("nobody else moves a document counter", () => {
  const id = `${POSTS}-p7-comments`;

  beforeAll(async () => {
    process.env.DOCUMENT_COUNTERS = RULES;
    await deliver(await recordWrite(db, `${POSTS}/p7/comments/c1`, set({ text: "x" })));
  });

  it.each([
    ["incrementCounter", { counterId: id, delta: 1 }],
    ["setMember", { counterId: id, member: true }],
    ["createCounter", { counterId: `${POSTS}-p-none-comments` }],
    ["createCounter", { counterId: id }],
    ["incrementCounter", { counterId: `${POSTS}-p-none-comments` }],
  ] as const)("refuses %s %j with failed-precondition naming DOCUMENT_COUNTERS, and writes nothing", async (name, data) => {
    const before = await documentsUnder(data.counterId);
    const error = await httpsErrorOf(call(functions[name], data, USER));
    expect([error.code, error.message]).toEqual(["failed-precondition", expect.stringContaining("DOCUMENT_COUNTERS") as string]);
    expect(await documentsUnder(data.counterId)).toEqual(before);
  });

  it("refuses resetCounter to an admin too, and the admin entry's operations alike", async () => {
    expect((await httpsErrorOf(call(functions.resetCounter, { counterId: id }, ADMIN))).code).toBe("failed-precondition");
    for (const attempt of [() => admin.incrementCounter(id, 1), () => admin.setMember(id, "u1", true), () => admin.resetCounter(id), () => admin.createCounter(`${POSTS}-p8-published`)]) {
      await expect(attempt()).rejects.toMatchObject({ code: "failed-precondition", message: expect.stringContaining("DOCUMENT_COUNTERS") as string });
    }
    expect(await counted(id)).toEqual(shows(WAYS[0]!, 1));
  });

  it.each(WAYS)("lets an admin reshard one kept by $kept, and keeps counting exactly", async (way) => {
    const counter = way.comments("p13");
    await deliver(await recordWrite(db, way.comment("p13", "c1"), set({ text: "x" })));
    await expect(call(functions.reshardCounter, { counterId: counter, numShards: 4 }, ADMIN)).resolves.toEqual({ counterId: counter, numShards: 4 });
    await Promise.all(["c2", "c3", "c4"].map(async (c) => deliver(await recordWrite(db, way.comment("p13", c), set({ text: c })))));
    expect(await counted(counter)).toEqual(shows(way, 4));
  });
});

describe("the main entry", () => {
  // Built from the param's value when the module loads: here functions/.env's (the example feed's comments).
  // Empty while the param is: scripts/test/extension-exports.emulator.test.ts deploys a codebase both ways.
  it("exports the document triggers' group, one trigger per document pattern of DOCUMENT_COUNTERS as it loaded", () => {
    expect(Object.keys(functions.documentCounters)).toEqual(["posts_comments_0a61rcx"]);
  });
});
