// The document trigger keeps the total itself (functions/src/documents/trigger.ts): the total is exact as soon
// as the invocation that counted a comment resolves, with no rollupTotal at all. Kept by records, it rolls up
// its own shard write; kept by recount, it is the rollup (a count of the comments at a read time after the
// write). These tests run the wrapped trigger in-process against the Firestore emulator, on the wrapped
// tests' own project (test/helpers/wrapped.ts), where the functions emulator's rollupTotal never runs: a
// total that moved came from the trigger's invocation itself. Then the move of a recounted counter past
// RECOUNT_LIMIT to records, through the sweep, exact at every step, and a counter from before recounts
// (no `kept`), which keeps counting by records.
import { FieldValue } from "firebase-admin/firestore";
import { captureLogs, logger } from "../../test/helpers/logger";
import { db, functions, shardSum, withParam } from "../../test/helpers/functions";
import { withConcurrency } from "../../test/helpers/client";
import { requireEmulators } from "../../test/helpers/emulators";
import { appCollection, documentTriggersOf, recordWrite, type DocumentWriteEvent } from "../../test/helpers/document-writes";
import { backfillDocuments } from "../src/documents/backfill";
import { firestoreDocumentStore } from "../src/documents/firestore-store";
import { parseDocumentCounterRules } from "../src/model/document-rules";
import { counterRef, documentRecordsRef, shardsRef } from "../src/model/paths";
import { microsCeil, microsFloor } from "../src/model/time";
import { RECOUNT_MEMO_MS } from "../src/rollup/plan";

beforeAll(requireEmulators);
jest.setTimeout(120_000);

const POSTS = appCollection("rposts");
const FORUMS = appCollection("rforums");
const RULES =
  `${POSTS}/{post}/comments/{comment}=${POSTS}-{post}-comments, ${POSTS}/{post}/comments/{c}[status==published]=${POSTS}-{post}-published, ` +
  `${FORUMS}/{forum}/threads/{thread}/replies/{r}=${FORUMS}-{thread}-comments, ${FORUMS}/{forum}/threads/{thread}/replies/{r}[status==published]=${FORUMS}-{thread}-published`;
withParam("DOCUMENT_COUNTERS", RULES);
const deliver = documentTriggersOf(RULES);

const logs = captureLogs();

const publish = (ref: FirebaseFirestore.DocumentReference) => ref.set({ text: "hi", status: "published" });
const remove = (ref: FirebaseFirestore.DocumentReference) => ref.delete();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The counter's total and how it is kept, and whether its read time is at or after every write of its shards and of `documents`. */
async function rolledUp(counterId: string, documents: readonly DocumentWriteEvent[] = []): Promise<{ total: unknown; kept: unknown; covers: boolean }> {
  const [parent, shards] = await Promise.all([counterRef(db, counterId).get(), shardsRef(db, counterId).get()]);
  const readTime = parent.get("rollup.readTime") as FirebaseFirestore.Timestamp | null | undefined;
  const written = [...shards.docs.map((s) => microsCeil(s.updateTime)), ...documents.map((d) => microsCeil(d.after.exists ? d.after.updateTime! : d.before.updateTime!))];
  return { total: parent.get("total"), kept: parent.get("kept") ?? null, covers: readTime != null && microsFloor(readTime) >= Math.max(...written) };
}

/** The rollup's lines of `counterId` logged by the trigger's invocations. */
function inlineOutcomes(counterId: string): string[] {
  return logs
    .filter((l) => l.line.includes('"rollup ops"') && l.line.includes('"inline":true') && l.line.includes(`"counterId":"${counterId}"`))
    .map((l) => /"outcome":"([^"]+)"/.exec(l.line)?.[1] ?? "?");
}

