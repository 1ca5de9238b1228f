// Document counters end to end (docs/documents.md): DOCUMENT_COUNTERS and MIRRORS set in
// functions/.env.local and the functions reloaded (test/helpers/local-params.ts); the app's users write comments
// and ratings with the Firebase JS SDK (the emulator's owner credential stands in for the app's own rules,
// which are not the subject here); the functions emulator runs the document triggers and the real rollup.
// Comments created, edited, deleted, created again, published and unpublished show as exact counts on the
// counters and, through MIRRORS, on the posts (`commentCount` in the same atomic write as the total); the
// sum rule gives each product's star total. Randomized: the seed is printed (DOCUMENTS_TEST_SEED=<seed>).
import { deleteApp, initializeApp, type FirebaseApp } from "firebase/app";
import { connectFirestoreEmulator, deleteDoc, doc, getFirestore, setDoc, terminate, updateDoc, type Firestore } from "firebase/firestore";
import { getApps, type App } from "firebase-admin/app";
import * as adminEntry from "../src/admin";
import { createParentAndShards } from "../src/counters/create";
import { addToRandomShard } from "../src/counters/increment";
import { e2eAdminDb, waitFor } from "../../test/helpers/admin";
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

/** The counter's total and the mirrored field, read together once they settle at `expected`. */
async function settled(counterId: string, target: string, field: string, expected: number): Promise<{ total: unknown; mirrored: unknown }> {
  await waitFor(async () => (await db.doc(`counters/${counterId}`).get()).get("total") as unknown, expected, SETTLE_MS);
  await waitFor(async () => (await db.doc(target).get()).get(field) as unknown, expected, SETTLE_MS);
  const [counter, mirrored] = await db.getAll(db.doc(`counters/${counterId}`), db.doc(target));
  return { total: counter!.get("total"), mirrored: mirrored!.get(field) };
}

describe("comments and ratings written by the app's users", () => {
  it("show exact comment counts on the counters and, through MIRRORS, on the posts", async () => {
    await withSeed("comments through the functions emulator", async (random) => {
      const posts = Array.from({ length: 4 }, (_, i) => `p${Date.now()}x${i}`);
      await Promise.all(posts.map((p) => db.doc(`${POSTS}/${p}`).set({ title: p })));
      const expected = new Map(posts.map((p) => [p, { comments: new Map<string, string>() }]));
      // Each post's comments go through their lives one write at a time; the posts at once.
      await withConcurrency(
        4,
        posts.map((post) => async () => {
          const mine = expected.get(post)!.comments;
          for (let step = 0; step < 14; step++) {
            const id = `c${Math.floor(random() * 5)}`;
            const ref = doc(firestore, `${POSTS}/${post}/comments/${id}`);
            const roll = random();
            if (!mine.has(id)) {
              const status = roll < 0.5 ? "published" : "draft";
              await setDoc(ref, { text: `hello ${step}`, status });
              mine.set(id, status);
            } else if (roll < 0.3) {
              await deleteDoc(ref); // deleted; the same id may come back later
              mine.delete(id);
            } else if (roll < 0.5) {
              await updateDoc(ref, { text: `edited ${step}` }); // counted as it was
            } else {
              const status = mine.get(id) === "published" ? "draft" : "published";
              await updateDoc(ref, { status });
              mine.set(id, status);
            }
          }
        }),
      );
      for (const post of posts) {
        const comments = expected.get(post)!.comments;
        const published = [...comments.values()].filter((s) => s === "published").length;
        expect({ post, ...(await settled(`e2ed-${post}-comments`, `${POSTS}/${post}`, "commentCount", comments.size)) }).toEqual({ post, total: comments.size, mirrored: comments.size });
        expect({ post, ...(await settled(`e2ed-${post}-published`, `${POSTS}/${post}`, "publishedCount", published)) }).toEqual({ post, total: published, mirrored: published });
      }
      // The triggers' records agree with the documents as the backfill reads them: it has nothing to do.
      for (const post of posts) {
        const report = await adminEntry.backfillDocuments({ counter: `e2ed-${post}-comments`, env: PARAMS, app: adminApp() });
        expect({ post, counted: report.counted, takenOut: report.takenOut }).toEqual({ post, counted: 0, takenOut: 0 });
      }
    });
  });

  it("gives each product its star total: the sum of its ratings' stars, edited and deleted", async () => {
    const product = `shoe${Date.now()}`;
    await db.doc(`${PRODUCTS}/${product}`).set({ name: "shoe" });
    const rating = (id: string) => doc(firestore, `${PRODUCTS}/${product}/ratings/${id}`);
    await setDoc(rating("r1"), { stars: 5 });
    await setDoc(rating("r2"), { stars: 3 });
    await setDoc(rating("r3"), { stars: 4 });
    await updateDoc(rating("r2"), { stars: 1 });
    await deleteDoc(rating("r3"));
    await setDoc(rating("r4"), { stars: 2 });
    expect(await settled(`e2ed-${product}-stars`, `${PRODUCTS}/${product}`, "stars", 8)).toEqual({ total: 8, mirrored: 8 });
  });
});
