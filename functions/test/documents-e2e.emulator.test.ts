// Document counters end to end (docs/documents.md): DOCUMENT_COUNTERS and MIRRORS set in
// functions/.env.local and the functions reloaded (test/helpers/local-params.ts); the app's users write comments
// and ratings with the Firebase JS SDK (the emulator's owner credential stands in for the app's own rules,
// which are not the subject here); the functions emulator runs the document triggers and the real rollup.
// Comments created, edited, deleted, created again, published and unpublished show as exact counts on the
// counters and, through MIRRORS, on the posts (`commentCount` in the same atomic write as the total); the
// sum rule gives each product's star total. Randomized: the seed is printed (DOCUMENTS_TEST_SEED=<seed>).
// "Settled" means what it says, for each way of keeping a count (docs/documents.md, "Two ways to keep a
// count"). A comment count is kept by recount: settled once it was counted at a read time at or after the
// post's last comment write (the test writes that one itself, so its commit time is known), with no record and
// its shards at 0. A star total is kept by records: every rating's record at the version of its last write
// that changed a count (every such event delivered), then the total covering every shard write
// (`rollup.readTime` at or after each shard's update time). A total that merely passes through the expected
// value while events are still queued is not settled. The backfill then has nothing to do, and the totals are
// the same after it.
import { deleteApp, initializeApp, type FirebaseApp } from "firebase/app";
import { connectFirestoreEmulator, deleteDoc, doc, getFirestore, setDoc, terminate, updateDoc, type Firestore } from "firebase/firestore";
import { getApps, type App } from "firebase-admin/app";
import type { Timestamp } from "firebase-admin/firestore";
import * as adminEntry from "../src/admin";
import { createParentAndShards } from "../src/counters/create";
import { addToRandomShard } from "../src/counters/increment";
import { contributionOf, counterOf } from "../src/documents/match";
import { versionAt, versionJustAfter, type Version } from "../src/model/time";
import { parseDocumentCounterRules } from "../src/model/document-rules";
import { documentRecordsRef, shardsRef } from "../src/model/paths";
import { microsCeil, microsFloor } from "../src/model/time";
import { e2eAdminDb } from "../../test/helpers/admin";
import { E2E_PROJECT, withConcurrency } from "../../test/helpers/client";
import { firestoreHost, requireEmulators, requireFunctionsEmulator } from "../../test/helpers/emulators";
import { withSeed } from "../../test/helpers/document-writes";
import { localParams, type LocalParams } from "../../test/helpers/local-params";
import { untilPublished } from "../../test/helpers/published-params";

jest.setTimeout(600_000);

const RELOAD_MS = 120_000;
const SETTLE_MS = 60_000;
const POSTS = "e2edposts";
const PRODUCTS = "e2edproducts";
const PARAMS = {
  DOCUMENT_COUNTERS:
    `${POSTS}/{post}/comments/{c}=e2ed-{post}-comments,${POSTS}/{post}/comments/{c}[status==published]=e2ed-{post}-published,` +
    `${PRODUCTS}/{p}/ratings/{r}:stars=e2ed-{p}-stars`,
  MIRRORS: `e2ed-{id}-comments=${POSTS}/{id}:commentCount,e2ed-{id}-published=${POSTS}/{id}:publishedCount,e2ed-{id}-stars=${PRODUCTS}/{id}:stars`,
};
/** The admin entry's copy of the params: the codebase's as the reloaded functions read them (functions/.env, then .env.local's PARAMS). */
const ADMIN_ENV = { ...process.env, ...PARAMS };
const RULES = parseDocumentCounterRules("DOCUMENT_COUNTERS", PARAMS.DOCUMENT_COUNTERS);
const db = e2eAdminDb();
const adminApp = (): App => getApps().find((a) => a.name === "e2e-admin")!;
let params: LocalParams;
let app: FirebaseApp;
let firestore: Firestore;
let serial = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Comments until one is counted: the reloaded functions run the document trigger. */
async function untilCounting(): Promise<void> {
  const started = Date.now();
  const post = `probe${Date.now()}`;
  await db.doc(`${POSTS}/${post}`).set({ title: "probe" });
  while (!(await db.doc(`counters/e2ed-${post}-comments`).get()).exists) {
    if (Date.now() - started > RELOAD_MS) throw new Error("the functions did not reload with DOCUMENT_COUNTERS");
    await setDoc(doc(firestore, `${POSTS}/${post}/comments/c${serial++}`), { text: "probe" });
    await sleep(1000);
  }
}

