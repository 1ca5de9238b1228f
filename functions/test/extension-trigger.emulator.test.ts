// foldExtensionShards (docs/from-the-extension.md): old app versions of the firestore-counter extension
// keep writing their shards after the migration, and the trigger folds each write into its counter. Real
// writes laid out as the extension's web client writes them (test/helpers/extension.ts), recorded with their
// before and after snapshots, delivered to the wrapped handler as the platform delivers events: at least
// once, in any order, concurrently, again after a failure. Exact whatever the delivery; nothing written for
// documents no rule names. Against the Firestore emulator.
import { captureLogs } from "../../test/helpers/logger";
import { MEMO_MAX } from "../src/rollup/commit";
import { cleanupRef, extensionRecordRef } from "../src/model/paths";
import { dayOf } from "../src/model/windows";
import { requireEmulators } from "../../test/helpers/emulators";
import { db, documentsUnder, shardSum, withParam } from "../../test/helpers/functions";
import { withConcurrency } from "../../test/helpers/client";
import { appCollection, extensionValue, incrementFields, mainField, SHARDS, shardDocuments, shuffle, withSeed } from "../../test/helpers/extension";
import { deliverFold, oldWrite, recordedShardWrite, type RecordedShardWrite } from "../../test/helpers/extension-events";

beforeAll(requireEmulators);

const C = appCollection("xtrig");
withParam("EXTENSION_COUNTERS", `${C}/{id}:visits=${C}-{id}-visits, ${C}/{id}:stats.likes=${C}-{id}-likes`);

const logs = captureLogs();

type Recorded = RecordedShardWrite;

/** Writes a shard document with `write` and records the event of that write (test/helpers/extension-events.ts). */
const recorded = (document: string, shardId: string, write: () => Promise<unknown>): Promise<Recorded> => recordedShardWrite(db, document, shardId, write);

/** An old client's incrementBy of `field`, recorded. */
const increment = (document: string, field: string, shardId: string, n: number): Promise<Recorded> => oldWrite(db, document, field, n, shardId);

const deliver = (event: Recorded): Promise<unknown> => deliverFold(event);

