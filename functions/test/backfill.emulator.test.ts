// The backfill of document counters (docs/documents.md, "Existing documents"), through the admin entry's
// backfillDocuments, against the Firestore emulator: comments that existed before DOCUMENT_COUNTERS (no
// event ever counted them), backfilled while the app keeps writing (new comments, deletes, comments published
// and unpublished) and the document trigger counts those writes (the wrapped trigger, each event delivered
// once or twice, in any order, at once). Both ways of keeping a count: 5,000 comments under 50 posts kept by
// records (a post's comments under a group: a wildcard that is not the counter's; the backfill observes every
// document against the trigger's records), and 2,000 under 20 posts kept by recount (one count per counter).
// Every counter ends exactly at its documents, and a second run changes nothing. Reconcile reports a document
// counter that drifted from its documents, and --fix repairs it. Randomized: the seed is printed
// (DOCUMENTS_TEST_SEED=<seed> replays it).
import * as admin from "../src/admin";
import { db, withParam } from "../../test/helpers/functions";
import { withConcurrency } from "../../test/helpers/client";
import { requireEmulators } from "../../test/helpers/emulators";
import { appCollection, documentTriggersOf, recordWrite, shuffled, withSeed, type DocumentWriteEvent } from "../../test/helpers/document-writes";
import { logger } from "../../test/helpers/logger";
import { shardSum } from "../../test/helpers/functions";
import { counterRef } from "../src/model/paths";

beforeAll(requireEmulators);
jest.setTimeout(900_000);

const POSTS = appCollection("bposts");
const GROUPS = appCollection("bgroups");
const RULES =
  `${POSTS}/{post}/comments/{c}=${POSTS}-{post}-comments,${POSTS}/{post}/comments/{c}[status==published]=${POSTS}-{post}-published,` +
  `${GROUPS}/{g}/posts/{post}/comments/{c}=${GROUPS}-{post}-comments,${GROUPS}/{g}/posts/{post}/comments/{c}[status==published]=${GROUPS}-{post}-published`;
withParam("DOCUMENT_COUNTERS", RULES);
const deliver = documentTriggersOf(RULES);

/** One of the two ways: where post p's comments live, its counters, and how many posts and comments the big run has. */
interface Way {
  kept: "recount" | "records";
  path: (post: number, comment: string) => string;
  counter: (post: number, kind: "comments" | "published") => string;
  parents: number;
  perParent: number;
}

const RECORDS: Way = { kept: "records", path: (p, c) => `${GROUPS}/g1/posts/p${p}/comments/${c}`, counter: (p, kind) => `${GROUPS}-p${p}-${kind}`, parents: 50, perParent: 100 };
const RECOUNT: Way = { kept: "recount", path: (p, c) => `${POSTS}/p${p}/comments/${c}`, counter: (p, kind) => `${POSTS}-p${p}-${kind}`, parents: 20, perParent: 100 };

