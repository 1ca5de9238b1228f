// An app with AUTO_CREATE and MIRRORS for likes and views, end to end: the params set in
// functions/.env.local and the functions reloaded (test/helpers/local-params.ts), users of the Firebase JS SDK
// liking and viewing posts nobody created counters for, through the real callables, the real rollup and
// its mirrors; the app's screens read the posts' mirrored fields (a feed, and "trending" by this week's
// views) and watch a post with the client package ({ autoCreated: true }). Also what happens when the
// admin entry's environment lacks a param the counters codebase sets: refused before it writes, since the
// counters codebase published the params it runs with (the preflight's "admin settings" refuses such a
// deploy too).
import { getApps } from "firebase-admin/app";
import { FunctionsError } from "firebase/functions";
import { createCounterClient, type CounterClient } from "../../client/src";
import * as adminEntry from "../src/admin";
import { isTransportFailure, signedInClient, untilAnswered, withConcurrency, type Client } from "../../test/helpers/client";
import { e2eAdminDb, waitFor } from "../../test/helpers/admin";
import { pathsUnderIn, shardSumIn } from "../../test/helpers/documents";
import { localParams, type LocalParams } from "../../test/helpers/local-params";

jest.setTimeout(300_000);

const RELOAD_MS = 120_000;
const SETTLE_MS = 20_000;
const POSTS = "e2eautoposts";
const PARAMS = {
  UNIQUE_COUNTERS: "e2ea-{id}-likes",
  WINDOWED_COUNTERS: "e2ea-{id}-views",
  AUTO_CREATE: `e2ea-{id}-likes=${POSTS}/{id},e2ea-{id}-views=${POSTS}/{id}`,
  MIRRORS: `e2ea-{id}-likes=${POSTS}/{id}:likeCount,e2ea-{id}-views=${POSTS}/{id}:views,e2ea-{id}-views=${POSTS}/{id}:views7d@last7Days`,
};
const db = e2eAdminDb();

let users: Client[];
let params: LocalParams;
let serial = 0;
const postId = () => `p${Date.now()}x${serial++}`;

async function post(id: string): Promise<void> {
  await db.doc(`${POSTS}/${id}`).set({ title: `post ${id}` });
}

const postData = async (id: string) => (await db.doc(`${POSTS}/${id}`).get()).data();

