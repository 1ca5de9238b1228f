// Counters that go with their document: an app's onDocumentDeleted trigger (examples/functions/
// delete-post-counters.ts, shown in docs/admin.md) deletes a post's counters through the admin entry, wrapped
// and against the real Firestore emulator: the counters and everything under them go, a like or a view of
// the deleted post is then not-found (AUTO_CREATE makes nothing for it: the post is gone), a second
// delivery of the same event and a post whose counters were never made are nothing to do, the mirrors on
// the deleted post are not recreated (nor warned of), and an error other than not-found is thrown for the
// platform to retry.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DocumentSnapshot } from "firebase-admin/firestore";
import { logger } from "../../test/helpers/logger";
import { deletePostCounters } from "../../examples/functions/delete-post-counters";
import { USER, call, db, documentsUnder, functions, httpsErrorOf, shardSum, uniqueId, withParam } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { fft } from "../../test/helpers/wrapped";

beforeAll(requireEmulators);
jest.setTimeout(120_000);

const REPO = join(__dirname, "..", "..");

withParam("UNIQUE_COUNTERS", "post-{id}-likes");
withParam("WINDOWED_COUNTERS", "post-{id}-views");
withParam("AUTO_CREATE", "post-{id}-likes=posts/{id},post-{id}-views=posts/{id}");
withParam("MIRRORS", "post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:views");

/** Deletes the post, as the app does, and returns the deleted snapshot its trigger event carries. */
async function deletePost(postId: string): Promise<DocumentSnapshot> {
  const ref = db.doc(`posts/${postId}`);
  const before = await ref.get();
  await ref.delete();
  return before;
}

/** The post's deletion event, delivered to the wrapped trigger as the platform would (again for a retry). */
function deliver(snapshot: DocumentSnapshot, postId: string): Promise<unknown> {
  const wrapped = fft.wrap(deletePostCounters) as unknown as (event: Record<string, unknown>) => Promise<unknown>;
  return wrapped({ data: snapshot, params: { postId } });
}

/** A post with both counters, a like and two views (through the callables, as its users make them). */
async function likedPost(): Promise<string> {
  const postId = uniqueId("dp");
  await db.doc(`posts/${postId}`).set({ title: "t" });
  await call(functions.setMember, { counterId: `post-${postId}-likes`, member: true }, USER);
  await call(functions.incrementCounter, { counterId: `post-${postId}-views` }, USER);
  await call(functions.incrementCounter, { counterId: `post-${postId}-views` }, USER);
  expect(await shardSum(`post-${postId}-views`)).toBe(2);
  return postId;
}

describe("deletePostCounters, an app's trigger that deletes a post's counters with the post", () => {
  it("deletes both counters and everything under them (shards, members, records), with no warning of the post's mirrors being gone", async () => {
    const postId = await likedPost();
    const snapshot = await deletePost(postId);
    const warnings: string[] = [];
    const warn = jest.spyOn(logger, "warn").mockImplementation((...args: unknown[]) => void warnings.push(JSON.stringify(args)));
    try {
      await deliver(snapshot, postId);
    } finally {
      warn.mockRestore();
    }
    expect(await documentsUnder(`post-${postId}-likes`)).toEqual([]);
    expect(await documentsUnder(`post-${postId}-views`)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("after it, a like or a view of the deleted post is not-found, and creates nothing", async () => {
    const postId = await likedPost();
    await deliver(await deletePost(postId), postId);
    for (const [fn, data] of [
      [functions.setMember, { counterId: `post-${postId}-likes`, member: true }],
      [functions.incrementCounter, { counterId: `post-${postId}-views` }],
    ] as const) {
      expect((await httpsErrorOf(call(fn, data, { uid: "user-2" }))).code).toBe("not-found");
    }
    expect(await documentsUnder(`post-${postId}-likes`)).toEqual([]);
    expect(await documentsUnder(`post-${postId}-views`)).toEqual([]);
    expect((await db.doc(`posts/${postId}`).get()).exists).toBe(false);
  });

  it("takes a second delivery of the same event (a retry) as nothing to do", async () => {
    const postId = await likedPost();
    const snapshot = await deletePost(postId);
    await deliver(snapshot, postId);
    await expect(deliver(snapshot, postId)).resolves.toBeUndefined();
    expect(await documentsUnder(`post-${postId}-views`)).toEqual([]);
  });

  it("takes a post whose counters nobody made (AUTO_CREATE waits for a first like) as nothing to do", async () => {
    const postId = uniqueId("dp");
    await db.doc(`posts/${postId}`).set({ title: "t" });
    await expect(deliver(await deletePost(postId), postId)).resolves.toBeUndefined();
    expect(await documentsUnder(`post-${postId}-likes`)).toEqual([]);
  });

  it("throws any other error (here a MIRRORS value the admin entry cannot read), for the platform to retry (retry: true); the retry deletes them", async () => {
    const postId = await likedPost();
    const snapshot = await deletePost(postId);
    process.env.MIRRORS = "post-{id}-likes=posts/{id}";
    await expect(deliver(snapshot, postId)).rejects.toThrow(/MIRRORS/);
    expect(await shardSum(`post-${postId}-views`)).toBe(2);
    process.env.MIRRORS = "post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:views";
    await deliver(snapshot, postId);
    expect(await documentsUnder(`post-${postId}-views`)).toEqual([]);
  });

  it("is the function docs/admin.md shows, as written", () => {
    const doc = readFileSync(join(REPO, "docs", "admin.md"), "utf8");
    const file = readFileSync(join(REPO, "examples", "functions", "delete-post-counters.ts"), "utf8");
    expect(doc).toContain("```ts\n" + file.slice(file.indexOf("import { onDocumentDeleted")) + "```");
  });
});
