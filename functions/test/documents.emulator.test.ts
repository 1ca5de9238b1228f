// Document counters (DOCUMENT_COUNTERS, docs/documents.md) against the Firestore emulator: an app's comments
// and ratings written for real, each write's event (its real before and after snapshots) delivered to the
// wrapped document trigger as the platform delivers them: twice, out of order, at once, again after a
// failure. Every count ends exact; what a deleted document leaves behind carries its expiry; nobody else
// moves a document counter; a deleted counter stays gone until a new change, and the backfill makes it
// whole. Randomized orders print their seed (DOCUMENTS_TEST_SEED=<seed> replays it).
import * as admin from "../src/admin";
import { captureLogs } from "../../test/helpers/logger";
import { ADMIN, USER, call, db, documentsUnder, functions, httpsErrorOf, shardSum, withParam } from "../../test/helpers/functions";
import { withConcurrency } from "../../test/helpers/client";
import { requireEmulators } from "../../test/helpers/emulators";
import { appCollection, documentTriggersOf, recordWrite, shuffled, withSeed, type DocumentWriteEvent } from "../../test/helpers/document-writes";
import { cleanupRef, counterRef, deletedRef, documentRecordRef, documentRecordsRef } from "../src/model/paths";
import { RECORD_TTL_MS } from "../src/model/document-records";

beforeAll(requireEmulators);
jest.setTimeout(120_000);

const POSTS = appCollection("dposts");
const PRODUCTS = appCollection("dproducts");
const RULES =
  `${POSTS}/{post}/comments/{comment}=${POSTS}-{post}-comments, ${POSTS}/{post}/comments/{c}[status==published]=${POSTS}-{post}-published, ` +
  `${PRODUCTS}/{product}/ratings/{r}:stars=${PRODUCTS}-{product}-stars`;
withParam("DOCUMENT_COUNTERS", RULES);
const deliver = documentTriggersOf(RULES);

const logs = captureLogs();

const comment = (post: string, id: string) => `${POSTS}/${post}/comments/${id}`;
const set = (data: Record<string, unknown>) => (ref: FirebaseFirestore.DocumentReference) => ref.set(data);
const update = (data: Record<string, unknown>) => (ref: FirebaseFirestore.DocumentReference) => ref.update(data);
const remove = (ref: FirebaseFirestore.DocumentReference) => ref.delete();

/** Every event once and a copy of about half of them, shuffled, delivered 8 at a time. */
async function deliverHostile(events: DocumentWriteEvent[], random: () => number): Promise<void> {
  const deliveries = shuffled([...events, ...events.filter(() => random() < 0.5)], random);
  await withConcurrency(8, deliveries.map((event) => () => deliver(event)));
}