/** Views a fresh post until the functions answer with the new params (the view creates its counter) or without them (not-found). */
async function untilReloaded(autoCreating: boolean): Promise<void> {
  const started = Date.now();
  for (;;) {
    const id = postId();
    await post(id);
    const outcome = await users[0]!.call("incrementCounter", { counterId: `e2ea-${id}-views` }).catch((e: unknown) => e);
    // A reset by the reload itself (isTransportFailure) says nothing: try again with a fresh post.
    if (!isTransportFailure(outcome)) {
      const refused = outcome instanceof FunctionsError && outcome.code === "functions/not-found";
      if (outcome instanceof Error && !refused) throw outcome;
      if (refused !== autoCreating) return;
    }
    if (Date.now() - started > RELOAD_MS) throw new Error(`the functions did not reload with AUTO_CREATE ${autoCreating ? "set" : "unset"}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  users = await Promise.all(Array.from({ length: 4 }, () => signedInClient()));
  params = localParams(Object.keys(PARAMS));
  params.set(PARAMS);
  await untilReloaded(true);
  // A worker for each callable before the calls at once (the functions emulator boots one per concurrent request: fact 6).
  const id = postId();
  await post(id);
  await untilAnswered(() => users[0]!.call("setMember", { counterId: `e2ea-${id}-likes`, member: true }));
});

afterAll(async () => {
  try {
    params.restore();
    await untilReloaded(false); // leave the emulator serving the committed params for the tests that run next
  } finally {
    await Promise.all(users.map((u) => u.close()));
  }
});

describe("posts whose users never created counters", () => {
  it("show exact likes, views and this week's views on the posts, and rank by this week's views", async () => {
    const [a, b, c] = [postId(), postId(), postId()];
    await Promise.all([post(a), post(b), post(c)]);
    // First likes of post a from three users at once, and one of b; views from everyone, all at once.
    const likes = [...users.slice(0, 3).map((u) => [u, a] as const), [users[3]!, b] as const];
    const views = [...users.flatMap((u) => [[u, a] as const]), [users[0]!, a] as const, [users[1]!, b] as const, [users[2]!, b] as const];
    let key = 0;
    // Bounded concurrency: the functions emulator boots a worker per concurrent request (fact 6).
    await withConcurrency(4, [
      ...likes.map(([u, id]) => () => untilAnswered(() => u.call("setMember", { counterId: `e2ea-${id}-likes`, member: true }))),
      ...views.map(([u, id]) => {
        const requestId = `view-${id}-${key++}`;
        return () => untilAnswered(() => u.call("incrementCounter", { counterId: `e2ea-${id}-views`, requestId }));
      }),
    ]);
    const expected = {
      [a]: { title: `post ${a}`, likeCount: 3, views: 5, views7d: 5 },
      [b]: { title: `post ${b}`, likeCount: 1, views: 2, views7d: 2 },
      [c]: { title: `post ${c}` },
    };
    for (const [id, data] of Object.entries(expected)) {
      const settled = await waitFor(async () => JSON.stringify(await postData(id)), JSON.stringify(data), SETTLE_MS);
      expect(JSON.parse(settled.value) as unknown).toEqual(data);
    }
    // The counters behind them: created once each, with the params' shapes, holding every call.
    expect((await db.doc(`counters/e2ea-${a}-likes`).get()).data()).toMatchObject({ unique: true, total: 3 });
    expect((await db.doc(`counters/e2ea-${a}-views`).get()).data()).toMatchObject({ windowed: true, total: 5, windows: { today: 5, last7Days: 5 } });
    expect(await shardSumIn(db, `e2ea-${a}-likes`)).toBe(3);
    expect(await pathsUnderIn(db, `e2ea-${c}-likes`)).toEqual([]);
    // Trending: the app's own query on the mirrored field.
    const trending = await db.collection(POSTS).where("title", "in", [`post ${a}`, `post ${b}`, `post ${c}`]).orderBy("views7d", "desc").get();
    expect(trending.docs.map((d) => d.id)).toEqual([a, b]);
  });

  it("shows an app's watch of a post nobody liked yet as 0, its first like at once, and the exact count after", async () => {
    const id = postId();
    await post(id);
    const counterId = `e2ea-${id}-likes`;
    const client: CounterClient = createCounterClient({ functions: users[0]!.functions, firestore: users[0]!.firestore });
    const shown: (number | null)[] = [];
    const errors: Error[] = [];
    const stop = client.watchMember(counterId, users[0]!.user.uid, (value) => shown.push(value), (e) => errors.push(e), { autoCreated: true });
    await waitFor(() => Promise.resolve(shown.length > 0), true, SETTLE_MS);
    expect(shown).toEqual([0]);
    await client.setMember(counterId, true);
    await users[1]!.call("setMember", { counterId, member: true });
    expect((await waitFor(() => Promise.resolve(shown[shown.length - 1]), 2, SETTLE_MS)).value).toBe(2);
    expect(shown.filter((v) => v !== 0 && v !== 1 && v !== 2)).toEqual([]);
    expect(shown.slice(shown.indexOf(1))).not.toContain(0);
    expect(errors).toEqual([]);
    stop();
    client.dispose();
  });

  it("refuses a like of a post that does not exist with not-found, and creates nothing", async () => {
    const id = postId();
    const error = await users[0]!.call("setMember", { counterId: `e2ea-${id}-likes`, member: true }).catch((e: unknown) => e);
    expect((error as FunctionsError).code).toBe("functions/not-found");
    expect((error as FunctionsError).message).toContain(`AUTO_CREATE creates it only while ${POSTS}/${id} exists`);
    expect(await pathsUnderIn(db, `e2ea-${id}-likes`)).toEqual([]);
    expect(await postData(id)).toBeUndefined();
  });
});

describe("the admin entry in a process whose environment lacks UNIQUE_COUNTERS", () => {
  it("is refused before it writes, naming UNIQUE_COUNTERS and where each value comes from: no likes counter made plain", async () => {
    // This test process loaded functions/.env (UNIQUE_COUNTERS empty), not the functions' .env.local; the
    // functions emulator's callables published the values they run with (the tests above called them).
    expect(process.env.UNIQUE_COUNTERS ?? "").toBe("");
    const app = getApps().find((x) => x.name === "e2e-admin")!;
    const id = postId();
    await post(id);
    const error = await adminEntry.createCounter(`e2ea-${id}-likes`, { app }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(adminEntry.CounterError);
    expect((error as adminEntry.CounterError).code).toBe("failed-precondition");
    expect((error as adminEntry.CounterError).message).toContain(`UNIQUE_COUNTERS is "" in this process's environment but "${PARAMS.UNIQUE_COUNTERS}" in the counters codebase as deployed`);
    expect(await pathsUnderIn(db, `e2ea-${id}-likes`)).toEqual([]);
    // With the counters codebase's values, the same call creates the likes counter unique.
    const saved = Object.fromEntries(Object.keys(PARAMS).map((name) => [name, process.env[name]]));
    Object.assign(process.env, PARAMS);
    try {
      await expect(adminEntry.createCounter(`e2ea-${id}-likes`, { app })).resolves.toMatchObject({ unique: true });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
