// firestore.rules, loaded from the repository, against the Firestore emulator with
// @firebase/rules-unit-testing: clients may get a counter's parent and nothing else.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  assertFails,
  assertSucceeds,
  initializeTestEnvironment,
  type RulesTestContext,
  type RulesTestEnvironment,
} from "@firebase/rules-unit-testing";
import {
  collection,
  collectionGroup,
  deleteDoc,
  doc,
  getDoc,
  getDocs,
  increment,
  setDoc,
  updateDoc,
  type Firestore,
} from "firebase/firestore";
import { firestoreHost, requireEmulators } from "../helpers/emulators";

let env: RulesTestEnvironment;

beforeAll(async () => {
  await requireEmulators();
  const [host, port] = firestoreHost().split(":");
  env = await initializeTestEnvironment({
    projectId: "demo-rules-test",
    firestore: { rules: readFileSync(join(__dirname, "..", "..", "..", "firestore.rules"), "utf8"), host: host!, port: Number(port) },
  });
  await env.withSecurityRulesDisabled(async (ctx) => {
    const db = ctx.firestore();
    await setDoc(doc(db, "counters/likes"), { numShards: 2, total: 7, rollup: { commits: 1 } });
    await setDoc(doc(db, "counters/likes/shards/0"), { count: 3 });
    await setDoc(doc(db, "counters/likes/shards/1"), { count: 4 });
    await setDoc(doc(db, "counters/likes/requests/tap-1"), { shard: 0, delta: 1 });
    await setDoc(doc(db, "counters/likes/rollup/lease"), { slot: 1, eventId: "e" });
    await setDoc(doc(db, "profiles/alice"), { name: "Alice" });
  });
});

afterAll(async () => {
  await env?.cleanup();
});

const callers: [string, () => RulesTestContext][] = [
  ["an unauthenticated client", () => env.unauthenticatedContext()],
  ["a signed-in client", () => env.authenticatedContext("alice")],
  ["a client with the admin claim", () => env.authenticatedContext("root", { admin: true })],
];

const privatePaths = ["counters/likes/shards/0", "counters/likes/requests/tap-1", "counters/likes/rollup/lease", "profiles/alice"];

describe.each(callers)("%s", (_name, context) => {
  let db: Firestore;
  beforeEach(() => {
    db = context().firestore() as unknown as Firestore;
  });

  it("can get a counter's parent document and its total", async () => {
    const snap = await assertSucceeds(getDoc(doc(db, "counters/likes")));
    expect(snap.get("total")).toBe(7);
  });

  it("cannot list or query the counters collection", async () => {
    await assertFails(getDocs(collection(db, "counters")));
  });

  it("cannot create, update, increment or delete a counter", async () => {
    await assertFails(setDoc(doc(db, "counters/new"), { numShards: 1, total: 0 }));
    await assertFails(updateDoc(doc(db, "counters/likes"), { total: 1_000_000 }));
    await assertFails(updateDoc(doc(db, "counters/likes"), { total: increment(1) }));
    await assertFails(deleteDoc(doc(db, "counters/likes")));
  });

  it.each(privatePaths)("cannot read %s", async (path) => {
    await assertFails(getDoc(doc(db, path)));
  });

  it.each(privatePaths)("cannot write or delete %s", async (path) => {
    await assertFails(setDoc(doc(db, path), { count: 1 }));
    await assertFails(deleteDoc(doc(db, path)));
  });

  it("cannot increment a shard directly or create a new one", async () => {
    await assertFails(updateDoc(doc(db, "counters/likes/shards/0"), { count: increment(1) }));
    await assertFails(setDoc(doc(db, "counters/likes/shards/99"), { count: 1 }));
  });

  it("cannot read shards or idempotency records through a collection or collection-group query", async () => {
    await assertFails(getDocs(collection(db, "counters/likes/shards")));
    await assertFails(getDocs(collectionGroup(db, "shards")));
    await assertFails(getDocs(collectionGroup(db, "requests")));
  });
});