beforeEach(() => {
  for (const level of ["debug", "info"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

/** What each post's comments count now, read from the documents themselves. */
async function truth(way: Way): Promise<{ comments: number[]; published: number[] }> {
  const comments = Array.from({ length: way.parents }, () => 0);
  const published = Array.from({ length: way.parents }, () => 0);
  const all = await db.collectionGroup("comments").get();
  const root = way.path(0, "x").split("/")[0]!;
  for (const doc of all.docs) {
    if (!doc.ref.path.startsWith(`${root}/`)) continue;
    const post = Number(doc.ref.parent.parent!.id.slice(1));
    comments[post]!++;
    if (doc.get("status") === "published") published[post]!++;
  }
  return { comments, published };
}

/**
 * What a counter counts: kept by recount, its total (the backfill commits it); by records, the sum of its shards
 * (the backfill's shard writes reach the total through rollupTotal, which the wrapped tests' project does not run).
 */
async function countOf(counterId: string): Promise<number> {
  const parent = await counterRef(db, counterId).get();
  return parent.get("kept") === "recount" ? (parent.get("total") as number) : shardSum(counterId);
}

async function counts(way: Way): Promise<{ comments: number[]; published: number[] }> {
  const ids = Array.from({ length: way.parents }, (_, p) => p);
  return {
    comments: await Promise.all(ids.map((p) => countOf(way.counter(p, "comments")))),
    published: await Promise.all(ids.map((p) => countOf(way.counter(p, "published")))),
  };
}

describe.each([RECORDS, RECOUNT])("backfillDocuments, counters kept by $kept", (way) => {
  const { path, parents: PARENTS, perParent: PER_PARENT } = way;

  it(`counts ${way.parents * way.perParent} existing comments under ${way.parents} posts exactly while the app writes and the trigger counts, and a second run changes nothing`, async () => {
    await withSeed(`backfill racing live writes (${way.kept})`, async (random) => {
      // The app's comments from before the rules: written with no event delivered.
      for (let batchStart = 0; batchStart < PARENTS * PER_PARENT; batchStart += 500) {
        const batch = db.batch();
        for (let i = batchStart; i < Math.min(batchStart + 500, PARENTS * PER_PARENT); i++) {
          batch.set(db.doc(path(Math.floor(i / PER_PARENT), `old${i % PER_PARENT}`)), { text: `comment ${i}`, status: random() < 0.5 ? "published" : "draft" });
        }
        await batch.commit();
      }
      let backfilling = true;
      let writes = 0;
      const events: DocumentWriteEvent[] = [];
      const delivered: Promise<unknown>[] = [];
      // 8 writers at once, one at a time per document (each write's before is the previous one's after).
      const busy = new Set<string>();
      const writer = async (lane: number) => {
        for (let n = 0; backfilling; n++) {
          const post = Math.floor(random() * PARENTS);
          const target = random() < 0.4 ? `new-${lane}-${n}` : `old${Math.floor(random() * PER_PARENT)}`;
          if (busy.has(path(post, target))) continue;
          busy.add(path(post, target));
          const exists = (await db.doc(path(post, target)).get()).exists;
          const roll = random();
          const event = await recordWrite(db, path(post, target), (ref) =>
            !exists ? ref.set({ text: "new", status: roll < 0.5 ? "published" : "draft" }) : roll < 0.4 ? ref.delete() : ref.update({ status: roll < 0.7 ? "published" : "draft" }),
          );
          busy.delete(path(post, target));
          writes++;
          events.push(event);
          // Delivered once or twice, a little later, at once with the rest.
          for (let copies = random() < 0.3 ? 2 : 1; copies > 0; copies--) delivered.push(sleep(random() * 200).then(() => deliver(event)));
          await sleep(random() * 100);
        }
      };
      const writers = Array.from({ length: 8 }, (_, lane) => writer(lane));
      const report = await admin.backfillDocuments({ concurrency: 8, env: { ...process.env, DOCUMENT_COUNTERS: rulesOf(way) } });
      backfilling = false;
      await Promise.all(writers);
      await Promise.all(delivered);
      // Late copies of every event, in any order: still exact.
      await withConcurrency(16, shuffled([...events], random).slice(0, 200).map((event) => () => deliver(event)));
      console.log(`backfill: seen ${report.seen}, counted ${report.counted}, taken out ${report.takenOut}; ${writes} writes during it`);
      expect(writes).toBeGreaterThan(50);
      // Each rule saw every comment (some of them deleted before it got to them, some created since).
      for (const rule of report.rules) expect(rule.seen).toBeGreaterThanOrEqual(PARENTS * PER_PARENT * 0.9);
      expect(await counts(way)).toEqual(await truth(way));
      for (const kind of ["comments", "published"] as const) expect((await counterRef(db, way.counter(0, kind)).get()).get("kept")).toBe(way.kept);

      const second = await admin.backfillDocuments({ env: { ...process.env, DOCUMENT_COUNTERS: rulesOf(way) } });
      expect({ counted: second.counted, takenOut: second.takenOut }).toEqual({ counted: 0, takenOut: 0 });
      expect(await counts(way)).toEqual(await truth(way));
    });
  });
});

describe("reconcile of a document counter", () => {
  it("reports a counter kept by recount that differs from count() of its documents, and --fix counts it again", async () => {
    const id = RECOUNT.counter(0, "published");
    // One more published comment that no event counted (the trigger missed it: say it was not deployed yet).
    await db.doc(RECOUNT.path(0, "missed")).set({ status: "published" });
    const [before] = await collect(admin.reconcile({ counterIds: [id] }));
    expect(before).toMatchObject({ status: "drift", documents: { documents: (await truth(RECOUNT)).published[0], drift: -1, backfill: null } });
    const [fixed] = await collect(admin.reconcile({ counterIds: [id], fix: true }));
    expect(fixed).toMatchObject({ fixed: true, documents: { drift: 0, backfill: { counted: 1, takenOut: 0 } } });
    const [after] = await collect(admin.reconcile({ counterIds: [id] }));
    expect(after!.documents).toMatchObject({ drift: 0 });
  });

  it("reports no drift for a sum (kept by records) whose documents hold a value that is not an integer: it compares the sum as the counter adds it; --fix backfills a real one", async () => {
    const PRODUCTS = appCollection("bproducts");
    const STARS = `${PRODUCTS}/{p}/ratings/{r}:stars=${PRODUCTS}-{p}-stars`;
    process.env.DOCUMENT_COUNTERS = STARS; // the trigger and reconcile read it; withParam restores RULES after the test
    const deliverStars = documentTriggersOf(STARS);
    for (const [r, stars] of [["r1", 4], ["r2", 2.5], ["r3", "5"]] as const) await deliverStars(await recordWrite(db, `${PRODUCTS}/shoe/ratings/${r}`, (ref) => ref.set({ stars })));
    const id = `${PRODUCTS}-shoe-stars`;
    expect(await shardSum(id)).toBe(4);
    const [report] = await collect(admin.reconcile({ counterIds: [id] }));
    expect(report!.documents).toMatchObject({ documents: 4, shardSum: 4, drift: 0 });
    expect(report!.status).not.toBe("drift");
    // A real difference is still one: a rating no event counted.
    await db.doc(`${PRODUCTS}/shoe/ratings/r4`).set({ stars: 3 });
    const [drifted] = await collect(admin.reconcile({ counterIds: [id] }));
    expect(drifted).toMatchObject({ status: "drift", documents: { documents: 7, drift: -3 } });
    const [fixed] = await collect(admin.reconcile({ counterIds: [id], fix: true }));
    expect(fixed).toMatchObject({ documents: { documents: 7, shardSum: 7, drift: 0, backfill: { counted: 1, takenOut: 0 } } });
  });

  // Kept by recount; the records' counters here lie under several groups, which no single count() counts: reconcile
  // compares them with nothing (the sum above is the records' reconcile, repaired by the same backfill and guard).
  it.each([RECOUNT])("refuses to --fix what looks like a typo in the rule of a counter kept by $kept: nothing taken out, and the way to force it named", async (way) => {
    const id = way.counter(1, "published");
    const held = await countOf(id);
    expect(held).toBeGreaterThan(0);
    const [pattern] = rulesOf(way).split(",")[1]!.split("[");
    const typo = `${pattern}[state==published]=${id.replace("-p1-", "-{post}-")}`;
    const [report] = await collect(admin.reconcile({ counterIds: [id], fix: true, env: { ...process.env, DOCUMENT_COUNTERS: typo } }));
    expect(report!.documents!.backfill).toMatchObject({ counted: 0, takenOut: 0 });
    expect(report!.documents!.backfill!.problems).toEqual([expect.stringContaining(`none of them has the field state that its condition [state==published] reads: a typo in the rule?; if that is right: backfill --counter ${id} --force`)]);
    expect(report!.fixed).not.toBe(true);
    expect(await countOf(id)).toBe(held);
  });
});

describe.each([RECOUNT, RECORDS])("backfillDocuments refuses what looks like a typo in a rule of counters kept by $kept", (way) => {
  const typos = (rules: string) => ({ env: { ...process.env, DOCUMENT_COUNTERS: rules } });
  // One post's counters: what the guard judges is the same for one counter as for all.
  const post = 1;
  const [comments0, published0] = rulesOf(way).split(",") as [string, string];

  it("refuses, with failed-precondition naming the rule and writing nothing, a rule whose documents are nowhere or whose condition reads a field no document has; a dry run warns; force writes", async () => {
    const before = await counts(way);
    const [comments, published] = [before.comments[post]!, before.published[post]!];
    expect(published).toBeGreaterThan(0);
    const collection = comments0.replace("/comments/", "/coments/");
    await expect(admin.backfillDocuments({ ...typos(collection), counter: way.counter(post, "comments") })).rejects.toMatchObject({
      code: "failed-precondition",
      message: expect.stringMatching(/finds no document at all \(.*coments.*\) and would take out (\d+) of the \1 its counters count: a typo in its document path\?/) as string,
    });
    expect((await admin.backfillDocuments({ ...typos(collection), counter: way.counter(post, "comments"), dryRun: true })).warnings[0]).toContain(`would take out ${comments} of the ${comments}`);
    const condition = published0.replace("[status==", "[state==");
    const counter = way.counter(post, "published");
    const dry = await admin.backfillDocuments({ ...typos(condition), counter, dryRun: true });
    expect(dry.warnings).toHaveLength(1);
    expect(dry.warnings[0]).toContain(`rule 1 "${condition}" would take out ${published} of the ${published} its counters count (it saw ${comments} documents): `);
    expect(dry.warnings[0]).toContain("none of them has the field state that its condition [state==published] reads: a typo in the rule?");
    await expect(admin.backfillDocuments({ ...typos(condition), counter })).rejects.toMatchObject({ code: "failed-precondition" });
    expect(await counts(way)).toEqual(before);
    // Forced, it does what the rule says; the right rule counts them back, and nothing in it looks like a typo.
    expect(await admin.backfillDocuments({ ...typos(condition), counter, force: true })).toMatchObject({ takenOut: published });
    expect(await countOf(counter)).toBe(0);
    expect(await admin.backfillDocuments({ ...typos(rulesOf(way)), counter })).toMatchObject({ counted: published, takenOut: 0, warnings: [] });
    expect(await counts(way)).toEqual(before);
  });
});

/** The two rules of one way (as DOCUMENT_COUNTERS): a backfill of every rule reads only that way's documents. */
function rulesOf(way: Way): string {
  return RULES.split(",").filter((rule) => rule.endsWith(`-{post}-comments`) || rule.endsWith(`-{post}-published`)).filter((rule) => rule.includes(way.kept === "recount" ? `=${POSTS}-` : `=${GROUPS}-`)).join(",");
}

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
