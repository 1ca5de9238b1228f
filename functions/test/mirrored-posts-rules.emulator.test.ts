// The rules docs/mirrors.md gives an app whose posts carry mirrored counts (examples/rules/
// mirrored-posts.rules), against the Firestore emulator: owners edit their posts but no client can write
// likeCount, stats.views or views7d (a mirrored window), and the counters' own guarantees still hold in the merged file.
import { assertFails, assertSucceeds } from "@firebase/rules-unit-testing";
import { deleteDoc, doc, getDoc, setDoc, updateDoc, type Firestore } from "firebase/firestore";
import { describeMergedFile, exampleRules } from "../../test/helpers/example-rules";

const { rules: RULES, env: testEnv } = exampleRules("mirrored-posts.rules");

beforeEach(async () => {
  const env = testEnv();
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

const as = (uid: string) => testEnv().authenticatedContext(uid).firestore() as unknown as Firestore;

describe("posts with mirrored counts", () => {
  it("lets anyone read a post and its counts", async () => {
    const snap = await assertSucceeds(getDoc(doc(testEnv().unauthenticatedContext().firestore() as unknown as Firestore, "posts/p1")));
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

describeMergedFile(RULES, "mirrors.md", "posts with mirrored counts");
