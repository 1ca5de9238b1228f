// The rules docs/security.md gives an app moving from the firestore-counter extension (examples/rules/
// extension-pages.rules), against the Firestore emulator, with the web SDK writing as the extension's
// client writes: an old app version's tap (set({visits: increment(1)}, {merge: true}) on its own shard) is
// accepted, also after the fold removed its shard; other amounts, other fields, listing shards, writing
// the mirrored field and any write under a page that does not exist (no counter from nowhere) are refused;
// the variant for old app versions that sign their users in refuses signed-out writes too; and the
// counters' own guarantees still hold in the merged file.
import { assertFails, assertSucceeds } from "@firebase/rules-unit-testing";
import { collection, deleteDoc, doc, getDoc, getDocs, increment, setDoc, updateDoc, type Firestore } from "firebase/firestore";
import { describeMergedFile, exampleRules } from "../../test/helpers/example-rules";

const { rules: RULES, env: testEnv } = exampleRules("extension-pages.rules");
/** The variant docs/security.md gives for old app versions that sign their users in: one line changed. */
const PAGE_EXISTS = "return exists(/databases/$(database)/documents/pages/$(pageId));";
const SIGNED_IN = (rules: string): string => rules.replace(PAGE_EXISTS, "return request.auth != null && exists(/databases/$(database)/documents/pages/$(pageId));");
const { env: signedInEnv } = exampleRules("extension-pages.rules", SIGNED_IN);

beforeEach(async () => {
  for (const env of [testEnv(), signedInEnv()]) {
    await env.clearFirestore();
    await env.withSecurityRulesDisabled(async (context) => {
      await setDoc(doc(context.firestore() as unknown as Firestore, "pages/home"), { title: "Home", visits: 120 });
    });
  }
});

/** An old app version on one device, signed in or not (the extension's client needs no user). */
const device = () => testEnv().unauthenticatedContext().firestore() as unknown as Firestore;
const shard = (db: Firestore, id = "uuid-1", page = "home") => doc(db, `pages/${page}/_counter_shards_`, id);
/** The extension client's incrementBy(n). */
const incrementBy = (db: Firestore, n: number, id?: string, page?: string) => setDoc(shard(db, id, page), { visits: increment(n) }, { merge: true });

describe("old app versions of the firestore-counter extension", () => {
  it("tap: the first write creates the device's shard with 1, each later one adds 1", async () => {
    const db = device();
    await assertSucceeds(incrementBy(db, 1));
    await assertSucceeds(incrementBy(db, 1));
    expect((await getDoc(shard(db))).get("visits")).toBe(2);
  });

  it("tap again after the fold removed the shard", async () => {
    const db = device();
    await assertSucceeds(incrementBy(db, 1));
    await testEnv().withSecurityRulesDisabled((context) => deleteDoc(shard(context.firestore() as unknown as Firestore)));
    await assertSucceeds(incrementBy(db, 1));
  });

  it("refuses any other amount, on a new shard or an existing one, and any other field", async () => {
    const db = device();
    await assertFails(incrementBy(db, 5));
    await assertFails(setDoc(shard(db), { visits: 1_000_000 }));
    await assertSucceeds(incrementBy(db, 1));
    await assertFails(incrementBy(db, 2));
    await assertFails(incrementBy(db, -1));
    await assertFails(setDoc(shard(db), { visits: increment(1), likes: increment(1) }, { merge: true }));
    await assertFails(updateDoc(shard(db), { visits: 0 }));
  });

  it("lets the client read its shard and the workers' partials, not list them", async () => {
    const db = device();
    await assertSucceeds(getDoc(shard(db)));
    await assertSucceeds(getDoc(shard(db, "\t\t\t\tu")));
    await assertFails(getDocs(collection(db, "pages/home/_counter_shards_")));
  });

  it("lets anyone read the page and its mirrored count, and no client write it", async () => {
    const db = device();
    expect((await assertSucceeds(getDoc(doc(db, "pages/home")))).get("visits")).toBe(120);
    await assertFails(updateDoc(doc(db, "pages/home"), { visits: 1_000_000 }));
    const user = testEnv().authenticatedContext("alice").firestore() as unknown as Firestore;
    await assertFails(setDoc(doc(user, "pages/home"), { visits: increment(1) }, { merge: true }));
  });
});

describe("no counter from nowhere", () => {
  it("refuses a signed-out write under a page that does not exist, and a signed-in one", async () => {
    await assertFails(incrementBy(device(), 1, "uuid-1", "nosuch"));
    const user = testEnv().authenticatedContext("alice").firestore() as unknown as Firestore;
    await assertFails(incrementBy(user, 1, "uuid-2", "nosuch"));
    // Nothing was written: the fold has nothing to create a counter from.
    await testEnv().withSecurityRulesDisabled(async (context) => {
      expect((await getDocs(collection(context.firestore() as unknown as Firestore, "pages/nosuch/_counter_shards_"))).size).toBe(0);
    });
  });

  it("the variant for apps whose old versions sign their users in: a signed-in tap counts, a signed-out one is refused", async () => {
    expect(RULES).toContain(PAGE_EXISTS); // the line docs/security.md tells such apps to change
    const user = signedInEnv().authenticatedContext("alice").firestore() as unknown as Firestore;
    await assertSucceeds(incrementBy(user, 1));
    await assertSucceeds(incrementBy(user, 1));
    await assertFails(incrementBy(signedInEnv().unauthenticatedContext().firestore() as unknown as Firestore, 1, "uuid-2"));
    await assertFails(incrementBy(user, 1, "uuid-3", "nosuch"));
  });
});

describeMergedFile(RULES, "security.md", "pages moving from the firestore-counter extension");
