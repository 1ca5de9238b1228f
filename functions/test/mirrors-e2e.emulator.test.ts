// MIRRORS through the JS SDK, the functions emulator and the real rollup trigger: the param is set in
// functions/.env.local and the functions reloaded (touching lib/index.js makes the emulator read the .env
// files again: test/helpers/local-params.ts), then restored. The target documents stand for an app's posts.
import { isTransportFailure, signedInClient, withConcurrency, type Client } from "../../test/helpers/client";
import { e2eAdminDb, waitFor } from "../../test/helpers/admin";
import { localParam, type LocalParam } from "../../test/helpers/local-params";

jest.setTimeout(300_000);

const RELOAD_MS = 120_000;
const SETTLE_MS = 15_000;
const POSTS = "e2eposts";
const MIRRORS = `e2e-mirror-{id}-likes=${POSTS}/{id}:likeCount,e2e-mirror-{id}-views=${POSTS}/{id}:stats.views`;
const db = e2eAdminDb();

let user: Client;
let admin: Client;
let mirrorsParam: LocalParam;
let serial = 0;

const postId = () => `p${Date.now()}x${serial++}`;

const likeCount = async (id: string) => (await db.doc(`${POSTS}/${id}`).get()).get("likeCount") as unknown;
const total = async (counterId: string) => (await db.doc(`counters/${counterId}`).get()).get("total") as unknown;

/**
 * Creates counters for a fresh post until createCounter writes the mirror (0 on the existing post): the
 * functions then run with `mirrored` MIRRORS. Without mirrors the field stays absent.
 */
async function untilReloaded(mirrored: boolean): Promise<void> {
  const started = Date.now();
  for (;;) {
    const id = postId();
    await db.doc(`${POSTS}/${id}`).set({ title: "probe" });
    const outcome = await user.call("createCounter", { counterId: `e2e-mirror-${id}-likes`, numShards: 1 }).catch((e: unknown) => e);
    if (outcome instanceof Error && !isTransportFailure(outcome)) throw outcome;
    // A reset by the reload itself (isTransportFailure) says nothing: try again with a fresh post.
    if (!(outcome instanceof Error) && (await likeCount(id)) === (mirrored ? 0 : undefined)) return;
    if (Date.now() - started > RELOAD_MS) throw new Error(`the functions did not reload with MIRRORS ${mirrored ? "set" : "unset"}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Waits until `read()` gives `expected` and fails the test, showing the last value, if it never does. */
async function settled(read: () => Promise<unknown>, expected: unknown): Promise<void> {
  expect((await waitFor(read, expected, SETTLE_MS)).value).toBe(expected);
}

beforeAll(async () => {
  user = await signedInClient();
  admin = await signedInClient({ admin: true });
  mirrorsParam = localParam("MIRRORS");
  mirrorsParam.set(MIRRORS);
  await untilReloaded(true);
});

afterAll(async () => {
  try {
    mirrorsParam.restore();
    await untilReloaded(false); // leave the emulator serving the committed params for the tests that run next
  } finally {
    await user?.close();
    await admin?.close();
  }
});

describe(`MIRRORS=${MIRRORS}`, () => {
  it("puts a counter's total on the post and follows it through a burst, leaving the post's other fields alone", async () => {
    const id = postId();
    await db.doc(`${POSTS}/${id}`).set({ title: "hello", author: "u1" });
    const counterId = `e2e-mirror-${id}-likes`;
    await user.call("createCounter", { counterId, numShards: 4 });
    await user.call("incrementCounter", { counterId });
    await settled(() => likeCount(id), 1);
    await withConcurrency(4, Array.from({ length: 20 }, (_, i) => () => user.call("incrementCounter", { counterId, delta: i + 1 })));
    await settled(() => total(counterId), 211);
    await settled(() => likeCount(id), 211);
    expect((await db.doc(`${POSTS}/${id}`).get()).data()).toEqual({ title: "hello", author: "u1", likeCount: 211 });
  });

  it("writes a nested field", async () => {
    const id = postId();
    await db.doc(`${POSTS}/${id}`).set({ stats: { shares: 2 } });
    const counterId = `e2e-mirror-${id}-views`;
    await user.call("createCounter", { counterId, numShards: 2 });
    await user.call("incrementCounter", { counterId, delta: 5 });
    await settled(async () => (await db.doc(`${POSTS}/${id}`).get()).get("stats.views") as unknown, 5);
    expect((await db.doc(`${POSTS}/${id}`).get()).get("stats")).toEqual({ shares: 2, views: 5 });
  });

  it("never creates a missing post, while the counter's own total is committed", async () => {
    const id = postId();
    const counterId = `e2e-mirror-${id}-likes`;
    await user.call("createCounter", { counterId, numShards: 2 });
    await user.call("incrementCounter", { counterId, delta: 3 });
    await settled(() => total(counterId), 3);
    expect((await db.doc(`${POSTS}/${id}`).get()).exists).toBe(false);
  });

  it("writes 0 on reset", async () => {
    const id = postId();
    await db.doc(`${POSTS}/${id}`).set({ title: "r" });
    const counterId = `e2e-mirror-${id}-likes`;
    await user.call("createCounter", { counterId, numShards: 2 });
    await user.call("incrementCounter", { counterId, delta: 9 });
    await settled(() => likeCount(id), 9);
    await admin.call("resetCounter", { counterId });
    expect(await likeCount(id)).toBe(0);
    expect(await total(counterId)).toBe(0);
  });

  it("mirrors a unique counter: likes by several users, one unlike, a double tap", async () => {
    const id = postId();
    await db.doc(`${POSTS}/${id}`).set({ title: "liked" });
    const counterId = `e2e-mirror-${id}-likes`;
    await user.call("createCounter", { counterId, numShards: 3, unique: true });
    const users = await Promise.all([0, 1, 2].map(() => signedInClient()));
    try {
      await Promise.all(users.map((u) => u.call("setMember", { counterId, member: true })));
      await users[0]!.call("setMember", { counterId, member: true }); // a double tap changes nothing
      await users[1]!.call("setMember", { counterId, member: false });
      await settled(() => likeCount(id), 2);
      expect(await total(counterId)).toBe(2);
      expect((await db.collection(`counters/${counterId}/members`).count().get()).data().count).toBe(2);
    } finally {
      await Promise.all(users.map((u) => u.close()));
    }
  });
});
