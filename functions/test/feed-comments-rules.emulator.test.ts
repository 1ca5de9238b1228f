// The rules of the React example's feed (examples/rules/feed-comments.rules, which npm start loads and
// docs/documents.md shows), against the Firestore emulator: a signed-in user writes and deletes their own
// comments, which a document counter counts; nobody writes another's, edits one, or writes as someone else;
// and the counters' own guarantees still hold in the merged file.
import { assertFails, assertSucceeds } from "@firebase/rules-unit-testing";
import { addDoc, collection, deleteDoc, doc, getDoc, getDocs, serverTimestamp, setDoc, Timestamp, updateDoc, type Firestore } from "firebase/firestore";
import { describeMergedFile, exampleRules } from "../../test/helpers/example-rules";

const { rules: RULES, env: testEnv } = exampleRules("feed-comments.rules");

const as = (uid: string) => testEnv().authenticatedContext(uid).firestore() as unknown as Firestore;
const signedOut = () => testEnv().unauthenticatedContext().firestore() as unknown as Firestore;
const comments = (db: Firestore) => collection(db, "posts/p1/comments");

beforeEach(async () => {
  const env = testEnv();
  await env.clearFirestore();
  await env.withSecurityRulesDisabled(async (context) => {
    await setDoc(doc(context.firestore() as unknown as Firestore, "posts/p1/comments/c1"), { author: "alice", text: "first", createdAt: Timestamp.now() });
  });
});

describe("comments under posts", () => {
  it("lets anyone, signed in or not, read and list a post's comments", async () => {
    expect((await assertSucceeds(getDoc(doc(signedOut(), "posts/p1/comments/c1")))).get("text")).toBe("first");
    expect((await assertSucceeds(getDocs(comments(as("bob"))))).size).toBe(1);
  });

  it("lets a signed-in user add a comment of their own, with a text of 1 to 500 characters and the server's time", async () => {
    await assertSucceeds(addDoc(comments(as("bob")), { author: "bob", text: "hi", createdAt: serverTimestamp() }));
    await assertSucceeds(addDoc(comments(as("bob")), { author: "bob", text: "x".repeat(500), createdAt: serverTimestamp() }));
  });

  it("refuses a comment signed out, as someone else, empty or too long, without the server's time, or with other fields", async () => {
    await assertFails(addDoc(comments(signedOut()), { author: "bob", text: "hi", createdAt: serverTimestamp() }));
    await assertFails(addDoc(comments(as("bob")), { author: "alice", text: "hi", createdAt: serverTimestamp() }));
    await assertFails(addDoc(comments(as("bob")), { author: "bob", text: "", createdAt: serverTimestamp() }));
    await assertFails(addDoc(comments(as("bob")), { author: "bob", text: "x".repeat(501), createdAt: serverTimestamp() }));
    await assertFails(addDoc(comments(as("bob")), { author: "bob", text: 5, createdAt: serverTimestamp() }));
    await assertFails(addDoc(comments(as("bob")), { author: "bob", text: "hi", createdAt: Timestamp.fromMillis(0) }));
    await assertFails(addDoc(comments(as("bob")), { author: "bob", text: "hi", createdAt: serverTimestamp(), status: "published" }));
  });

  it("lets the author delete their comment, and nobody else; nobody edits one", async () => {
    await assertFails(deleteDoc(doc(as("mallory"), "posts/p1/comments/c1")));
    await assertFails(deleteDoc(doc(signedOut(), "posts/p1/comments/c1")));
    await assertFails(updateDoc(doc(as("alice"), "posts/p1/comments/c1"), { text: "edited" }));
    await assertSucceeds(deleteDoc(doc(as("alice"), "posts/p1/comments/c1")));
  });

  it("opens nothing else: the post itself and the counters stay closed to clients", async () => {
    await assertFails(setDoc(doc(as("bob"), "posts/p1"), { title: "mine now" }));
    await assertFails(setDoc(doc(as("bob"), "counters/post-p1-comments"), { total: 1_000_000 }));
    await assertFails(setDoc(doc(as("bob"), "counters/post-p1-comments/shards/0"), { count: 1_000_000 }));
  });
});

describeMergedFile(RULES, "documents.md", "comments under posts");