/** After the restore: until a rollup commits without this file's mirrors (the reload is done), for the test files that run next. */
async function untilMirrorsOff(): Promise<void> {
  const started = Date.now();
  for (let n = 0; Date.now() - started < RELOAD_MS; n++) {
    const id = `settle${Date.now()}x${n}`;
    const counterId = `e2ed-${id}-stars`;
    const product = db.doc(`${PRODUCTS}/${id}`);
    await product.set({ stars: -1 });
    await createParentAndShards(db, counterId, 1);
    await addToRandomShard(db, counterId, 1, { requestTtlMs: 60_000 });
    while ((await db.doc(`counters/${counterId}`).get()).get("total") !== 1 && Date.now() - started < RELOAD_MS) await sleep(200);
    if ((await product.get()).get("stars") === -1) return;
  }
  throw new Error("the functions did not reload with the committed params");
}

beforeAll(async () => {
  await requireEmulators();
  await requireFunctionsEmulator();
  app = initializeApp({ projectId: E2E_PROJECT }, `documents-e2e-${Date.now()}`);
  firestore = getFirestore(app);
  const [host, port] = firestoreHost().split(":") as [string, string];
  connectFirestoreEmulator(firestore, host, Number(port), { mockUserToken: "owner" });
  params = localParams(Object.keys(PARAMS));
  params.set(PARAMS);
  await untilCounting();
  await untilPublished(db, PARAMS);
});

afterAll(async () => {
  try {
    await sleep(5_000); // let the last events of this file's writes be delivered while the triggers are still registered
    params.restore();
    await untilMirrorsOff();
  } finally {
    await terminate(firestore);
    await deleteApp(app);
  }
});

/**
 * The app's writes of its documents through the JS SDK, each followed by an admin read of the document:
 * its version after the write (a delete: just after the version it removed), as its event carries it.
 * One writer per document at a time, so the read is the write's own version.
 */
class AppWrites {
  /** Per document, its versions in order, with its data at each (undefined: deleted). */
  private readonly history = new Map<string, { version: Version; data: Record<string, unknown> | undefined }[]>();
  private readonly updated = new Map<string, Timestamp>();

  async set(path: string, data: Record<string, unknown>): Promise<void> {
    await setDoc(doc(firestore, path), data);
    await this.observe(path);
  }

  async update(path: string, data: Record<string, unknown>): Promise<void> {
    await updateDoc(doc(firestore, path), data);
    await this.observe(path);
  }

  async delete(path: string): Promise<void> {
    await deleteDoc(doc(firestore, path));
    const removed = this.updated.get(path)!;
    this.updated.delete(path);
    this.history.get(path)!.push({ version: versionJustAfter({ seconds: removed.seconds, nanoseconds: removed.nanoseconds }), data: undefined });
  }

  private async observe(path: string): Promise<void> {
    const snap = await db.doc(path).get();
    this.updated.set(path, snap.updateTime!);
    const versions = this.history.get(path) ?? [];
    versions.push({ version: versionAt(snap.updateTime!), data: snap.data() });
    this.history.set(path, versions);
  }

  /**
   * Per counter: each document's version of its last write that changed what it counts there, and what it
   * counts since. The trigger writes a record exactly for such writes (functions/src/documents/records.ts), so a
   * record at that version means every event that changes the count was delivered.
   */
  lastChanges(): Map<string, Map<string, { version: Version; counted: number }>> {
    const out = new Map<string, Map<string, { version: Version; counted: number }>>();
    for (const [path, versions] of this.history) {
      for (const rule of RULES) {
        // These rules name their counters by path (no `{=FIELD}`): the data does not change which counter.
        const target = counterOf(rule, path, versions[0]?.data);
        if (target === null || !("counterId" in target)) continue;
        let counted = 0;
        let last: { version: Version; counted: number } | undefined;
        for (const { version, data } of versions) {
          const now = contributionOf(rule, data).value;
          if (now !== counted) last = { version, counted: now };
          counted = now;
        }
        if (last === undefined) continue;
        const ofCounter = out.get(target.counterId) ?? new Map<string, { version: Version; counted: number }>();
        ofCounter.set(path, last);
        out.set(target.counterId, ofCounter);
      }
    }
    return out;
  }
}

