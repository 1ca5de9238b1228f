// Moving from the firestore-counter extension in every order of steps (docs/from-the-extension.md, "No order
// of steps counts the field twice"): the counter created before and after migrate-extension, before and
// after the first old-client write, by createCounter, the admin entry or AUTO_CREATE, deleted and created
// again, pages with `visits: 0` and no shards, with MIRRORS writing each total back into the very field the
// extension kept, and the fold trigger's events duplicated and reordered. Each schedule ends with the
// counter, its shards and the page's field at the extension's value plus every later visit, once. And no
// counter from nowhere: an old client's write under a page that does not exist creates nothing. Against
// the Firestore emulator, the callables and triggers wrapped (params from process.env, as deployed).
import { captureLogs } from "../../test/helpers/logger";
import * as admin from "../src/admin";
import { extensionRecordRef } from "../src/model/paths";
import { requireEmulators } from "../../test/helpers/emulators";
import { ADMIN, call, db, documentsUnder, functions, httpsErrorOf, shardSum, withParam } from "../../test/helpers/functions";
import { withConcurrency } from "../../test/helpers/client";
import { appCollection, shardDocuments } from "../../test/helpers/extension";
import { deliverFold, oldWrite } from "../../test/helpers/extension-events";
import { migrateAll, reports, rollUp } from "../../test/helpers/extension-run";

beforeAll(requireEmulators);
jest.setTimeout(120_000);

const C = appCollection("xord");
const MIRRORS = `${C}-{id}-visits=${C}/{id}:visits`;
withParam("EXTENSION_COUNTERS", `${C}/{id}:visits=${C}-{id}-visits`);
withParam("MIRRORS", MIRRORS);
withParam("AUTO_CREATE", `${C}-{id}-visits=${C}/{id}`);

const logs = captureLogs();

let serial = 0;
/** A page id no other test of this file uses. */
const newPage = (name: string) => `${name}-${serial++}`;
const counterOf = (id: string) => `${C}-${id}-visits`;
const pageOf = (id: string) => `${C}/${id}`;

/** Who makes a new page's counter (docs/from-the-extension.md, step 4). */
const CREATORS = ["createCounter", "the admin entry", "AUTO_CREATE"] as const;
type Creator = (typeof CREATORS)[number];

/** The page's counter made by `how`, then `n` visits of new clients (AUTO_CREATE: the first of them makes it). */
async function createAndCount(how: Creator, id: string, n: number): Promise<void> {
  if (how === "createCounter") await call(functions.createCounter, { counterId: counterOf(id) });
  if (how === "the admin entry") await admin.createCounter(counterOf(id));
  await newVisits(id, n);
}

/** `n` visits of new app versions: incrementCounter. */
async function newVisits(id: string, n: number): Promise<void> {
  await call(functions.incrementCounter, { counterId: counterOf(id), delta: n });
}

/** The rollup commits the counter's total, and MIRRORS writes it back into the page's `visits`. */
function mirror(id: string): Promise<void> {
  return rollUp(db, counterOf(id), MIRRORS);
}

/** One visit of an old app version (its own shard), folded by the trigger. */
async function oldVisit(id: string, n = 1): Promise<void> {
  await deliverFold(await oldWrite(db, pageOf(id), "visits", n));
}

function migrate(): ReturnType<typeof migrateAll> {
  return migrateAll(db, { document: `${C}/{id}`, field: "visits", counter: `${C}-{id}-visits` });
}

/** What the page shows once its counter is rolled up: the total, the shards' sum and the mirrored field. */
async function settled(id: string): Promise<{ total: unknown; sum: number; field: unknown }> {
  await mirror(id);
  const counter = await db.doc(`counters/${counterOf(id)}`).get();
  return { total: counter.get("total"), sum: await shardSum(counterOf(id)), field: (await db.doc(pageOf(id)).get()).get("visits") };
}

const at = (n: number) => ({ total: n, sum: n, field: n });