describe("documentCounters, the trigger", () => {
  it("counts comments created, edited, deleted and created again, published and unpublished, exactly under duplicated and reordered events", async () => {
    await withSeed("comments under hostile delivery", async (random) => {
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
      expect(await shardSum(`${POSTS}-p1-comments`)).toBe(3); // c1, c2 (again), c3
      expect(await shardSum(`${POSTS}-p1-published`)).toBe(2); // c2 (again), c3
      // Delivered once more, every event changes nothing.
      await deliverHostile(events, random);
      expect(await shardSum(`${POSTS}-p1-comments`)).toBe(3);
      expect(await shardSum(`${POSTS}-p1-published`)).toBe(2);
    });
  });

  it("keeps a record per document: what it counts and the version; a deleted one carries its expiry, a counted one none", async () => {
    const created = await recordWrite(db, comment("p2", "c1"), set({ text: "hi", status: "published" }));
    await deliver(created);
    const record = (await documentRecordRef(db, `${POSTS}-p2-comments`, comment("p2", "c1")).get()).data();
    expect(record).toEqual({ document: comment("p2", "c1"), counted: 1, version: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/) as string });
    const deleted = await recordWrite(db, comment("p2", "c1"), remove);
    const before = Date.now();
    await deliver(deleted);
    const gone = (await documentRecordRef(db, `${POSTS}-p2-comments`, comment("p2", "c1")).get()).data()!;
    expect(gone).toMatchObject({ counted: 0, version: `${String(record!.version)}+` });
    const expireAt = (gone.expireAt as FirebaseFirestore.Timestamp).toMillis();
    expect(expireAt).toBeGreaterThanOrEqual(before + RECORD_TTL_MS - 1000);
    expect(expireAt).toBeLessThanOrEqual(Date.now() + RECORD_TTL_MS);
    expect(await shardSum(`${POSTS}-p2-comments`)).toBe(0);
  });

  it("reads and writes nothing for an edit that changes no count, nor for a document no condition counts", async () => {
    await deliver(await recordWrite(db, comment("p3", "c1"), set({ text: "a", status: "draft" })));
    const record = await documentRecordRef(db, `${POSTS}-p3-comments`, comment("p3", "c1")).get();
    await deliver(await recordWrite(db, comment("p3", "c1"), update({ text: "b" })));
    expect((await documentRecordRef(db, `${POSTS}-p3-comments`, comment("p3", "c1")).get()).updateTime).toEqual(record.updateTime);
    // A draft is in no published count: that counter is not even created.
    expect(await documentsUnder(`${POSTS}-p3-published`)).toEqual([]);
    expect(logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
  });

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
    expect(await shardSum(`${PRODUCTS}-shoe-stars`)).toBe(8); // 5 + 1 + 0 + 2
    expect(logs.filter((l) => l.level === "warn" && l.line.includes("stars holds 4.5, not a safe integer"))).toHaveLength(1);
  });

  it("counts no document whose id cannot be part of a counter id, with one warning per document", async () => {
    const write = await recordWrite(db, comment("hello world", "c1"), set({ status: "published" }));
    await deliver(write);
    await deliver(write);
    expect(logs.filter((l) => l.level === "warn" && l.line.includes("cannot be part of a counter id"))).toHaveLength(1);
  });

  it("takes out the comments of a post deleted recursively", async () => {
    const post = `${POSTS}/p4`;
    await db.doc(post).set({ title: "p4" });
    const created = await Promise.all(["c1", "c2", "c3"].map((c) => recordWrite(db, comment("p4", c), set({ status: "published" }))));
    await Promise.all(created.map(deliver));
    expect(await shardSum(`${POSTS}-p4-comments`)).toBe(3);
    const before = await Promise.all(created.map((e) => db.doc(e.path).get()));
    await db.recursiveDelete(db.doc(post));
    const deletes = await Promise.all(before.map(async (snap, i) => ({ path: snap.ref.path, before: snap, after: await snap.ref.get(), eventId: `del-${i}` })));
    await Promise.all([...deletes, ...deletes].map(deliver));
    expect(await shardSum(`${POSTS}-p4-comments`)).toBe(0);
    expect(await shardSum(`${POSTS}-p4-published`)).toBe(0);
  });

  it("fails an event while the counter is still being deleted (the platform delivers it again), and counts it once that is done", async () => {
    const marker = cleanupRef(db, `${POSTS}-p5-comments`);
    await marker.set({ round: 0, removed: 0 });
    const write = await recordWrite(db, comment("p5", "c1"), set({ status: "published" }));
    await expect(deliver(write)).rejects.toThrow("still being deleted");
    expect((await counterRef(db, `${POSTS}-p5-comments`).get()).exists).toBe(false);
    await marker.delete();
    await deliver(write);
    expect(await shardSum(`${POSTS}-p5-comments`)).toBe(1);
  });

  it("stays deleted after deleteCounter whatever late events arrive; the next change creates it, and the backfill makes it whole", async () => {
    const id = `${POSTS}-p6-comments`;
    const events = await Promise.all(["c1", "c2", "c3"].map((c) => recordWrite(db, comment("p6", c), set({ status: "draft" }))));
    await Promise.all(events.map(deliver));
    expect(await shardSum(id)).toBe(3);
    await admin.deleteCounter(id);
    expect((await documentRecordsRef(db, id).get()).size).toBe(0);
    expect((await deletedRef(db, id).get()).exists).toBe(true);
    await Promise.all(events.map(deliver)); // late copies of the events from before the deletion
    expect((await counterRef(db, id).get()).exists).toBe(false);
    await deliver(await recordWrite(db, comment("p6", "c4"), set({ status: "draft" })));
    expect(await shardSum(id)).toBe(1);
    await Promise.all(events.map(deliver)); // still late: they count nothing in the new counter either
    expect(await shardSum(id)).toBe(1);
    const report = await admin.backfillDocuments({ counter: id });
    expect(report).toMatchObject({ counted: 3, takenOut: 0 });
    expect(await shardSum(id)).toBe(4);
  });
});

describe("nobody else moves a document counter", () => {
  const id = `${POSTS}-p7-comments`;

  beforeAll(async () => {
    process.env.DOCUMENT_COUNTERS = RULES;
    await deliver(await recordWrite(db, comment("p7", "c1"), set({ text: "x" })));
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
    expect(await shardSum(id)).toBe(1);
  });

  it("lets an admin reshard it, and keeps counting exactly", async () => {
    await expect(call(functions.reshardCounter, { counterId: id, numShards: 4 }, ADMIN)).resolves.toEqual({ counterId: id, numShards: 4 });
    await Promise.all(["c2", "c3", "c4"].map(async (c) => deliver(await recordWrite(db, comment("p7", c), set({ text: c })))));
    expect(await shardSum(id)).toBe(4);
  });
});

describe("the main entry", () => {
  // Built from the param's value when the module loads: here functions/.env's (the example feed's comments).
  // Empty while the param is: scripts/test/extension-exports.emulator.test.ts deploys a codebase both ways.
  it("exports the document triggers' group, one trigger per document pattern of DOCUMENT_COUNTERS as it loaded", () => {
    expect(Object.keys(functions.documentCounters)).toEqual(["posts_comments_0a61rcx"]);
  });
});