describe("documentCounters keeps the total itself, kept by records: it rolls up its own shard write", () => {
  const reply = (thread: string, id: string) => `${FORUMS}/f1/threads/${thread}/replies/${id}`;

  it("makes the total exact by the time the handler resolves, on an idle counter and on a busy one, without rollupTotal", async () => {
    const id = `${FORUMS}-t1-comments`;
    // Idle: the first reply creates the counter; its leading edge commits at once.
    await deliver(await recordWrite(db, reply("t1", "c1"), publish));
    expect(await rolledUp(id)).toEqual({ total: 1, kept: "records", covers: true });
    expect(await rolledUp(`${FORUMS}-t1-published`)).toEqual({ total: 1, kept: "records", covers: true });
    // Busy: the next replies come within the interval of that commit, so the rollup starts a chain (a commit
    // with a promise) and its owner carries it, in the trigger's invocation; one is delivered twice.
    const events: DocumentWriteEvent[] = await Promise.all([...["c2", "c3", "c4", "c5"].map((c) => recordWrite(db, reply("t1", c), publish)), recordWrite(db, reply("t1", "c1"), remove)]);
    await withConcurrency(8, [...events, events[0]!].map((event) => () => deliver(event)));
    expect(await shardSum(id)).toBe(4);
    expect(await rolledUp(id)).toEqual({ total: 4, kept: "records", covers: true });
    expect(await rolledUp(`${FORUMS}-t1-published`)).toEqual({ total: 4, kept: "records", covers: true });
    // Both paths ran in the trigger: a leading edge, and the start of a chain.
    expect(inlineOutcomes(id)).toEqual(expect.arrayContaining(["committed-lead", "committed-start"]));
    expect(logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
  });

  it("counts the reply and succeeds when its rollup fails, with a warning naming the counter and the document", async () => {
    const id = `${FORUMS}-t2-comments`;
    const debug = jest.mocked(logger.debug).getMockImplementation()!;
    // The rollup's last step (its ops line) throws: the invocation must still succeed.
    jest.mocked(logger.debug).mockImplementation((...args: unknown[]) => {
      if (args[0] === "rollup ops") throw new Error("the rollup failed here");
      debug(...args);
    });
    await expect(deliver(await recordWrite(db, reply("t2", "c1"), publish))).resolves.toBeUndefined();
    expect(await shardSum(id)).toBe(1);
    const warnings = logs.filter((l) => l.level === "warn" && l.line.includes("its rollup failed here and is left to rollupTotal"));
    expect(warnings).toHaveLength(2); // one per counter the reply moved
    expect(warnings.map((w) => w.line).join()).toContain(`"counterId":"${id}"`);
    expect(warnings[0]!.line).toContain(`"document":"${reply("t2", "c1")}"`);
    expect(warnings[0]!.line).toContain(`"error":"the rollup failed here"`);
  });
});

describe("documentCounters keeps the total itself, kept by recount: it is the rollup", () => {
  const comment = (post: string, id: string) => `${POSTS}/${post}/comments/${id}`;

  it("makes the total exact by the time the handler resolves, on an idle counter and on a busy one, with no shard write and no record", async () => {
    const id = `${POSTS}-p1-comments`;
    const first = await recordWrite(db, comment("p1", "c1"), publish);
    await deliver(first);
    expect(await rolledUp(id, [first])).toEqual({ total: 1, kept: "recount", covers: true });
    expect(await rolledUp(`${POSTS}-p1-published`, [first])).toEqual({ total: 1, kept: "recount", covers: true });
    const events: DocumentWriteEvent[] = await Promise.all([...["c2", "c3", "c4", "c5"].map((c) => recordWrite(db, comment("p1", c), publish)), recordWrite(db, comment("p1", "c1"), remove)]);
    await withConcurrency(8, [...events, events[0]!].map((event) => () => deliver(event)));
    expect(await rolledUp(id, events)).toEqual({ total: 4, kept: "recount", covers: true });
    expect(await rolledUp(`${POSTS}-p1-published`, events)).toEqual({ total: 4, kept: "recount", covers: true });
    expect(inlineOutcomes(id)).toEqual(expect.arrayContaining(["committed-lead", "committed-start"]));
    expect([await shardSum(id), (await documentRecordsRef(db, id).get()).size]).toEqual([0, 0]);
    expect(logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
  });

  it("fails the event when its recount fails (no other delivery brings the change), and counts it when the platform delivers it again", async () => {
    const id = `${POSTS}-p2-comments`;
    await deliver(await recordWrite(db, comment("p2", "c1"), publish));
    const write = await recordWrite(db, comment("p2", "c2"), publish);
    const debug = jest.mocked(logger.debug).getMockImplementation()!;
    jest.mocked(logger.debug).mockImplementation((...args: unknown[]) => {
      if (args[0] === "rollup ops") throw new Error("the rollup failed here");
      debug(...args);
    });
    await expect(deliver(write)).rejects.toThrow("the rollup failed here");
    jest.mocked(logger.debug).mockImplementation(debug);
    await deliver(write);
    expect(await rolledUp(id, [write])).toEqual({ total: 2, kept: "recount", covers: true });
  });
});

describe("a recounted counter past RECOUNT_LIMIT", () => {
  const comment = (id: string) => `${POSTS}/big/comments/${id}`;
  const id = `${POSTS}-big-comments`;
  let previous: string | undefined;

  beforeEach(() => {
    previous = process.env.RECOUNT_LIMIT;
    process.env.RECOUNT_LIMIT = "3";
  });
  afterEach(() => {
    if (previous === undefined) delete process.env.RECOUNT_LIMIT;
    else process.env.RECOUNT_LIMIT = previous;
  });

  it("moves to records by itself, its total exact at every step, and never moves back", async () => {
    const writes: DocumentWriteEvent[] = [];
    const write = async (path: string, change: (ref: FirebaseFirestore.DocumentReference) => Promise<unknown>) => {
      const event = await recordWrite(db, path, change);
      writes.push(event);
      await deliver(event);
    };
    for (const c of ["c1", "c2", "c3"]) await write(comment(c), publish);
    expect(await rolledUp(id, writes)).toEqual({ total: 3, kept: "recount", covers: true });
    // The fourth passes the limit: counted in full, the counter starts moving.
    await write(comment("c4"), publish);
    expect(await rolledUp(id, writes)).toEqual({ total: 4, kept: "moving", covers: true });
    const movingSince = (await counterRef(db, id).get()).get("rollup.movingSince") as FirebaseFirestore.Timestamp;
    expect(movingSince).toBeDefined();
    // While it moves, it is recounted (exact) and each change gets its record too.
    await write(comment("c5"), publish);
    await write(comment("c1"), remove);
    expect(await rolledUp(id, writes)).toEqual({ total: 4, kept: "moving", covers: true });
    expect((await documentRecordsRef(db, id).get()).docs.map((r) => [r.get("document") as string, r.get("counted") as number])).toEqual(
      expect.arrayContaining([
        [comment("c1"), 0],
        [comment("c5"), 1],
      ]),
    );
    // The sweep ends the move once no instance can still decide a change from its memory of the parent.
    await sleep(Math.max(0, movingSince.toMillis() + 2 * RECOUNT_MEMO_MS - Date.now()) + 100);
    await functions.rollupSweep.run({ scheduleTime: new Date().toISOString() });
    const moved = await rolledUp(id, writes);
    expect(moved).toEqual({ total: 4, kept: "records", covers: true });
    expect(await shardSum(id)).toBe(4);
    const counted = (await documentRecordsRef(db, id).get()).docs.filter((r) => r.get("counted") === 1).map((r) => r.get("document") as string);
    expect(counted.sort()).toEqual([comment("c2"), comment("c3"), comment("c4"), comment("c5")]);
    // Kept by records from now on, under the limit again too.
    for (const c of ["c2", "c3", "c4"]) await write(comment(c), remove);
    await write(comment("c6"), publish);
    expect(await rolledUp(id)).toEqual({ total: 2, kept: "records", covers: true });
    expect(await shardSum(id)).toBe(2);
  });
});

describe("a document counter from before recounts (no kept)", () => {
  it("keeps counting by records: a record and a shard delta per change, the total the sum of the shards", async () => {
    const comment = (id: string) => `${POSTS}/old/comments/${id}`;
    const id = `${POSTS}-old-comments`;
    for (const c of ["c1", "c2"]) await db.doc(comment(c)).set({ text: c });
    // As the previous version left it: records and shard deltas, and a parent without `kept`.
    const rules = parseDocumentCounterRules("DOCUMENT_COUNTERS", RULES);
    await backfillDocuments(firestoreDocumentStore(db), rules, { counter: id, records: true, force: true, newCounter: () => ({ numShards: 1, windowed: false }) });
    await counterRef(db, id).update({ kept: FieldValue.delete() });
    const events = [await recordWrite(db, comment("c3"), publish), await recordWrite(db, comment("c1"), remove)];
    await Promise.all(events.map(deliver));
    expect(await rolledUp(id)).toEqual({ total: 2, kept: null, covers: true });
    expect(await shardSum(id)).toBe(2);
    expect((await documentRecordsRef(db, id).get()).docs.map((r) => [r.get("document") as string, r.get("counted") as number]).sort()).toEqual([
      [comment("c1"), 0],
      [comment("c2"), 1],
      [comment("c3"), 1],
    ]);
  });
});