describe("no order of steps counts the field twice", () => {
  it.each(CREATORS)("a page created after the move, its counter made by %s: new clients count 10, the mirror writes 10, one old client's visit makes 11", async (how) => {
    const id = newPage("new");
    await db.doc(pageOf(id)).set({ title: "New" });
    await createAndCount(how, id, 10);
    await mirror(id);
    expect((await db.doc(pageOf(id)).get()).get("visits")).toBe(10);
    await oldVisit(id);
    expect(await settled(id)).toEqual(at(11));
  });

  it.each(CREATORS)("a page with an extension count, its counter made by %s before migrate-extension: the field taken once, the shards moved by the migration", async (how) => {
    const id = newPage("before");
    await db.doc(pageOf(id)).set({ title: "Home", visits: 120 });
    await oldWrite(db, pageOf(id), "visits", 5); // waiting in its shard: no fold ran for it
    await createAndCount(how, id, 10);
    await mirror(id);
    expect((await db.doc(pageOf(id)).get()).get("visits")).toBe(130);
    expect(reports(await migrate()).get(pageOf(id))).toMatchObject({ amount: 5, fieldTaken: "before", created: false });
    await oldVisit(id);
    expect(await settled(id)).toEqual(at(136));
    expect((await extensionRecordRef(db, counterOf(id), pageOf(id), "visits").get()).get("taken")).toBe(120);
  });

  it("a counter made after migrate-extension finds it there (already-exists), and counts once", async () => {
    const id = newPage("after");
    await db.doc(pageOf(id)).set({ visits: 120 });
    await oldWrite(db, pageOf(id), "visits", 5);
    await migrate();
    expect((await httpsErrorOf(call(functions.createCounter, { counterId: counterOf(id) }))).code).toBe("already-exists");
    await expect(admin.createCounter(counterOf(id))).rejects.toMatchObject({ code: "already-exists" });
    await newVisits(id, 10);
    await mirror(id);
    await oldVisit(id);
    expect(await settled(id)).toEqual(at(136));
  });

  it("the first old client's write before anyone made the counter: the fold makes it with the field, and a later createCounter finds it", async () => {
    const id = newPage("oldfirst");
    await db.doc(pageOf(id)).set({ visits: 120 });
    await oldVisit(id, 2);
    expect((await httpsErrorOf(call(functions.createCounter, { counterId: counterOf(id) }))).code).toBe("already-exists");
    await newVisits(id, 10);
    await mirror(id);
    await oldVisit(id);
    await migrate();
    expect(await settled(id)).toEqual(at(133));
  });

  it.each(CREATORS)("a page migrated with visits: 0 and no shards has its counter; made again by %s it counts once", async (how) => {
    const id = newPage("zero");
    await db.doc(pageOf(id)).set({ visits: 0 });
    expect(reports(await migrate()).get(pageOf(id))).toMatchObject({ amount: 0, fieldTaken: "taken", created: true });
    if (how !== "AUTO_CREATE") await expect(createAndCount(how, id, 10)).rejects.toThrow(/already exists/);
    await newVisits(id, 10);
    await mirror(id);
    await oldVisit(id);
    expect(await settled(id)).toEqual(at(11));
  });

  it.each(CREATORS)("deleted and made again by %s: the field the delete removed is not taken, nor anything of the earlier counter", async (how) => {
    const id = newPage("again");
    await db.doc(pageOf(id)).set({ visits: 120 });
    await migrate();
    await newVisits(id, 10);
    await mirror(id);
    await call(functions.deleteCounter, { counterId: counterOf(id) }, ADMIN);
    expect((await db.doc(pageOf(id)).get()).get("visits")).toBeUndefined();
    await createAndCount(how, id, 10);
    await mirror(id);
    await oldVisit(id);
    expect(await settled(id)).toEqual(at(11));
  });

  it.each(CREATORS)("deleted while no mirror removed the field (it keeps the earlier counter's total) and made again by %s: that total is not taken", async (how) => {
    const id = newPage("stale");
    await db.doc(pageOf(id)).set({ visits: 120 });
    await migrate();
    await newVisits(id, 10);
    await mirror(id);
    // A delete from code whose MIRRORS lacks the rule (an app's stale copy of the params): the field stays.
    process.env.MIRRORS = "";
    await call(functions.deleteCounter, { counterId: counterOf(id) }, ADMIN);
    process.env.MIRRORS = MIRRORS;
    expect((await db.doc(pageOf(id)).get()).get("visits")).toBe(130);
    await createAndCount(how, id, 10);
    await mirror(id);
    await oldVisit(id);
    expect(await settled(id)).toEqual(at(11));
  });

  it("deleted and made again by an old client's write: it starts from that write", async () => {
    const id = newPage("refold");
    await db.doc(pageOf(id)).set({ visits: 120 });
    await migrate();
    await mirror(id);
    await call(functions.deleteCounter, { counterId: counterOf(id) }, ADMIN);
    await oldVisit(id);
    await newVisits(id, 10);
    expect(await settled(id)).toEqual(at(11));
  });

  it("a counter that exists without a record (made while EXTENSION_COUNTERS named nothing) never takes the field, and migrate-extension says so", async () => {
    const id = newPage("norecord");
    await db.doc(pageOf(id)).set({ visits: 120 });
    process.env.EXTENSION_COUNTERS = "";
    await call(functions.createCounter, { counterId: counterOf(id) });
    process.env.EXTENSION_COUNTERS = `${C}/{id}:visits=${C}-{id}-visits`;
    await newVisits(id, 10);
    await mirror(id);
    expect(reports(await migrate()).get(pageOf(id))).toMatchObject({ amount: 0, fieldValue: 10, fieldTaken: "left" });
    await oldVisit(id);
    expect(await settled(id)).toEqual(at(11));
  });

  it("is exact under duplicated and reordered fold events around the counter's creation and the mirror's writes", async () => {
    const id = newPage("events");
    await db.doc(pageOf(id)).set({ visits: 120 });
    const early = await oldWrite(db, pageOf(id), "visits", 2, "device-a");
    await createAndCount("createCounter", id, 10);
    await mirror(id);
    const b = await oldWrite(db, pageOf(id), "visits", 3, "device-b");
    const late = await oldWrite(db, pageOf(id), "visits", 1, "device-a");
    await withConcurrency(3, [late, b, early, b, late, early].map((e) => () => deliverFold(e)));
    await mirror(id);
    await deliverFold(early);
    expect(reports(await migrate()).get(pageOf(id))).toMatchObject({ amount: 0, fieldTaken: "before" });
    expect(await shardDocuments(db, pageOf(id))).toEqual({});
    expect(await settled(id)).toEqual(at(136));
  });
});