/** Until every counter's record of every document written is at its last change's version (AppWrites.lastChanges). */
async function untilRecorded(writes: AppWrites): Promise<void> {
  const started = Date.now();
  for (const [counterId, expected] of writes.lastChanges()) {
    for (;;) {
      const records = await documentRecordsRef(db, counterId).get();
      const seen = new Map(records.docs.map((r) => [r.get("document") as string, { version: r.get("version") as string, counted: r.get("counted") as number }]));
      const behind = [...expected].filter(([path, change]) => (seen.get(path)?.version ?? "") < change.version);
      if (behind.length === 0) {
        // At the last change's version, each record counts what the document counts.
        expect([...expected].map(([path]) => [path, seen.get(path)?.counted])).toEqual([...expected].map(([path, change]) => [path, change.counted]));
        break;
      }
      if (Date.now() - started > SETTLE_MS) throw new Error(`${counterId}: the records of ${behind.map(([path]) => path).join(", ")} are not at their last change after ${SETTLE_MS} ms`);
      await sleep(200);
    }
  }
}

/** Until the counter, kept by recount, has a read time at or after `writeTime`; then it holds no record and its shards 0. */
async function untilCovered(counterId: string, writeTime: Timestamp): Promise<void> {
  const started = Date.now();
  for (;;) {
    const counter = await db.doc(`counters/${counterId}`).get();
    const readTime = counter.get("rollup.readTime") as Timestamp | undefined;
    if (readTime !== undefined && microsFloor(readTime) >= microsCeil(writeTime)) break;
    if (Date.now() - started > SETTLE_MS) throw new Error(`${counterId}: no count read at or after the last comment's write within ${SETTLE_MS} ms`);
    await sleep(200);
  }
  const counter = await db.doc(`counters/${counterId}`).get();
  const shards = await shardsRef(db, counterId).get();
  expect({ counterId, kept: counter.get("kept") as unknown, records: (await documentRecordsRef(db, counterId).get()).size, shards: shards.docs.map((s) => s.get("count") as number) }).toEqual({
    counterId,
    kept: "recount",
    records: 0,
    shards: shards.docs.map(() => 0),
  });
}

/**
 * The counter's total and the mirrored field, read together once the total covers every shard write (its
 * `rollup.readTime` at or after each shard's update time: no rollup left to commit); a counter that does not
 * exist (no document ever counted in it) shows total null.
 */
async function settled(counterId: string, target: string, field: string): Promise<{ total: unknown; mirrored: unknown }> {
  const started = Date.now();
  for (;;) {
    const [counter, mirror] = await db.getAll(db.doc(`counters/${counterId}`), db.doc(target));
    if (!counter!.exists) return { total: null, mirrored: mirror!.get(field) };
    // Read after the parent: a shard write since would show an update time after its readTime.
    const shards = await shardsRef(db, counterId).get();
    const readTime = counter!.get("rollup.readTime") as Timestamp | undefined;
    // As the rollup's coverage rule: a write at W (rounded up) is in a total read at R (rounded down) when W <= R.
    if (readTime !== undefined && shards.docs.every((s) => microsCeil(s.updateTime) <= microsFloor(readTime))) {
      return { total: counter!.get("total"), mirrored: mirror!.get(field) };
    }
    if (Date.now() - started > SETTLE_MS) throw new Error(`${counterId}: the total did not cover every shard write within ${SETTLE_MS} ms`);
    await sleep(200);
  }
}

/** What `settled` shows when the counter counts `n`: a counter no document ever counted in does not exist (and mirrors nothing). */
function shows(n: number, seen: { total: unknown }): { total: unknown; mirrored: unknown } {
  return n === 0 && seen.total === null ? { total: null, mirrored: undefined } : { total: n, mirrored: n };
}