describe("foldExtensionShards", () => {
  it("folds an old client's write: the field once, the shard's amount in the write that removes it", async () => {
    await mainField(db, `${C}/one`, "visits", 40);
    const write = await increment(`${C}/one`, "visits", "u1", 2);
    await deliver(write);
    expect(await shardSum(`${C}-one-visits`)).toBe(42);
    expect(await shardDocuments(db, `${C}/one`)).toEqual({});
    expect((await extensionRecordRef(db, `${C}-one-visits`, `${C}/one`, "visits").get()).get("taken")).toBe(40);
    expect(logs.some((l) => l.level === "info" && l.line.includes("extension amount folded"))).toBe(true);
    // Later writes of the same device: only their amounts.
    await deliver(await increment(`${C}/one`, "visits", "u1", 1));
    expect(await shardSum(`${C}-one-visits`)).toBe(43);
  });

  it("writes nothing for documents no rule names, nor for a removal", async () => {
    const other = appCollection("xother");
    const foreign = await increment(`${other}/x`, "visits", "u1", 5);
    await deliver(foreign);
    expect(await shardDocuments(db, `${other}/x`)).toEqual({ u1: { visits: 5 } });
    expect(await documentsUnder(`${other}-x-visits`)).toEqual([]);
    const unnamed = await increment(`${C}/plain`, "title", "u1", 1);
    await deliver(unnamed);
    expect(await shardDocuments(db, `${C}/plain`)).toEqual({ u1: { title: 1 } });
    expect(await documentsUnder(`${C}-plain-visits`)).toEqual([]);
    const removal = await recorded(`${C}/plain`, "u1", () => db.doc(`${C}/plain/${SHARDS}/u1`).delete());
    await deliver(removal);
    expect(await documentsUnder(`${C}-plain-visits`)).toEqual([]);
    expect(logs.filter((l) => l.level !== "debug")).toEqual([]);
  });

  it("leaves a document whose id no counter id can hold, with one warning", async () => {
    const write = await increment(`${C}/hello world`, "visits", "u1", 3);
    await deliver(write);
    await deliver(write);
    expect(await shardDocuments(db, `${C}/hello world`)).toEqual({ u1: { visits: 3 } });
    expect(logs.filter((l) => l.level === "warn" && l.line.includes("cannot be part of a counter id"))).toHaveLength(1);
  });

  it("remembers at most MEMO_MAX documents it warned about, so attacker-chosen ids cannot fill an instance", async () => {
    const write = await increment(`${C}/bad id`, "visits", "u1", 1);
    const near = (n: number) => deliver({ ...write, document: `bad id ${n}` });
    for (let n = 0; n <= MEMO_MAX; n++) await near(n);
    await near(MEMO_MAX); // remembered: no second warning
    await near(0); // forgotten when the memo was full: warned again
    const warned = logs.filter((l) => l.level === "warn" && l.line.includes("cannot be part of a counter id"));
    expect(warned).toHaveLength(MEMO_MAX + 2);
    expect(await documentsUnder(`${C}-bad id 0-visits`)).toEqual([]);
  });

  it("moves two counted fields of one shard write to their own counters", async () => {
    await db.doc(`${C}/both`).set({ visits: 10, stats: { likes: 20, shares: 1 } });
    const write = await recorded(`${C}/both`, "u1", () => incrementFields(db, `${C}/both`, "u1", { visits: 1, "stats.likes": 2, "stats.shares": 3 }));
    await deliver(write);
    expect(await shardSum(`${C}-both-visits`)).toBe(11);
    expect(await shardSum(`${C}-both-likes`)).toBe(22);
    // The field no rule counts stays in the shard.
    expect(await shardDocuments(db, `${C}/both`)).toEqual({ u1: { stats: { shares: 3 } } });
  });

  it("is exact under duplicated, reordered and retried events delivered concurrently, while old clients keep writing", async () => {
    await withSeed("foldExtensionShards under hostile delivery", async (random) => {
      const documents = ["r1", "r2", "r3", "r4"].map((id) => `${C}/${id}-hostile`);
      const written = new Map<string, number>();
      for (const [i, document] of documents.entries()) await mainField(db, document, "visits", 100 * (i + 1));
      const expected = new Map(await Promise.all(documents.map(async (d) => [d, await extensionValue(db, d, "visits")] as const)));
      const events: Recorded[] = [];
      const write = async () => {
        const document = documents[Math.floor(random() * documents.length)]!;
        const n = 1 + Math.floor(random() * 3);
        events.push(await increment(document, "visits", `device-${Math.floor(random() * 5)}`, n));
        written.set(document, (written.get(document) ?? 0) + n);
      };
      for (let i = 0; i < 40; i++) await write();
      // Every event once, a third of them again, in a random order; more writes arrive meanwhile.
      const deliveries = shuffle([...events, ...events.filter(() => random() < 0.33)], random);
      const writing = (async () => {
        for (let i = 0; i < 20; i++) await write();
      })();
      await withConcurrency(12, deliveries.map((e) => () => deliver(e)));
      await writing;
      // The events of the writes made meanwhile, each delivered twice at once (a retry racing the first try).
      await withConcurrency(12, events.slice(40).flatMap((e) => [() => deliver(e), () => deliver(e)]));
      for (const document of documents) {
        const counterId = `${document.replace("/", "-")}-visits`;
        expect({ document, total: await shardSum(counterId) }).toEqual({ document, total: expected.get(document)! + (written.get(document) ?? 0) });
        expect(await shardDocuments(db, document)).toEqual({});
      }
    });
  });

  it("counts the fold of a windowed counter for today, and the field in the total only", async () => {
    process.env.WINDOWED_COUNTERS = `${C}-{id}-visits`;
    try {
      await mainField(db, `${C}/win`, "visits", 30);
      await deliver(await increment(`${C}/win`, "visits", "u1", 4));
      const shards = (await db.collection(`counters/${C}-win-visits/shards`).get()).docs.map((d) => d.data());
      expect(shards).toEqual([{ count: 34, writes: 1, days: { [dayOf(Date.now())]: 4 } }]);
      expect((await db.doc(`counters/${C}-win-visits`).get()).get("windowed")).toBe(true);
    } finally {
      delete process.env.WINDOWED_COUNTERS;
    }
  });

  it("fails a write whose counter is still being deleted (retried later) and writes nothing, then folds it", async () => {
    await mainField(db, `${C}/del`, "visits", 5);
    await cleanupRef(db, `${C}-del-visits`).set({ round: 0, removed: 0 });
    const write = await increment(`${C}/del`, "visits", "u1", 1);
    await expect(deliver(write)).rejects.toThrow(/still being deleted/);
    expect(await documentsUnder(`${C}-del-visits`)).toEqual([`counters/${C}-del-visits/exactCounterCleanup/pending`]);
    await cleanupRef(db, `${C}-del-visits`).delete();
    await deliver(write);
    expect(await shardSum(`${C}-del-visits`)).toBe(6);
  });

  it("folds nothing into a counter DOCUMENT_COUNTERS names: the amount stays in its shard, and an error says why", async () => {
    const page = `${C}/counted`;
    await mainField(db, page, "visits", 4);
    const write = await increment(page, "visits", "u1", 2);
    const previous = process.env.DOCUMENT_COUNTERS;
    process.env.DOCUMENT_COUNTERS = `${C}/{id}/visits/{v}=${C}-{id}-visits`;
    try {
      await deliver(write);
    } finally {
      process.env.DOCUMENT_COUNTERS = previous;
    }
    expect(await documentsUnder(`${C}-counted-visits`)).toEqual([]);
    expect(await shardDocuments(db, page)).toEqual({ u1: { visits: 2 } });
    const errors = logs.filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.line).toContain(`they count documents (DOCUMENT_COUNTERS rule 1 \\"${C}/{id}/visits/{v}=${C}-{id}-visits\\")`);
  });

  it("folds nothing with an EXTENSION_COUNTERS that does not parse, and logs an error naming the rule once", async () => {
    const saved = process.env.EXTENSION_COUNTERS;
    process.env.EXTENSION_COUNTERS = `${C}/{id}:visits`;
    try {
      const write = await increment(`${C}/badparam`, "visits", "u1", 1);
      await deliver(write);
      await deliver(write);
      expect(await shardDocuments(db, `${C}/badparam`)).toEqual({ u1: { visits: 1 } });
      const errors = logs.filter((l) => l.level === "error");
      expect(errors).toHaveLength(1);
      expect(errors[0]!.line).toContain("EXTENSION_COUNTERS: rule 1");
    } finally {
      process.env.EXTENSION_COUNTERS = saved;
    }
  });
});