describe("a field the extension could not have kept", () => {
  it("refuses createCounter (failed-precondition, naming the document and the field) and writes nothing", async () => {
    const id = newPage("bad");
    await db.doc(pageOf(id)).set({ visits: 1.5 });
    const error = await httpsErrorOf(call(functions.createCounter, { counterId: counterOf(id) }));
    expect(error.code).toBe("failed-precondition");
    expect(error.message).toContain(`takes over ${pageOf(id)}'s visits (EXTENSION_COUNTERS), which holds 1.5, not an integer a counter can hold`);
    expect(await documentsUnder(counterOf(id))).toEqual([]);
    expect((await db.doc(pageOf(id)).get()).get("visits")).toBe(1.5);
  });
});

describe("no counter from nowhere", () => {
  it("an old client's write under a page that does not exist creates nothing: the amount stays, for migrate-extension", async () => {
    const id = newPage("ghost");
    const write = await oldWrite(db, pageOf(id), "visits", 1, "device");
    await deliverFold(write);
    await deliverFold(write);
    expect(await documentsUnder(counterOf(id))).toEqual([]);
    expect(await shardDocuments(db, pageOf(id))).toEqual({ device: { visits: 1 } });
    expect(logs.filter((l) => l.level === "warn" && l.line.includes("does not exist"))).toHaveLength(1);
    expect(logs.filter((l) => l.level === "error")).toEqual([]);
    // The operator's migration still moves it (it creates counters for documents that exist only through their shards).
    expect(reports(await migrate()).get(pageOf(id))).toMatchObject({ amount: 1, created: true, documentExists: false });
  });

  it("adds to a counter that exists, also once its page is gone", async () => {
    const id = newPage("gone");
    await db.doc(pageOf(id)).set({ visits: 5 });
    await migrate();
    await db.doc(pageOf(id)).delete();
    await oldVisit(id);
    expect(await shardSum(counterOf(id))).toBe(6);
  });
});
