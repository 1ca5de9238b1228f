// The rules docs/mirrors.md gives an app whose posts carry mirrored counts (examples/rules/
// mirrored-posts.rules), against the Firestore emulator: owners edit their posts but no client can write
// likeCount, stats.views or views7d (a mirrored window), and the counters' own guarantees still hold in the merged file.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { assertFails, assertSucceeds, initializeTestEnvironment, type RulesTestEnvironment } from "@firebase/rules-unit-testing";
import { deleteDoc, doc, getDoc, setDoc, setLogLevel, updateDoc, type Firestore } from "firebase/firestore";
import { checkGuarantees } from "../../../cli/src/lib/rules-check";
import { firestoreHost, requireEmulators } from "../helpers/emulators";

const ROOT = join(__dirname, "..", "..", "..");
const RULES = readFileSync(join(ROOT, "examples", "rules", "mirrored-posts.rules"), "utf8");

let env: RulesTestEnvironment;

beforeAll(async () => {
  await requireEmulators();
  setLogLevel("silent");
  const host = firestoreHost();
  const at = host.lastIndexOf(":");
  env = await initializeTestEnvironment({
    projectId: `demo-mirrored-posts-${randomUUID().slice(0, 8)}`,
    firestore: { rules: RULES, host: host.slice(0, at), port: Number(host.slice(at + 1)) },
  });
});

afterAll(async () => {
  await env?.cleanup();
});

beforeEach(async () => {
  await env.clearFirestore();
  await env.withSecurityRulesDisabled(async (context) => {
    await setDoc(doc(context.firestore() as unknown as Firestore, "posts/p1"), {
      ownerId: "alice",
      title: "hello",
      likeCount: 3,
      stats: { views: 10, shares: 1 },
      views7d: 4,
    });
  });
});

const as = (uid: string) => env.authenticatedContext(uid).firestore() as unknown as Firestore;

describe("posts with mirrored counts", () => {
  it("lets anyone read a post and its counts", async () => {
    const snap = await assertSucceeds(getDoc(doc(env.unauthenticatedContext().firestore() as unknown as Firestore, "posts/p1")));
    expect(snap.get("likeCount")).toBe(3);
  });

  it("lets the owner edit the title and other stats", async () => {
    await assertSucceeds(updateDoc(doc(as("alice"), "posts/p1"), { title: "edited", "stats.shares": 2 }));
  });

  it("denies the owner a write of likeCount, or of stats.views", async () => {
    await assertFails(updateDoc(doc(as("alice"), "posts/p1"), { likeCount: 1_000_000 }));
    await assertFails(updateDoc(doc(as("alice"), "posts/p1"), { "stats.views": 1_000_000 }));
    await assertFails(updateDoc(doc(as("alice"), "posts/p1"), { stats: { shares: 2 } })); // drops views
    await assertFails(setDoc(doc(as("alice"), "posts/p1"), { ownerId: "alice", title: "x" })); // drops likeCount
  });

  it("denies the owner a write of the mirrored week (views7d), which a trending feed orders by", async () => {
    await assertFails(updateDoc(doc(as("alice"), "posts/p1"), { views7d: 1_000_000 }));
    await assertFails(setDoc(doc(as("alice"), "posts/p1"), { ownerId: "alice", title: "x", likeCount: 3, stats: { views: 10, shares: 1 } })); // drops views7d
    await assertFails(setDoc(doc(as("bob"), "posts/p6"), { ownerId: "bob", title: "new", views7d: 50 }));
    await assertSucceeds(updateDoc(doc(as("alice"), "posts/p1"), { title: "still mine" }));
  });

  it("denies everyone else any write", async () => {
    await assertFails(updateDoc(doc(as("mallory"), "posts/p1"), { title: "pwned" }));
    await assertFails(updateDoc(doc(as("mallory"), "posts/p1"), { likeCount: 4 }));
    await assertFails(deleteDoc(doc(as("mallory"), "posts/p1")));
  });

  it("lets a user create their own post only without counts", async () => {
    await assertSucceeds(setDoc(doc(as("bob"), "posts/p2"), { ownerId: "bob", title: "new" }));
    await assertFails(setDoc(doc(as("bob"), "posts/p3"), { ownerId: "bob", title: "new", likeCount: 500 }));
    await assertFails(setDoc(doc(as("bob"), "posts/p4"), { ownerId: "bob", stats: { views: 9 } }));
    await assertFails(setDoc(doc(as("bob"), "posts/p5"), { ownerId: "alice", title: "not mine" }));
  });
});

describe("the merged file", () => {
  it("keeps every guarantee of the counters (what npm run check-rules checks)", async () => {
    const results = await checkGuarantees(RULES, firestoreHost());
    expect(results.flatMap((r) => r.breaches)).toEqual([]);
  });

  it("is what docs/mirrors.md shows for the posts", () => {
    const block = RULES.slice(RULES.indexOf("    // BEGIN posts with mirrored counts"), RULES.indexOf("    // END posts with mirrored counts"));
    expect(block.length).toBeGreaterThan(100);
    expect(readFileSync(join(ROOT, "docs", "mirrors.md"), "utf8")).toContain(block);
  });
});
