// The admin entry (functions/src/admin.ts, `@firestore-exact-counter/functions/admin`) against the real
// Firestore emulator: an app's publishPost function (examples/functions/publish-post.ts) creating its post's
// counters in its own code; each operation answering as its callable does, with the same refusals and
// codes; the param rules read from the process's environment; a firebase-admin app passed in; and what
// importing it does to an app (nothing).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getApps, initializeApp } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import * as admin from "../src/admin";
import { publishPost } from "../../examples/functions/publish-post";
import { ADMIN, USER, call, db, documentsUnder, functions, httpsErrorOf, readCounter, shardSum, uniqueId, withParam } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { counterRef, membersRef } from "../src/model/paths";

beforeAll(requireEmulators);
jest.setTimeout(120_000);

const REPO = join(__dirname, "..", "..");

/** The CounterError an admin call was refused with: its code and message. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(admin.CounterError);
  const { code, message } = error as admin.CounterError;
  return { code, message };
}

describe("publishPost, an app's function that creates its post's counters with the admin entry", () => {
  withParam("UNIQUE_COUNTERS", "post-{id}-likes");
  withParam("WINDOWED_COUNTERS", "post-{id}-views");
  withParam("MIRRORS", "post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:views,post-{id}-views=posts/{id}:views7d@last7Days");

  it("writes the post and both counters: likes unique, views windowed, the mirrors at 0 on the post", async () => {
    const { postId } = await call<{ postId: string }>(publishPost, { title: "Hello" }, USER);
    const post = (await db.doc(`posts/${postId}`).get()).data();
    expect(post).toMatchObject({ authorId: USER.uid, title: "Hello", likeCount: 0, views: 0, views7d: 0 });
    expect((await counterRef(db, `post-${postId}-likes`).get()).data()).toMatchObject({ numShards: 1, total: 0, unique: true, windowed: false });
    expect((await counterRef(db, `post-${postId}-views`).get()).data()).toMatchObject({ numShards: 1, total: 0, unique: false, windowed: true });
    // The counters take the app's users' likes and views at once (through the callables).
    await expect(call(functions.setMember, { counterId: `post-${postId}-likes`, member: true }, USER)).resolves.toMatchObject({ changed: true });
    await expect(call(functions.incrementCounter, { counterId: `post-${postId}-views` }, USER)).resolves.toMatchObject({ applied: true });
  });

  it("is the function docs/admin.md shows, as written", () => {
    const doc = readFileSync(join(REPO, "docs", "admin.md"), "utf8");
    const file = readFileSync(join(REPO, "examples", "functions", "publish-post.ts"), "utf8");
    expect(doc).toContain("```ts\n" + file.slice(file.indexOf("import { FieldValue")) + "```");
  });

  it("refuses a signed-out caller and a bad title, and then writes nothing", async () => {
    expect((await httpsErrorOf(call(publishPost, { title: "x" }, null))).code).toBe("unauthenticated");
    expect((await httpsErrorOf(call(publishPost, { title: 3 }, USER))).code).toBe("invalid-argument");
  });
});

describe("each operation answers as its callable does", () => {
  it("createCounter, with an id or without, and numShards, unique, windowed", async () => {
    const counterId = uniqueId("adm");
    await expect(admin.createCounter(counterId, { numShards: 3 })).resolves.toEqual({ counterId, numShards: 3, unique: false, windowed: false });
    const auto = await admin.createCounter(undefined, { unique: true, windowed: true });
    expect(auto).toEqual({ counterId: expect.stringMatching(/^[A-Za-z0-9]{20}$/) as unknown, numShards: 1, unique: true, windowed: true });
    expect(await readCounter(auto.counterId)).toMatchObject({ exists: true, numShards: 1, total: 0 });
  });

  it("incrementCounter, with a requestId applied once", async () => {
    const counterId = uniqueId("adm");
    await admin.createCounter(counterId, { numShards: 2 });
    const first = await admin.incrementCounter(counterId, 5, { requestId: "k1" });
    expect(first).toEqual({ counterId, shard: expect.any(Number) as unknown, applied: true, writeTime: { seconds: expect.any(Number) as unknown, nanoseconds: expect.any(Number) as unknown } });
    await expect(admin.incrementCounter(counterId, 5, { requestId: "k1" })).resolves.toEqual({ ...first, applied: false });
    await expect(admin.incrementCounter(counterId)).resolves.toMatchObject({ applied: true });
    expect(await shardSum(counterId)).toBe(6);
  });

  it("setMember for a uid, then reshard, reset (plain) and delete", async () => {
    const likes = uniqueId("adm");
    await admin.createCounter(likes, { unique: true });
    await expect(admin.setMember(likes, "u1", true)).resolves.toMatchObject({ counterId: likes, member: true, changed: true });
    await expect(admin.setMember(likes, "u1", true)).resolves.toEqual({ counterId: likes, member: true, changed: false, writeTime: null });
    expect((await membersRef(db, likes).get()).docs.map((d) => d.id)).toEqual(["u1"]);
    await expect(admin.reshardCounter(likes, 4)).resolves.toEqual({ counterId: likes, numShards: 4 });
    expect(await shardSum(likes)).toBe(1);

    const views = uniqueId("adm");
    await admin.createCounter(views);
    await admin.incrementCounter(views, 7);
    await expect(admin.resetCounter(views)).resolves.toEqual({ counterId: views });
    expect(await shardSum(views)).toBe(0);
    await expect(admin.deleteCounter(views)).resolves.toEqual({ counterId: views });
    expect(await documentsUnder(views)).toEqual([]);
  });
});

describe("its refusals carry the callable's code and message, and write nothing", () => {
  it("the same invalid-argument as the callable, naming the field", async () => {
    const counterId = uniqueId("adm");
    const viaAdmin = await refusal(admin.createCounter(counterId, { numShards: 0 }));
    const viaCallable = await httpsErrorOf(call(functions.createCounter, { counterId, numShards: 0 }));
    expect(viaAdmin).toEqual({ code: "invalid-argument", message: viaCallable.message });
    expect(viaAdmin.message).toBe("numShards must be an integer from 1 to 200");
    expect(await refusal(admin.incrementCounter(counterId, 1.5))).toEqual({ code: "invalid-argument", message: "delta must be a non-zero integer from -1000 to 1000" });
    expect(await refusal(admin.incrementCounter("a/b"))).toEqual({ code: "invalid-argument", message: "counterId must be 1-128 characters of A-Z, a-z, 0-9, _ or -" });
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("its own options checked the same way: an unknown option, a bad app, options that are not an object", async () => {
    const counterId = uniqueId("adm");
    expect(await refusal(admin.createCounter(counterId, { numshards: 3 } as never))).toEqual({
      code: "invalid-argument",
      message: 'unknown option "numshards" (did you mean "numShards"?): the options are app, numShards, unique, windowed',
    });
    expect(await refusal(admin.incrementCounter(counterId, 1, { requestID: "r1" } as never))).toEqual({
      code: "invalid-argument",
      message: 'unknown option "requestID" (did you mean "requestId"?): the options are app, requestId',
    });
    expect(await refusal(admin.createCounter(counterId, { color: "red" } as never))).toEqual({
      code: "invalid-argument",
      message: 'unknown option "color": the options are app, numShards, unique, windowed',
    });
    expect((await refusal(admin.incrementCounter(counterId, 1, { app: {} as never }))).message).toBe("options.app must be a firebase-admin App (what initializeApp() returns)");
    expect((await refusal(admin.deleteCounter(counterId, 3 as never))).message).toBe("options must be an object");
    expect((await refusal(admin.setMember(counterId, "", true))).code).toBe("invalid-argument");
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("not-found, already-exists and failed-precondition, with the callables' messages", async () => {
    const missing = uniqueId("adm");
    expect(await refusal(admin.incrementCounter(missing))).toEqual({ code: "not-found", message: `counter "${missing}" does not exist` });
    expect((await refusal(admin.resetCounter(missing))).code).toBe("not-found");
    const plain = uniqueId("adm");
    await admin.createCounter(plain);
    expect(await refusal(admin.createCounter(plain))).toEqual({ code: "already-exists", message: `counter "${plain}" already exists` });
    const viaAdmin = await refusal(admin.setMember(plain, "u1", true));
    expect(viaAdmin.code).toBe("failed-precondition");
    expect(viaAdmin.message).toBe((await httpsErrorOf(call(functions.setMember, { counterId: plain, member: true }, USER))).message);
    expect(viaAdmin.message).toContain("add their pattern to UNIQUE_COUNTERS");
    expect(await documentsUnder(missing)).toEqual([]);
  });
});

describe("the param rules, read from the environment of the process it runs in", () => {
  withParam("UNIQUE_COUNTERS", "admp-{id}-likes");
  withParam("COUNTER_KINDS", "admp-{id}-views=shards:5;maxDelta:1");
  withParam("AUTO_CREATE", "admp-{id}-views=admposts/{id}");

  it("UNIQUE_COUNTERS and COUNTER_KINDS decide a new counter's shape, as for createCounter", async () => {
    const id = uniqueId("p");
    await expect(admin.createCounter(`admp-${id}-likes`)).resolves.toMatchObject({ unique: true, numShards: 1 });
    expect((await refusal(admin.createCounter(`admp-${id}-views`, { numShards: 2 }))).message).toContain("is declared with 5 shards (COUNTER_KINDS)");
    expect(await refusal(admin.createCounter(`admp-${id}x-likes`, { unique: false }))).toEqual({
      code: "invalid-argument",
      message: "unique must be true or omitted: this counter id is reserved for unique counters (UNIQUE_COUNTERS)",
    });
  });

  it("AUTO_CREATE and maxDelta apply to its increments", async () => {
    const id = uniqueId("p");
    const counterId = `admp-${id}-views`;
    expect((await refusal(admin.incrementCounter(counterId))).code).toBe("not-found");
    await db.doc(`admposts/${id}`).set({ title: "t" });
    await expect(admin.incrementCounter(counterId)).resolves.toMatchObject({ applied: true });
    expect(await readCounter(counterId)).toMatchObject({ exists: true, numShards: 5 });
    expect((await refusal(admin.incrementCounter(counterId, 2))).message).toContain("(COUNTER_KINDS)");
  });

  it("a bad value stops the operations that read it, naming the param, and nothing else", async () => {
    const counterId = uniqueId("adm");
    await admin.createCounter(counterId);
    process.env.MIRRORS = "x-{id}=posts:likeCount";
    try {
      await expect(admin.resetCounter(counterId)).rejects.toThrow('MIRRORS: rule 1 "x-{id}=posts:likeCount"');
      await expect(admin.incrementCounter(counterId)).resolves.toMatchObject({ applied: true });
    } finally {
      delete process.env.MIRRORS;
    }
  });
});

describe("the app it uses", () => {
  it("is the one passed in: a counter created with another project's app is in that project only", async () => {
    const other = getApps().find((a) => a.name === "admin-test-other") ?? initializeApp({ projectId: "demo-admin-other" }, "admin-test-other");
    const counterId = uniqueId("adm");
    await admin.createCounter(counterId, { app: other });
    expect((await counterRef(getFirestore(other), counterId).get()).exists).toBe(true);
    expect(await documentsUnder(counterId)).toEqual([]);
    await admin.deleteCounter(counterId, { app: other });
    expect((await counterRef(getFirestore(other), counterId).get()).exists).toBe(false);
  });
});

describe("the maintenance runs: reconcile and migrateExtension", () => {
  it("reconcile repairs a counter through the rollup's commit, with the mirrors its env names, and reports it", async () => {
    const counterId = uniqueId("admin-reconcile");
    const postId = uniqueId("post");
    await db.doc(`posts/${postId}`).set({ title: "t" });
    await admin.createCounter(counterId, { numShards: 2 });
    await db.doc(`counters/${counterId}/shards/1`).update({ count: 5 });
    const env = { MIRRORS: `${counterId}=posts/${postId}:likes` };
    const reports: admin.CounterReport[] = [];
    for await (const report of admin.reconcile({ env, counterIds: [counterId], fix: true })) reports.push(report);
    expect(reports).toMatchObject([{ counterId, status: "lagging", total: 0, sum: 5, fixed: true }]);
    expect((await readCounter(counterId)).total).toBe(5);
    expect((await db.doc(`posts/${postId}`).get()).get("likes")).toBe(5);
    expect((await counterRef(db, counterId).get()).get("rollup.reconciledAt")).toBeDefined();
    expect(await admin.countCounters({ counterIds: [counterId, "other"] })).toBe(2);
  });

  it("refuses an unknown option, a bad env value and a rule that does not parse with invalid-argument, reading nothing", async () => {
    const first = <T>(run: AsyncGenerator<T>) => run.next();
    const unknown = await refusal(first(admin.reconcile({ fixx: true } as never)));
    expect(unknown.code).toBe("invalid-argument");
    expect(unknown.message).toContain('unknown option "fixx"');
    await expect(first(admin.reconcile({ env: { DATABASE_ID: "Not A Database" } }))).rejects.toThrow(/DATABASE_ID must be/);
    const rule = await refusal(first(admin.migrateExtension({ document: "pages/{id}/x/{id}", field: "visits", counter: "p-{id}" })));
    expect(rule.code).toBe("invalid-argument");
    expect(rule.message).toMatch(/^the rule /);
  });

  it("migrateExtension moves a document's field and shards into its counter, created with the env's shape", async () => {
    const page = uniqueId("page");
    await db.doc(`pages/${page}`).set({ visits: 7 });
    await db.doc(`pages/${page}/_counter_shards_/a-client`).set({ visits: 3 });
    const items: admin.MigrationItem[] = [];
    const env = { DEFAULT_SHARDS: "3" };
    for await (const item of admin.migrateExtension({ document: `pages/${page}`, field: "visits", counter: `${page}-visits` }, { env })) items.push(item);
    expect(items).toMatchObject([{ kind: "folded", report: { counterId: `${page}-visits`, amount: 10, created: true } }]);
    expect(await shardSum(`${page}-visits`)).toBe(10);
    expect((await readCounter(`${page}-visits`)).numShards).toBe(3);
  });

  it("migrateExtension refuses counters that DOCUMENT_COUNTERS names, with failed-precondition naming its rule, and writes nothing", async () => {
    const post = uniqueId("post");
    const shard = db.doc(`posts/${post}/_counter_shards_/a-client`);
    await db.doc(`posts/${post}`).set({ commentCount: 2 });
    await shard.set({ commentCount: 1 });
    const env = { DOCUMENT_COUNTERS: "posts/{post}/comments/{c}=post-{post}-comments" };
    for (const dryRun of [true, false]) {
      const refused = await refusal(admin.migrateExtension({ document: "posts/{id}", field: "commentCount", counter: "post-{id}-comments" }, { env, dryRun }).next());
      expect(refused.code).toBe("failed-precondition");
      expect(refused.message).toContain('DOCUMENT_COUNTERS rule 1 "posts/{post}/comments/{c}=post-{post}-comments"');
      expect(refused.message).toContain("a count of documents that the extension kept needs no migration, the backfill counts the documents themselves");
    }
    expect(await documentsUnder(`post-${post}-comments`)).toEqual([]);
    expect((await shard.get()).get("commentCount")).toBe(1);
  });
});

describe("importing it", () => {
  it("deploys nothing and changes nothing in the app: no function, no param, no admin app until a call", () => {
    // A fresh Node process, as an app's codebase loads it (firebase-tools discovers what a module declares).
    const script = `
      const params = require("firebase-functions/params");
      const { getApps } = require("firebase-admin/app");
      const entry = require("./functions/src/admin.ts");
      console.log(JSON.stringify({ exports: Object.keys(entry).sort(), params: params.declaredParams.map((p) => p.name), apps: getApps().map((a) => a.name) }));
    `;
    const result = spawnSync(process.execPath, ["--import", "tsx", "-e", script], { cwd: REPO, encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout.trim())).toEqual({
      exports: [
        "CounterError",
        "STUCK_INTERVALS",
        "STUCK_MARGIN_MS",
        "backfillBoard",
        "backfillDocuments",
        "countCounters",
        "createCounter",
        "deleteCounter",
        "incrementCounter",
        "migrateExtension",
        "rankOf",
        "reconcile",
        "resetCounter",
        "reshardCounter",
        "setMember",
        "stuckAfterMsFor",
      ],
      params: [],
      apps: [],
    });
  });

  it("uses the app's default app, which the app may initialize before or after the import", async () => {
    // This process initialized its default app (functions/src/index.ts, through the helpers): the admin
    // entry used it for every call above, and wrote where the callables write.
    const counterId = uniqueId("adm");
    await admin.createCounter(counterId);
    await expect(call(functions.incrementCounter, { counterId }, ADMIN)).resolves.toMatchObject({ applied: true });
  });
});
