// AUTO_CREATE with conditions on its document (docs/admin.md, "Counters that create themselves"), wrapped,
// against the real Firestore emulator: `ac-{id}-likes=acposts/{id}[published==true]` creates a post's likes
// counter only while the post exists and is published. A draft post (or one whose field is missing, or holds
// the text "true") answers not-found with the very message of a post that does not exist, and nothing is
// written: no counter, no mirror field on the post (which would fire the app's own triggers on a draft). A
// post unpublished between the call's look and the creation creates nothing; a counter once created stays.
import { HttpsError } from "firebase-functions/v2/https";
import { call, db, documentsUnder, functions, httpsErrorOf, shardSum, uniqueId, withParam, type Caller } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { writeMembership } from "../src/counters/members";

beforeAll(requireEmulators);
jest.setTimeout(120_000);

withParam("AUTO_CREATE", "ac-{id}-likes=acposts/{id}[published==true],ac-{id}-views=acposts/{id}[published==true][meta.kind==post]");
withParam("UNIQUE_COUNTERS", "ac-{id}-likes");
withParam("MIRRORS", "ac-{id}-likes=acposts/{id}:likeCount,ac-{id}-views=acposts/{id}:views");

const user = (n: number): Caller => ({ uid: `acond-${n}` });
const like = (counterId: string, caller: Caller = user(1)) => call<{ changed: boolean }>(functions.setMember, { counterId, member: true }, caller);
const view = (counterId: string) => call<{ applied: boolean }>(functions.incrementCounter, { counterId });

async function postData(id: string): Promise<Record<string, unknown> | undefined> {
  return (await db.doc(`acposts/${id}`).get()).data();
}

describe("AUTO_CREATE with a condition on the post", () => {
  it("creates the counter of a published post on its first like, and counts it", async () => {
    const id = uniqueId("p");
    await db.doc(`acposts/${id}`).set({ title: "live", published: true });
    await expect(like(`ac-${id}-likes`)).resolves.toMatchObject({ changed: true });
    expect(await shardSum(`ac-${id}-likes`)).toBe(1);
    expect(await postData(id)).toEqual({ title: "live", published: true, likeCount: 0 });
  });

  it.each([
    ["a draft", { title: "draft", published: false }],
    ["a post without the field", { title: "old" }],
    ["a post whose field holds the text \"true\"", { title: "text", published: "true" }],
  ])("answers %s as it answers a post that does not exist: not-found, the same message, nothing written", async (_name, data) => {
    const id = uniqueId("p");
    const missing = uniqueId("p");
    await db.doc(`acposts/${id}`).set(data);
    const hidden = await httpsErrorOf(like(`ac-${id}-likes`));
    const absent = await httpsErrorOf(like(`ac-${missing}-likes`));
    expect(hidden.code).toBe("not-found");
    expect(hidden.message).toBe(`counter "ac-${id}-likes" does not exist, and AUTO_CREATE creates it only while acposts/${id} exists with [published==true]`);
    expect(hidden.message.replaceAll(id, "X")).toBe(absent.message.replaceAll(missing, "X"));
    expect(await documentsUnder(`ac-${id}-likes`)).toEqual([]);
    // No mirror written into the draft: the app's own triggers on it do not fire.
    expect(await postData(id)).toEqual(data);
  });

  it("holds every condition of a rule, on dotted fields", async () => {
    const id = uniqueId("p");
    await db.doc(`acposts/${id}`).set({ published: true, meta: { kind: "page" } });
    expect((await httpsErrorOf(view(`ac-${id}-views`))).code).toBe("not-found");
    expect(await documentsUnder(`ac-${id}-views`)).toEqual([]);
    await db.doc(`acposts/${id}`).update({ "meta.kind": "post" });
    await expect(view(`ac-${id}-views`)).resolves.toMatchObject({ applied: true });
    expect(await shardSum(`ac-${id}-views`)).toBe(1);
  });

  it("creates nothing when the post is unpublished between the call's look at it and the creation", async () => {
    const id = uniqueId("p");
    const counterId = `ac-${id}-likes`;
    await db.doc(`acposts/${id}`).set({ published: true });
    const autoCreate = () => ({
      document: `acposts/${id}`,
      conditions: [{ source: "[published==true]", field: "published", value: true }],
      counter: () => ({ numShards: 1, unique: true, windowed: false, mirrors: [{ path: `acposts/${id}`, field: "likeCount", value: "total" as const }] }),
      beforeCreate: async () => {
        await db.doc(`acposts/${id}`).update({ published: false });
      },
    });
    const error = await writeMembership(db, counterId, "u1", true, { autoCreate }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "not-found" });
    expect(await documentsUnder(counterId)).toEqual([]);
    expect(await postData(id)).toEqual({ published: false });
  });

  it("keeps a counter once created: later calls count while the post is a draft again", async () => {
    const id = uniqueId("p");
    await db.doc(`acposts/${id}`).set({ published: true });
    await like(`ac-${id}-likes`, user(1));
    await db.doc(`acposts/${id}`).update({ published: false });
    await expect(like(`ac-${id}-likes`, user(2))).resolves.toMatchObject({ changed: true });
    expect(await shardSum(`ac-${id}-likes`)).toBe(2);
  });

  it("refuses nothing else differently: an id no rule names is not-found as before", async () => {
    const id = uniqueId("p");
    await db.doc(`acposts/${id}`).set({ published: true });
    const error = await like(`ac-${id}-shares`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpsError);
    expect((error as HttpsError).code).toBe("not-found");
  });
});