describe("comments and ratings written by the app's users", () => {
  it("show exact comment counts on the counters and, through MIRRORS, on the posts", async () => {
    await withSeed("comments through the functions emulator", async (random) => {
      const posts = Array.from({ length: 4 }, (_, i) => `p${Date.now()}x${i}`);
      await Promise.all(posts.map((p) => db.doc(`${POSTS}/${p}`).set({ title: p })));
      const expected = new Map(posts.map((p) => [p, { comments: new Map<string, string>() }]));
      const writes = new AppWrites();
      // Each post's comments go through their lives one write at a time; the posts at once.
      await withConcurrency(
        4,
        posts.map((post) => async () => {
          const mine = expected.get(post)!.comments;
          for (let step = 0; step < 14; step++) {
            const id = `c${Math.floor(random() * 5)}`;
            const path = `${POSTS}/${post}/comments/${id}`;
            const roll = random();
            if (!mine.has(id)) {
              const status = roll < 0.5 ? "published" : "draft";
              await writes.set(path, { text: `hello ${step}`, status });
              mine.set(id, status);
            } else if (roll < 0.3) {
              await writes.delete(path); // deleted; the same id may come back later
              mine.delete(id);
            } else if (roll < 0.5) {
              await writes.update(path, { text: `edited ${step}` }); // counted as it was
            } else {
              const status = mine.get(id) === "published" ? "draft" : "published";
              await writes.update(path, { status });
              mine.set(id, status);
            }
          }
        }),
      );
      // Each post's last comment, written by the test itself so that its commit time is known: a comment
      // count (kept by recount) has settled once its read time is at or after it, the last write of its comments.
      for (const post of posts) {
        const { writeTime } = await db.doc(`${POSTS}/${post}/comments/zlast`).set({ text: "last", status: "published" });
        expected.get(post)!.comments.set("zlast", "published");
        for (const counter of [`e2ed-${post}-comments`, `e2ed-${post}-published`]) await untilCovered(counter, writeTime);
      }
      const check = async (when: string) => {
        for (const post of posts) {
          const comments = expected.get(post)!.comments;
          const published = [...comments.values()].filter((s) => s === "published").length;
          const all = await settled(`e2ed-${post}-comments`, `${POSTS}/${post}`, "commentCount");
          expect({ when, post, ...all }).toEqual({ when, post, ...shows(comments.size, all) });
          const some = await settled(`e2ed-${post}-published`, `${POSTS}/${post}`, "publishedCount");
          expect({ when, post, ...some }).toEqual({ when, post, ...shows(published, some) });
        }
      };
      await check("settled");
      // The counts agree with the documents as the backfill counts them: it has nothing to do.
      for (const post of posts) {
        for (const counter of [`e2ed-${post}-comments`, `e2ed-${post}-published`]) {
          const report = await adminEntry.backfillDocuments({ counter, env: ADMIN_ENV, app: adminApp() });
          expect({ counter, counted: report.counted, takenOut: report.takenOut }).toEqual({ counter, counted: 0, takenOut: 0 });
        }
      }
      await check("after the backfill");
    });
  });

  it("gives each product its star total: the sum of its ratings' stars, edited and deleted", async () => {
    const product = `shoe${Date.now()}`;
    await db.doc(`${PRODUCTS}/${product}`).set({ name: "shoe" });
    const rating = (id: string) => `${PRODUCTS}/${product}/ratings/${id}`;
    const writes = new AppWrites();
    await writes.set(rating("r1"), { stars: 5 });
    await writes.set(rating("r2"), { stars: 3 });
    await writes.set(rating("r3"), { stars: 4 });
    await writes.update(rating("r2"), { stars: 1 });
    await writes.delete(rating("r3"));
    await writes.set(rating("r4"), { stars: 2 });
    await untilRecorded(writes);
    expect(await settled(`e2ed-${product}-stars`, `${PRODUCTS}/${product}`, "stars")).toEqual({ total: 8, mirrored: 8 });
    const report = await adminEntry.backfillDocuments({ counter: `e2ed-${product}-stars`, env: ADMIN_ENV, app: adminApp() });
    expect({ counted: report.counted, takenOut: report.takenOut }).toEqual({ counted: 0, takenOut: 0 });
    expect(await settled(`e2ed-${product}-stars`, `${PRODUCTS}/${product}`, "stars")).toEqual({ total: 8, mirrored: 8 });
  });
});
