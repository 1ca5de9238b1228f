// Moving from the firestore-counter extension (docs/from-the-extension.md): migrate-extension's core over
// data laid out exactly as the extension writes it (test/helpers/extension.ts: clients' UUID shards with dotted
// fields and several fields per write, workers' partials with one to four leading tabs, the field on the
// document). Each counter gains exactly the extension's value, the field once, every shard amount in the
// write that removes it; other fields stay; a second run and a mirror writing the total back into the
// field never add it again. Against the Firestore emulator.
import { logger } from "../../test/helpers/logger";
import { extensionRecordRef } from "../src/model/paths";
import { requireEmulators } from "../../test/helpers/emulators";
import { ADMIN, call, db, documentsUnder, functions, readCounter, shardSum } from "../../test/helpers/functions";
import { appCollection, extensionValue, incrementFields, mainField, oldClient, shardDocuments, workerPartial } from "../../test/helpers/extension";
import { migrateAll, reports, rollUp } from "../../test/helpers/extension-run";

beforeAll(requireEmulators);
beforeEach(() => {
  jest.spyOn(logger, "debug").mockImplementation(() => undefined);
  jest.spyOn(logger, "info").mockImplementation(() => undefined);
  jest.spyOn(logger, "warn").mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

/** A page as an extension app leaves it: the field, clients' shards, workers' partials, other fields everywhere. */
async function extensionPage(c: string, id: string): Promise<void> {
  const doc = `${c}/${id}`;
  await db.doc(doc).set({ title: "Home", stats: { visits: 100, shares: 3 } });
  await incrementFields(db, doc, "u1", { "stats.visits": 5, likes: 2 });
  const two = oldClient(db, doc, "stats.visits", "u2");
  await two.incrementBy(3);
  await two.incrementBy(3);
  await incrementFields(db, doc, "u3", { likes: 4 });
  await workerPartial(db, doc, "a", [{ "stats.visits": 10, likes: 1 }, { "stats.visits": -2 }]);
  await workerPartial(db, doc, "ab", [{ "stats.visits": 7 }]);
  await workerPartial(db, doc, "abc", [{ likes: 5 }]);
  await workerPartial(db, doc, "abcd", [{ "stats.visits": 1 }]);
}

describe("migrate-extension's core", () => {
  it("takes the extension's value exactly: the field once, every shard and partial (one to four tabs), and leaves other fields alone", async () => {
    const c = appCollection();
    await extensionPage(c, "home");
    const expected = await extensionValue(db, `${c}/home`, "stats.visits");
    expect(expected).toBe(127);
    const likesBefore = await extensionValue(db, `${c}/home`, "likes");

    const report = reports(await migrateAll(db, { document: `${c}/{id}`, field: "stats.visits", counter: `${c}-{id}-visits` })).get(`${c}/home`)!;
    expect(report).toMatchObject({ counterId: `${c}-home-visits`, amount: 127, fieldValue: 100, fieldTaken: "taken", shards: 2, partials: 3, created: true, problems: [] });
    const counter = await readCounter(`${c}-home-visits`);
    expect(counter).toMatchObject({ exists: true, numShards: 1 });
    expect(await shardSum(`${c}-home-visits`)).toBe(127);
    expect((await db.doc(`counters/${c}-home-visits`).get()).data()).toMatchObject({ unique: false, windowed: false, total: 0 });

    // Only stats.visits left the shard documents; the document itself is untouched (the mirror writes it later).
    expect(await shardDocuments(db, `${c}/home`)).toEqual({
      u1: { likes: 2 },
      u3: { likes: 4 },
      "\t\t\t\ta": { _updates_: [expect.objectContaining({ _data_: { likes: 1 } })] },
      "\t\tabc": { _updates_: [expect.objectContaining({ _data_: { likes: 5 } })] },
    });
    expect((await db.doc(`${c}/home`).get()).data()).toEqual({ title: "Home", stats: { visits: 100, shares: 3 } });
    expect(await extensionValue(db, `${c}/home`, "likes")).toBe(likesBefore);
    expect((await extensionRecordRef(db, `${c}-home-visits`, `${c}/home`, "stats.visits").get()).get("taken")).toBe(100);
  });

  it("moves nothing the second time, then only what shards received since", async () => {
    const c = appCollection();
    await extensionPage(c, "p1");
    const rule = { document: `${c}/{id}`, field: "stats.visits", counter: `${c}-{id}-v` };
    await migrateAll(db, rule);
    const again = reports(await migrateAll(db, rule)).get(`${c}/p1`)!;
    expect(again).toMatchObject({ amount: 0, fieldTaken: "before", shards: 0, partials: 0, created: false });
    await oldClient(db, `${c}/p1`, "stats.visits").incrementBy(4);
    expect(reports(await migrateAll(db, rule)).get(`${c}/p1`)).toMatchObject({ amount: 4, fieldTaken: "before", shards: 1 });
    expect(await shardSum(`${c}-p1-v`)).toBe(131);
  });

  it("never adds the field again when MIRRORS writes the total back into the same field", async () => {
    const c = appCollection();
    await extensionPage(c, "m");
    const rule = { document: `${c}/{id}`, field: "stats.visits", counter: `${c}-{id}-visits` };
    const mirrors = `${c}-{id}-visits=${c}/{id}:stats.visits`;
    await migrateAll(db, rule);
    await rollUp(db, `${c}-m-visits`, mirrors);
    expect((await db.doc(`${c}/m`).get()).get("stats")).toEqual({ visits: 127, shares: 3 });
    expect((await readCounter(`${c}-m-visits`)).total).toBe(127);

    // The field now holds the total: neither a second run nor a fold of a later write takes it again.
    await oldClient(db, `${c}/m`, "stats.visits").incrementBy(1);
    expect(reports(await migrateAll(db, rule)).get(`${c}/m`)).toMatchObject({ amount: 1, fieldValue: 127, fieldTaken: "before" });
    await rollUp(db, `${c}-m-visits`, mirrors);
    expect(reports(await migrateAll(db, rule)).get(`${c}/m`)).toMatchObject({ amount: 0, fieldValue: 128 });
    expect(await shardSum(`${c}-m-visits`)).toBe(128);
    expect((await db.doc(`${c}/m`).get()).get("stats.visits")).toBe(128);
  });

  it("moves several counted fields of one document to their own counters", async () => {
    const c = appCollection();
    await extensionPage(c, "two");
    const likes = await extensionValue(db, `${c}/two`, "likes");
    await migrateAll(db, { document: `${c}/{id}`, field: "stats.visits", counter: `${c}-{id}-visits` });
    await migrateAll(db, { document: `${c}/{id}`, field: "likes", counter: `${c}-{id}-likes` });
    expect(await shardSum(`${c}-two-visits`)).toBe(127);
    expect(await shardSum(`${c}-two-likes`)).toBe(likes);
    expect(await shardDocuments(db, `${c}/two`)).toEqual({});
  });

  it("reads the same in a dry run and writes nothing", async () => {
    const c = appCollection();
    await extensionPage(c, "dry");
    const before = await shardDocuments(db, `${c}/dry`);
    const items = await migrateAll(db, { document: `${c}/{id}`, field: "stats.visits", counter: `${c}-{id}-visits` }, { dryRun: true });
    expect(reports(items).get(`${c}/dry`)).toMatchObject({ amount: 127, fieldTaken: "taken", shards: 2, partials: 3, created: true, dryRun: true });
    expect(await shardDocuments(db, `${c}/dry`)).toEqual(before);
    expect(await documentsUnder(`${c}-dry-visits`)).toEqual([]);
  });

  it("finds documents that exist only through their shards, and documents in deeper collections", async () => {
    const c = appCollection();
    await oldClient(db, `${c}/ghost`, "visits").incrementBy(2);
    await mainField(db, `sites/${c}/pages/p1`, "visits", 9);
    await oldClient(db, `sites/${c}/pages/p1`, "visits").incrementBy(1);
    await mainField(db, `users/${c}/stats${c}/main`, "visits", 4);

    expect(reports(await migrateAll(db, { document: `${c}/{id}`, field: "visits", counter: `${c}-{id}` })).get(`${c}/ghost`)).toMatchObject({ amount: 2, documentExists: false });
    await migrateAll(db, { document: `sites/${c}/pages/{id}`, field: "visits", counter: `${c}-site-{id}` });
    expect(await shardSum(`${c}-site-p1`)).toBe(10);
    await migrateAll(db, { document: `users/{uid}/stats${c}/main`, field: "visits", counter: `u-{uid}-${c}` });
    expect(await shardSum(`u-${c}-${c}`)).toBe(4);
  });

  it("reports what cannot move and moves the rest: an amount that is not an integer, a document id no counter id can hold", async () => {
    const c = appCollection();
    await mainField(db, `${c}/ok`, "visits", 3);
    await db.doc(`${c}/ok/_counter_shards_/bad`).set({ visits: 1.5 });
    await oldClient(db, `${c}/ok`, "visits").incrementBy(2);
    await mainField(db, `${c}/hello world`, "visits", 7);
    const items = await migrateAll(db, { document: `${c}/{id}`, field: "visits", counter: `${c}-{id}` });
    const folded = items.find((i) => i.kind === "folded");
    expect(folded).toMatchObject({ report: { amount: 5, problems: [expect.stringContaining("holds 1.5, not an integer")] } });
    expect(items).toContainEqual({ kind: "unmapped", document: `${c}/hello world` });
    expect(await shardDocuments(db, `${c}/ok`)).toEqual({ bad: { visits: 1.5 } });
  });

  it("refuses a unique counter, and an id UNIQUE_COUNTERS reserves, and writes nothing", async () => {
    const c = appCollection();
    await mainField(db, `${c}/u`, "likes", 5);
    await oldClient(db, `${c}/u`, "likes").incrementBy(1);
    await call(functions.createCounter, { counterId: `${c}-u-likes`, unique: true });
    const before = await documentsUnder(`${c}-u-likes`);
    const items = await migrateAll(db, { document: `${c}/{id}`, field: "likes", counter: `${c}-{id}-likes` });
    expect(reports(items).get(`${c}/u`)!.problems).toEqual([expect.stringContaining("is a unique counter")]);
    expect(await documentsUnder(`${c}-u-likes`)).toEqual(before);

    const reserved = await migrateAll(db, { document: `${c}/{id}`, field: "likes", counter: `${c}-{id}-fans` }, { params: { UNIQUE_COUNTERS: `${c}-{id}-fans` } });
    expect(reports(reserved).get(`${c}/u`)!.problems).toEqual([expect.stringContaining("matches UNIQUE_COUNTERS")]);
    expect(await documentsUnder(`${c}-u-fans`)).toEqual([]);
    expect(await extensionValue(db, `${c}/u`, "likes")).toBe(6);
  });

  it("creates a counter with the shape the params give its id, and folds into an existing one like an increment, leaving its field", async () => {
    const c = appCollection();
    await mainField(db, `${c}/k`, "views", 8);
    await mainField(db, `${c}/e`, "views", 1);
    await oldClient(db, `${c}/e`, "views").incrementBy(2);
    // Made while no EXTENSION_COUNTERS named it: it has no record, so its field may hold its own mirrored total.
    await call(functions.createCounter, { counterId: `${c}-e`, numShards: 4 });
    await call(functions.incrementCounter, { counterId: `${c}-e`, delta: 10 });
    const items = await migrateAll(db, { document: `${c}/{id}`, field: "views", counter: `${c}-{id}` }, { params: { COUNTER_KINDS: `${c}-k=shards:3` } });
    expect(reports(items).get(`${c}/e`)).toMatchObject({ amount: 2, fieldValue: 1, fieldTaken: "left", shards: 1 });
    expect(await readCounter(`${c}-k`)).toMatchObject({ numShards: 3 });
    expect(await shardSum(`${c}-k`)).toBe(8);
    const shards = (await db.collection(`counters/${c}-e/shards`).get()).docs.map((d) => d.data());
    expect(shards.reduce((n, s) => n + (s.count as number), 0)).toBe(12);
    // One more applied write, as an increment adds: growth measures it.
    expect(shards.reduce((n, s) => n + (s.writes as number), 0)).toBe(2);
    expect((await extensionRecordRef(db, `${c}-e`, `${c}/e`, "views").get()).get("taken")).toBe(0);
  });

  it("gives a page whose extension count is 0 its counter, and none to a page without the field", async () => {
    const c = appCollection();
    await mainField(db, `${c}/zero`, "visits", 0);
    await db.doc(`${c}/none`).set({ title: "never counted" });
    const items = reports(await migrateAll(db, { document: `${c}/{id}`, field: "visits", counter: `${c}-{id}` }));
    expect(items.get(`${c}/zero`)).toMatchObject({ amount: 0, fieldTaken: "taken", created: true });
    expect(items.has(`${c}/none`)).toBe(false);
    expect(await readCounter(`${c}-zero`)).toMatchObject({ exists: true, total: 0 });
    expect(await documentsUnder(`${c}-none`)).toEqual([]);
  });

  it("goes with the counter when it is deleted, all but its record of the field, which a counter made again finds", async () => {
    const c = appCollection();
    await mainField(db, `${c}/d`, "visits", 6);
    await migrateAll(db, { document: `${c}/{id}`, field: "visits", counter: `${c}-{id}` });
    const record = `counters/${c}-d/exactCounterExtension/${encodeURIComponent(`${c}/d:visits`)}`;
    expect(await documentsUnder(`${c}-d`)).toContain(record);
    await call(functions.deleteCounter, { counterId: `${c}-d` }, ADMIN);
    expect(await documentsUnder(`${c}-d`)).toEqual([record]);
    // The field still holds 6 (no mirror removed it): a second migration makes no counter of it again.
    expect(reports(await migrateAll(db, { document: `${c}/{id}`, field: "visits", counter: `${c}-{id}` })).size).toBe(1);
    expect(await readCounter(`${c}-d`)).toEqual({ exists: false });
  });
});
