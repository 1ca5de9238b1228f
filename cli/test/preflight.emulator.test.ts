// The deploy preflight, on this repository and on broken copies of it: each broken copy must fail (or
// warn) with a message that names the problem. Copies live in .cache/ inside the repository so the
// functions they load resolve their dependencies from the repository's node_modules.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { CALLABLES, runPreflight, type CheckResult } from "../src/preflight";
import { addCounters, APP_PROJECT, COUNTERS_SOURCE, copyOfFixtureApp, removeCopies, withCatchAll } from "../../test/helpers/existing-app";
import { parseDocumentCounterRules } from "../../functions/src/model/document-rules";
import { documentTriggers } from "../../functions/src/model/document-triggers";
import { requireBuiltFunctions } from "../../test/helpers/emulators";
import { context } from "../src/preflight/context";
import { checkIndexes } from "../src/preflight/indexes";
import { checkLocalNode } from "../src/preflight/runtime";
import { discoverBuild } from "../src/lib/codebases";

// These tests read the built functions (functions/lib), as a deploy does.
beforeAll(requireBuiltFunctions);

const FIXTURES = join(REPO_ROOT, ".cache", "preflight-fixtures");
const TODAY = new Date("2026-11-22T12:00:00Z");
const PROJECT = "demo-counter";

/** A copy of everything a deploy reads, with `change` applied to it. */
function brokenCopy(change: (dir: string) => void): string {
  mkdirSync(FIXTURES, { recursive: true });
  const dir = mkdtempSync(join(FIXTURES, "copy-"));
  for (const file of ["firebase.json", ".firebaserc", "firestore.rules", "firestore.indexes.json"]) {
    cpSync(join(REPO_ROOT, file), join(dir, file));
  }
  mkdirSync(join(dir, "functions"));
  for (const file of ["package.json", ".env"]) cpSync(join(REPO_ROOT, "functions", file), join(dir, "functions", file));
  cpSync(join(REPO_ROOT, "functions", "lib"), join(dir, "functions", "lib"), { recursive: true });
  symlinkSync(join(REPO_ROOT, "functions", "node_modules"), join(dir, "functions", "node_modules"));
  change(dir);
  return dir;
}

function edit(path: string, replace: (text: string) => string): void {
  writeFileSync(path, replace(readFileSync(path, "utf8")));
}

async function preflight(dir: string, now = TODAY): Promise<CheckResult[]> {
  return runPreflight({ projectDir: dir, projectId: PROJECT, now, firestoreHost: process.env.FIRESTORE_EMULATOR_HOST ?? "127.0.0.1:8080" });
}

function only(results: CheckResult[], check: string): CheckResult {
  const found = results.filter((r) => r.check === check);
  expect(found).toHaveLength(1);
  return found[0]!;
}

function failures(results: CheckResult[]): CheckResult[] {
  return results.filter((r) => r.status === "fail");
}

// Each run loads the functions in a child process to read their manifest, as a deploy does.
jest.setTimeout(60_000);

afterAll(() => {
  rmSync(FIXTURES, { recursive: true, force: true });
  removeCopies();
});

describe("the local Node (the preflight's own, never the deploy's)", () => {
  const ctx = (dir: string) => context({ projectDir: dir, projectId: PROJECT, now: TODAY, firestoreHost: "" });

  it("warns only where the project has its own Node of the runtime's major (this repository's node devDependency) and something else runs it", () => {
    expect(checkLocalNode(ctx(REPO_ROOT), "nodejs22", "20.20.2")).toEqual({
      check: "local node",
      status: "warn",
      message: "this runs on Node 20.20.2, not the project's Node 22 (node_modules/node): run the scripts through npm (npm run …), which puts it first on PATH",
    });
    expect(checkLocalNode(ctx(REPO_ROOT), "nodejs22", "22.23.3")).toBeUndefined();
  });

  it("says, without a warning, that another Node is no matter for a deploy where the project has none of its own (an app's)", () => {
    const app = brokenCopy(() => undefined);
    expect(checkLocalNode(ctx(app), "nodejs22", "20.20.2")).toEqual({
      check: "local node",
      status: "ok",
      message: "Node 20.20.2 runs this, not Node 22: no matter for a deploy, which builds and runs the functions on nodejs22; the emulator runs them on the Node that runs firebase-tools",
    });
    expect(checkLocalNode(ctx(app), "nodejs22", "22.1.0")).toBeUndefined();
  });
});

describe("reading the manifest (lib/codebases.ts)", () => {
  // The emulators' environment (scripts/lib/firebase-cli.ts) sets it for the functions emulator: this test sets its own.
  const VARIABLE = "FIREBASE_FUNCTIONS_DISCOVERY_OUTPUT_PATH";
  const outer = process.env[VARIABLE];
  afterEach(() => {
    if (outer === undefined) delete process.env[VARIABLE];
    else process.env[VARIABLE] = outer;
  });

  it("reads from the file the SDK writes the same manifest its server gives a deploy, and leaves the environment as it was", async () => {
    const ctx = context({ projectDir: REPO_ROOT, projectId: PROJECT, now: TODAY, firestoreHost: "" });
    delete process.env[VARIABLE];
    const fromFile = await discoverBuild(ctx.project, ctx.codebase);
    expect(process.env[VARIABLE]).toBeUndefined();
    process.env[VARIABLE] = ""; // an operator's own value stands: empty is firebase-tools' default, the server
    const fromServer = await discoverBuild(ctx.project, ctx.codebase);
    expect(process.env[VARIABLE]).toBe("");
    expect(Object.keys(fromFile.endpoints).length).toBeGreaterThan(5);
    expect(fromFile).toEqual(fromServer);
  });
});

describe("preflight", () => {
  it("passes on this repository, with the manifest a deploy would upload", async () => {
    const results = await preflight(REPO_ROOT);
    expect(failures(results)).toEqual([]);
    expect(results.map((r) => r.check)).toEqual(
      expect.arrayContaining([
        "runtime",
        "functions sdk",
        "discovery",
        "params",
        "settings",
        "manifest",
        "placement",
        "unique counters",
        "windows",
        "mirrors",
        "counter kinds",
        "auto create",
        "id patterns",
        "admin settings",
        "rules",
        "rules guarantees",
        "indexes",
      ]),
    );
    expect(only(results, "settings").status).toBe("ok");
    // The leaderboards' trigger of functions/.env's LEADERBOARDS (the players of seed and the e2e tests), then the
    // document trigger of its DOCUMENT_COUNTERS (the example feed's comments) last.
    expect(only(results, "manifest").message).toMatch(
      /^12 v2 endpoints in us-central1: 6 callables.*; cleanupDeletedCounter on google\.cloud\.firestore\.document\.v1\.updated counters\/\{counterId\}\/exactCounterCleanup\/pending, retry on; rollupBoard on google\.cloud\.firestore\.document\.v1\.written counters\/~exactCounter\/exactCounterBoards\/\{board\}\/exactCounterEntries\/\{entry\}, retry on; documentCounters-posts_comments_0a61rcx on google\.cloud\.firestore\.document\.v1\.written posts\/\{d1\}\/comments\/\{d2\}, retry on$/,
    );
    expect(only(results, "leaderboards")).toEqual({
      check: "leaderboards",
      status: "ok",
      message: "LEADERBOARDS: rollupBoard keeps the summaries of players <- player-{id}-points, bench <- leaderboard-ours-{id} (existing counters join with backfill --board)",
    });
    expect(only(results, "document counters").message).toBe(
      "DOCUMENT_COUNTERS deploys 1 trigger: documentCounters-posts_comments_0a61rcx on posts/{d1}/comments/{d2} (post-{post}-comments counts posts/{post}/comments/{comment})",
    );
    expect(only(results, "unique counters")).toMatchObject({ status: "ok", message: expect.stringContaining("UNIQUE_COUNTERS is empty") as string });
    expect(only(results, "windows")).toMatchObject({ status: "ok", message: expect.stringContaining("WINDOWED_COUNTERS is empty") as string });
    expect(only(results, "mirrors")).toMatchObject({ status: "ok", message: expect.stringContaining("MIRRORS is empty") as string });
    expect(only(results, "counter kinds")).toMatchObject({ status: "ok", message: expect.stringContaining("COUNTER_KINDS is empty") as string });
    expect(only(results, "exposure")).toMatchObject({ status: "ok", message: expect.stringContaining("local project demo-counter: open for local use") as string });
    expect(only(results, "runtime")).toMatchObject({ status: "ok", message: expect.stringContaining("nodejs22") as string });
    expect(only(results, "manifest").message).toContain("rollupTotal on google.cloud.firestore.document.v1.written counters/{counterId}/shards/{shardId}, retry on");
    expect(only(results, "manifest").message).toContain("rollupSweep every 5 minutes");
    // On the minute of every UTC midnight, and every 10 minutes after (functions/src/entry/rollupWindows.ts).
    expect(only(results, "manifest").message).toContain("rollupWindows */10 * * * * (UTC)");
    expect(only(results, "codebase")).toEqual({
      check: "codebase",
      status: "ok",
      message: `firebase deploy --only functions:counters deploys the ${CALLABLES.length + 6} functions of codebase "counters"`,
    });
  });

  it("fails when the functions' codebase is named default, and says what a deploy would then delete", async () => {
    const dir = brokenCopy((d) => edit(join(d, "firebase.json"), (t) => t.replace('"codebase": "counters"', '"codebase": "default"')));
    const results = await preflight(dir);
    expect(results).toEqual([
      {
        check: "firebase.json",
        status: "fail",
        message: expect.stringMatching(
          /firebase\.json has no functions codebase "counters" \(it has "default"\): name the counters' codebase "counters" \(firestore-exact-counter init adds it\)\. Under "default" a deploy of this repository offers to delete every function of the project that is not in its source$/,
        ) as string,
      },
    ]);
  });

  it("fails on engines.node 20 and names the decommission date", async () => {
    const dir = brokenCopy((d) => edit(join(d, "functions", "package.json"), (t) => t.replace('"node": "22"', '"node": "20"')));
    const runtime = only(await preflight(dir), "runtime");
    expect(runtime.status).toBe("fail");
    expect(runtime.message).toContain("Runtime Node.js 20 was decommissioned on 2026-10-30");
    expect(runtime.message).toContain("engines.node in functions/package.json");
  });

  it("fails on a firebase.json runtime override that is decommissioned", async () => {
    const dir = brokenCopy((d) =>
      edit(join(d, "firebase.json"), (t) => t.replace('"codebase": "counters",', '"codebase": "counters", "runtime": "nodejs20",')),
    );
    const runtime = only(await preflight(dir), "runtime");
    expect(runtime.status).toBe("fail");
    expect(runtime.message).toMatch(/decommissioned on 2026-10-30.*runtime "nodejs20" in firebase.json/);
  });

  it("warns within 90 days of the runtime's deprecation", async () => {
    const runtime = only(await preflight(REPO_ROOT, new Date("2027-03-01T00:00:00Z")), "runtime");
    expect(runtime.status).toBe("warn");
    expect(runtime.message).toContain("will be deprecated on 2027-04-30 (in 60 days)");
  });

  it("fails when a param has no value, so a deploy would prompt", async () => {
    const dir = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^MAX_DELTA=.*$/m, "")));
    const params = only(await preflight(dir), "params");
    expect(params.status).toBe("fail");
    expect(params.message).toContain("params without a value for demo-counter: MAX_DELTA");
  });

  it.each([
    ["DEFAULT_SHARDS above MAX_SHARDS", { DEFAULT_SHARDS: "20", MAX_SHARDS: "10" }, "DEFAULT_SHARDS (20) must not exceed MAX_SHARDS (10)"],
    [
      "ROLLUP_TIMEOUT_SECONDS below 2 x ROLLUP_INTERVAL_MS + 10 s",
      { ROLLUP_INTERVAL_MS: "30000", ROLLUP_TIMEOUT_SECONDS: "60" },
      "ROLLUP_TIMEOUT_SECONDS (60) must be at least 2 x ROLLUP_INTERVAL_MS + 10 s = 70 s",
    ],
    ["ROLLUP_INTERVAL_MS of 0", { ROLLUP_INTERVAL_MS: "0" }, "ROLLUP_INTERVAL_MS must be an integer from 1 to 60000"],
    ["ROLLUP_INTERVAL_MS above a minute", { ROLLUP_INTERVAL_MS: "61000", ROLLUP_TIMEOUT_SECONDS: "200" }, "ROLLUP_INTERVAL_MS must be an integer from 1 to 60000"],
    ["MAX_SHARDS above one batch", { MAX_SHARDS: "201" }, "MAX_SHARDS must be an integer from 1 to 200"],
    ["REQUEST_TTL_HOURS of 0", { REQUEST_TTL_HOURS: "0" }, "REQUEST_TTL_HOURS must be an integer from 1 to 8760"],
    ["ROLLUP_TIMEOUT_SECONDS above 540", { ROLLUP_TIMEOUT_SECONDS: "600" }, "ROLLUP_TIMEOUT_SECONDS must be an integer from 1 to 540"],
  ])("refuses %s, naming the param", async (_name, values, message) => {
    const dir = brokenCopy((d) =>
      edit(join(d, "functions", ".env"), (t) =>
        Object.entries(values).reduce((text, [name, value]) => text.replace(new RegExp(`^${name}=.*$`, "m"), `${name}=${value}`), t),
      ),
    );
    const settings = only(await preflight(dir), "settings");
    expect(settings.status).toBe("fail");
    expect(settings.message).toContain(message);
  });

  it("fails when UNIQUE_COUNTERS has no value, so a deploy would prompt", async () => {
    const dir = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^UNIQUE_COUNTERS=.*$/m, "")));
    const params = only(await preflight(dir), "params");
    expect(params.status).toBe("fail");
    expect(params.message).toContain("params without a value for demo-counter: UNIQUE_COUNTERS");
  });

  it("accepts UNIQUE_COUNTERS patterns and lists them", async () => {
    const dir = brokenCopy((d) =>
      edit(join(d, "functions", ".env"), (t) => t.replace(/^UNIQUE_COUNTERS=.*$/m, "UNIQUE_COUNTERS=post-{id}-likes, poll-{p}-votes")),
    );
    expect(only(await preflight(dir), "unique counters")).toEqual({
      check: "unique counters",
      status: "ok",
      message: "UNIQUE_COUNTERS: ids matching post-{id}-likes, poll-{p}-votes are always unique counters",
    });
  });

  it.each([
    ["a path in a pattern", "post-{id}-likes,posts/{id}", 'UNIQUE_COUNTERS: pattern 2 "posts/{id}" has "/", which is not a counter-id character'],
    ["an unclosed placeholder", "post-{id-likes", 'UNIQUE_COUNTERS: pattern 1 "post-{id-likes" has a "{" that is never closed'],
    ["two placeholders", "{a}-{b}", 'UNIQUE_COUNTERS: pattern 1 "{a}-{b}" has more than one placeholder'],
    ["an empty pattern", "a,,b", 'UNIQUE_COUNTERS: pattern 2 "" is empty'],
  ])("fails on UNIQUE_COUNTERS with %s, naming the pattern", async (_name, value, message) => {
    const dir = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^UNIQUE_COUNTERS=.*$/m, `UNIQUE_COUNTERS=${value}`)));
    const check = only(await preflight(dir), "unique counters");
    expect(check.status).toBe("fail");
    expect(check.message).toContain(message);
    expect(check.message).toContain("fix it in functions/.env or functions/.env.demo-counter");
  });

  it("warns, naming each, when a real project would deploy the settings that are open for local use", async () => {
    const results = await runPreflight({ projectDir: REPO_ROOT, projectId: "counters-prod-1", now: TODAY, firestoreHost: process.env.FIRESTORE_EMULATOR_HOST ?? "127.0.0.1:8080" });
    const exposure = only(results, "exposure");
    expect(exposure.status).toBe("warn");
    expect(exposure.message).toContain("CREATE_POLICY=signed-in lets any signed-in user, anonymous included, create counters");
    expect(exposure.message).toContain("RATE_LIMIT_PER_MINUTE=0: no per-caller rate limit");
    expect(exposure.message).toContain("ENFORCE_APP_CHECK=false");
    expect(exposure.message).toContain("set them in functions/.env.counters-prod-1");
    expect(failures(results)).toEqual([]);
  });

  it("says nothing once the real project's .env.<projectId> chooses", async () => {
    const dir = brokenCopy((d) =>
      writeFileSync(join(d, "functions", ".env.counters-prod-1"), "CREATE_POLICY=admin\nRATE_LIMIT_PER_MINUTE=300\nENFORCE_APP_CHECK=true\n"),
    );
    const results = await runPreflight({ projectDir: dir, projectId: "counters-prod-1", now: TODAY, firestoreHost: process.env.FIRESTORE_EMULATOR_HOST ?? "127.0.0.1:8080" });
    expect(only(results, "exposure")).toMatchObject({ status: "ok" });
  });

  it("accepts MIRRORS rules and lists them", async () => {
    const dir = brokenCopy((d) =>
      edit(join(d, "functions", ".env"), (t) =>
        t.replace(/^MIRRORS=.*$/m, "MIRRORS=post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:stats.views"),
      ),
    );
    expect(only(await preflight(dir), "mirrors")).toEqual({
      check: "mirrors",
      status: "ok",
      message: "MIRRORS: post-{id}-likes -> posts/{id}:likeCount, post-{id}-views -> posts/{id}:stats.views",
    });
  });

  it("warns of a mirrored field the app's rules let a client write (an owner's update, a create with the count set), and not of one they protect", async () => {
    const mirrors = "post-{id}-comments=posts/{id}:commentCount,post-{id}-views=posts/{id}:stats.views";
    // The app's own rule for its posts: owners may create and edit them, any field (the counts too).
    const lax = "    match /posts/{postId} {\n      allow read: if true;\n      allow create: if request.auth != null && request.resource.data.ownerId == request.auth.uid;\n      allow update: if request.auth != null && resource.data.ownerId == request.auth.uid;\n    }\n";
    const withPosts = (d: string, rule: string) => edit(join(d, "firestore.rules"), (t) => t.replace(/\n {2}\}\n\}\s*$/, `\n${rule}  }\n}\n`));
    const dir = brokenCopy((d) => {
      edit(join(d, "functions", ".env"), (t) => t.replace(/^MIRRORS=.*$/m, `MIRRORS=${mirrors}`));
      withPosts(d, lax);
    });
    const check = only(await preflight(dir), "mirrored fields");
    expect(check.status).toBe("warn");
    expect(check.message).toContain(
      'signed-in users can write posts/{id}:commentCount, which MIRRORS rule "post-{id}-comments=posts/{id}:commentCount" keeps: they can create it with the field set and update the field (probed on posts/alice as user alice',
    );
    expect(check.message).toContain("signed-in users can write posts/{id}:stats.views");
    // The example's rules protect the counts: owners edit their posts, never a mirrored count.
    const example = readFileSync(join(REPO_ROOT, "examples", "rules", "mirrored-posts.rules"), "utf8");
    const guarded = brokenCopy((d) => {
      edit(join(d, "functions", ".env"), (t) => t.replace(/^MIRRORS=.*$/m, "MIRRORS=post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:stats.views"));
      writeFileSync(join(d, "firestore.rules"), example);
    });
    expect(only(await preflight(guarded), "mirrored fields")).toMatchObject({ status: "ok", message: "firestore.rules: clients can write none of the 2 fields MIRRORS keeps (functions/.env)" });
  });

  it.each([
    ["bad syntax (no field path)", "post-{id}-likes=posts/{id}", 'MIRRORS: rule 1 "post-{id}-likes=posts/{id}" has no ":"'],
    ["a placeholder on one side only", "a=b/c:n,post-{id}-likes=posts/p1:likeCount", 'MIRRORS: rule 2 "post-{id}-likes=posts/p1:likeCount" uses {id} in the counter-id pattern but not in the document path'],
    ["an odd number of path segments", "post-{id}-likes=posts:likeCount", 'MIRRORS: rule 1 "post-{id}-likes=posts:likeCount" has a document path "posts" with 1 segments'],
    ["an invalid field path", "post-{id}-likes=posts/{id}:like-count", 'MIRRORS: rule 1 "post-{id}-likes=posts/{id}:like-count" has a field path "like-count" that is not valid'],
    ["a target that can land among the counters", "{c}-likes={c}/summary:total", 'MIRRORS: rule 1 "{c}-likes={c}/summary:total" has a document path "{c}/summary" whose first segment becomes "counters" when {c} is "counters"'],
    [
      "two rules that can write one field",
      "post-{id}-views=posts/{id}:stats.views,post-{id}-stats=posts/{id}:stats",
      'MIRRORS: rule 2 "post-{id}-stats=posts/{id}:stats" can write the fields stats.views and stats (one holds the other) of the same document as rule 1 (post-{id}-views=posts/{id}:stats.views)',
    ],
  ])("fails on MIRRORS with %s, naming the rule", async (_name, value, message) => {
    const dir = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^MIRRORS=.*$/m, `MIRRORS=${value}`)));
    const check = only(await preflight(dir), "mirrors");
    expect(check.status).toBe("fail");
    expect(check.message).toContain(message);
    expect(check.message).toContain("fix it in functions/.env or functions/.env.demo-counter");
  });

  it("accepts COUNTER_KINDS rules and lists them in order", async () => {
    const dir = brokenCopy((d) =>
      edit(join(d, "functions", ".env"), (t) =>
        t.replace(/^COUNTER_KINDS=.*$/m, "COUNTER_KINDS=post-{id}-likes=shards:20,post-{id}-views=shards:50;maxDelta:1;callers:add,post-{id}-score=callers:none"),
      ),
    );
    expect(only(await preflight(dir), "counter kinds")).toEqual({
      check: "counter kinds",
      status: "ok",
      message:
        "COUNTER_KINDS (the first matching rule applies): post-{id}-likes: 20 shards; post-{id}-views: 50 shards, |delta| <= 1, callers only add; post-{id}-score: callers none (the admin entry only)",
    });
  });

  it.each([
    ["no =", "post-{id}-likes:shards:20", 'COUNTER_KINDS: rule 1 "post-{id}-likes:shards:20" has no "="'],
    ["an unknown key", "post-{id}-likes=shards:20,post-{id}-views=shard:50", 'COUNTER_KINDS: rule 2 "post-{id}-views=shard:50" has an unknown key "shard" (the keys are shards, maxDelta and callers)'],
    ["a callers value it does not know", "post-{id}-views=callers:read", 'COUNTER_KINDS: rule 1 "post-{id}-views=callers:read" sets callers to "read": it must be add (the callables only add) or none (only the admin entry creates and moves it)'],
    ["a duplicate key", "post-{id}-views=maxDelta:1;maxDelta:2", 'COUNTER_KINDS: rule 1 "post-{id}-views=maxDelta:1;maxDelta:2" declares maxDelta twice'],
    ["a bad number", "post-{id}-views=shards:fifty", 'COUNTER_KINDS: rule 1 "post-{id}-views=shards:fifty" sets shards to "fifty": it must be an integer from 1 to 200 (MAX_SHARDS)'],
    ["maxDelta above MAX_DELTA", "post-{id}-views=maxDelta:1001", 'sets maxDelta to "1001": it must be an integer from 1 to 1000 (MAX_DELTA)'],
    ["a rule an earlier one hides", "{id}=maxDelta:10,post-{id}-likes=shards:20", 'COUNTER_KINDS: rule 2 "post-{id}-likes=shards:20" can never apply: rule 1 ({id}) matches every id it matches'],
    ["a bad pattern", "posts/{id}=shards:2", 'COUNTER_KINDS: rule 1 "posts/{id}=shards:2" has a counter-id pattern "posts/{id}" that has "/"'],
  ])("fails on COUNTER_KINDS with %s, naming the rule", async (_name, value, message) => {
    const dir = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^COUNTER_KINDS=.*$/m, `COUNTER_KINDS=${value}`)));
    const check = only(await preflight(dir), "counter kinds");
    expect(check.status).toBe("fail");
    expect(check.message).toContain(message);
    expect(check.message).toContain("fix it in functions/.env or functions/.env.demo-counter");
  });

  it("checks COUNTER_KINDS against the project's MAX_SHARDS, from .env.<project> over functions/.env", async () => {
    const dir = brokenCopy((d) => {
      edit(join(d, "functions", ".env"), (t) => t.replace(/^COUNTER_KINDS=.*$/m, "COUNTER_KINDS=post-{id}-views=shards:50"));
      writeFileSync(join(d, "functions", ".env.demo-counter"), "MAX_SHARDS=40\nDEFAULT_SHARDS=10\n");
    });
    const check = only(await preflight(dir), "counter kinds");
    expect(check.status).toBe("fail");
    expect(check.message).toContain('COUNTER_KINDS: rule 1 "post-{id}-views=shards:50" sets shards to "50": it must be an integer from 1 to 40 (MAX_SHARDS)');
  });

  it("reads UNIQUE_COUNTERS from .env.<project> over functions/.env", async () => {
    const dir = brokenCopy((d) => writeFileSync(join(d, "functions", ".env.demo-counter"), "UNIQUE_COUNTERS=likes-{id}/x\n"));
    const check = only(await preflight(dir), "unique counters");
    expect(check.status).toBe("fail");
    expect(check.message).toContain('pattern 1 "likes-{id}/x" has "/"');
  });

  it("accepts AUTO_CREATE rules and lists them; fails on a bad one, naming it", async () => {
    const good = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^AUTO_CREATE=.*$/m, "AUTO_CREATE=post-{id}-likes=posts/{id}")));
    expect(only(await preflight(good), "auto create")).toEqual({
      check: "auto create",
      status: "ok",
      message: "AUTO_CREATE: the first call on a missing counter creates it while its document exists: post-{id}-likes <- posts/{id}",
    });
    const bad = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^AUTO_CREATE=.*$/m, "AUTO_CREATE=post-{id}-likes=posts/{postId}")));
    const check = only(await preflight(bad), "auto create");
    expect(check.status).toBe("fail");
    expect(check.message).toBe(
      'AUTO_CREATE: rule 1 "post-{id}-likes=posts/{postId}" names the placeholder {id} in the counter-id pattern but {postId} in the document path; fix it in functions/.env or functions/.env.demo-counter',
    );
  });

  it("fails on a bad LEADERBOARDS rule, and on a counter id two boards would name, naming the rules", async () => {
    const bad = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^LEADERBOARDS=.*$/m, "LEADERBOARDS=top players=player-{id}-points")));
    expect(only(await preflight(bad), "leaderboards")).toEqual({
      check: "leaderboards",
      status: "fail",
      message:
        'LEADERBOARDS: rule 1 "top players=player-{id}-points" has a board name "top players" that is not 1-64 characters of A-Z, a-z, 0-9, _ and -; fix it in functions/.env or functions/.env.demo-counter',
    });
    const twice = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^LEADERBOARDS=.*$/m, "LEADERBOARDS=players=player-{id}-points,weekly=player-{id}")));
    const check = only(await preflight(twice), "leaderboards");
    expect(check.status).toBe("fail");
    expect(check.message).toMatch(/^LEADERBOARDS: rule 2 "weekly=player-\{id\}" names counter ids that rule 1 \(players=player-\{id\}-points\) names too: such a counter would be on two boards \(players and weekly\)/);
  });

  it("fails on an invalid endpoint setting (concurrency with less than one CPU)", async () => {
    const dir = brokenCopy((d) =>
      edit(join(d, "functions", "lib", "config", "params.js"), (t) => t.replace("exports.ROLLUP_CPU = 1;", "exports.ROLLUP_CPU = 0.5;")),
    );
    const params = only(await preflight(dir), "params");
    expect(params.status).toBe("fail");
    expect(params.message).toContain("concurrent execution and less than one full CPU");
  });

  it("fails when the trigger's region does not match the database location", async () => {
    const dir = brokenCopy((d) => edit(join(d, "firebase.json"), (t) => t.replace('"location": "nam5"', '"location": "eur3"')));
    const placement = only(await preflight(dir), "placement");
    expect(placement.status).toBe("fail");
    expect(placement.message).toContain("(eur3 → europe-west1); set REGION=europe-west1 in functions/.env.demo-counter, or correct firestore.location in firebase.json");
  });

  it("says the placement is unknown (a warning, not ok) when firebase.json names no firestore.location", async () => {
    const dir = brokenCopy((d) => edit(join(d, "firebase.json"), (t) => t.replace(/^\s*"location": "nam5",\n/m, "")));
    expect(readFileSync(join(dir, "firebase.json"), "utf8")).not.toContain('"location"');
    const placement = only(await preflight(dir), "placement");
    expect(placement.status).toBe("warn");
    expect(placement.message).toMatch(/^unknown: firebase\.json names no firestore\.location, so whether rollupTotal in us-central1 runs in its database's location cannot be checked/);
    expect(placement.message).toContain("set REGION in functions/.env.demo-counter to match");
    expect(placement.message).not.toContain("matches");
  });

  it("names the params files of the layout it checked: counters/.env.<project> in an app's folder", async () => {
    const app = copyOfFixtureApp();
    addCounters(app);
    edit(join(app, "firebase.json"), (t) => t.replace('"location": "nam5"', '"location": "eur3"'));
    writeFileSync(join(app, "counters", `.env.${APP_PROJECT}`), "CREATE_POLICY=non-anonymous\nMAX_SHARDS=5\nDEFAULT_SHARDS=10\n");
    const results = await runPreflight({ projectDir: app, projectId: APP_PROJECT, now: TODAY, firestoreHost: process.env.FIRESTORE_EMULATOR_HOST ?? "127.0.0.1:8080" });
    expect(only(results, "placement").message).toContain(`set REGION=europe-west1 in counters/.env.${APP_PROJECT}, or correct firestore.location in firebase.json`);
    expect(only(results, "settings")).toMatchObject({ status: "fail", message: expect.stringContaining(`fix it in counters/.env or counters/.env.${APP_PROJECT}`) as string });
    expect(JSON.stringify(results)).not.toContain("functions/.env");
  });

  it("fails when the trigger's database (DATABASE_ID) is not the one firebase.json deploys rules to", async () => {
    const dir = brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => t.replace(/^DATABASE_ID=.*$/m, "DATABASE_ID=counters-db")));
    const database = only(await preflight(dir), "database");
    expect(database.status).toBe("fail");
    expect(database.message).toContain('listens to database "counters-db" (DATABASE_ID) but firebase.json deploys rules and indexes to "(default)"');
  });

  it("fails when the manifest lacks the rollup sweep", async () => {
    const dir = brokenCopy((d) => edit(join(d, "functions", "lib", "index.js"), (t) => t.replace(/^.*rollupSweep.*$/gm, "")));
    const manifest = only(await preflight(dir), "manifest");
    expect(manifest.status).toBe("fail");
    expect(manifest.message).toContain("rollupSweep is not exported");
  });

  it("fails when the manifest lacks the trigger that finishes large deletions", async () => {
    const dir = brokenCopy((d) => edit(join(d, "functions", "lib", "index.js"), (t) => t.replace(/^.*cleanupDeletedCounter.*$/gm, "")));
    const manifest = only(await preflight(dir), "manifest");
    expect(manifest.status).toBe("fail");
    expect(manifest.message).toContain("cleanupDeletedCounter is not exported");
  });

  it("fails when the manifest lacks the rollup trigger", async () => {
    const dir = brokenCopy((d) => edit(join(d, "functions", "lib", "index.js"), (t) => t.replace(/^.*rollupTotal.*$/gm, "")));
    const manifest = only(await preflight(dir), "manifest");
    expect(manifest.status).toBe("fail");
    expect(manifest.message).toContain("rollupTotal is not exported");
  });

  it("fails on a rules syntax error and names the line", async () => {
    const dir = brokenCopy((d) => edit(join(d, "firestore.rules"), (t) => t.replace("allow get", "allow get(")));
    const rules = only(await preflight(dir), "rules");
    expect(rules.status).toBe("fail");
    expect(rules.message).toMatch(/firestore\.rules does not compile: Error compiling rules: L\d+:\d+/);
  });

  it("fails when a catch-all rule opens the counters' documents, naming every guarantee it breaks", async () => {
    const dir = brokenCopy((d) => edit(join(d, "firestore.rules"), withCatchAll));
    const results = await preflight(dir);
    expect(only(results, "rules")).toMatchObject({ status: "ok" });
    const guarantees = only(results, "rules guarantees");
    expect(guarantees.status).toBe("fail");
    expect(guarantees.message).toMatch(/^firestore\.rules: 17 of 22 guarantees broken: signed-in users can list or query counters; /);
    expect(guarantees.message).toContain("signed-in users can write counters/{id}/shards/{n}");
  });

  it("fails on an invalid index file and on a missing TTL policy", async () => {
    const invalid = brokenCopy((d) => edit(join(d, "firestore.indexes.json"), (t) => t.replace('"fieldOverrides"', '"fieldOverides"')));
    const noTtl = brokenCopy((d) => edit(join(d, "firestore.indexes.json"), (t) => t.replace('"ttl": true', '"ttl": false')));
    expect(only(await preflight(invalid), "indexes")).toMatchObject({ status: "fail" });
    expect(only(await preflight(noTtl), "indexes").message).toContain("no TTL override on exactCounterRequests.expireAt");
  });

  it("reads the index file as a deploy does: // and /* */ comments (a stock firebase init writes some) pass, a broken line is named", () => {
    const commented = brokenCopy((d) =>
      edit(join(d, "firestore.indexes.json"), (t) => `// The app's indexes (firebase init wrote comments here).\n${t.replace('"fieldOverrides"', '/* ours */ "fieldOverrides"')}`),
    );
    const ctx = (dir: string) => context({ projectDir: dir, projectId: PROJECT, now: TODAY, firestoreHost: "" });
    expect(checkIndexes(ctx(commented))).toMatchObject({ status: "ok" });
    const trailing = brokenCopy((d) => edit(join(d, "firestore.indexes.json"), (t) => t.replace(/\n {2}\],\n {2}"fieldOverrides"/, ',\n  ],\n  "fieldOverrides"')));
    const line = readFileSync(join(trailing, "firestore.indexes.json"), "utf8").split("\n").findIndex((l) => l.startsWith("  ],")) + 1;
    expect(checkIndexes(ctx(trailing))).toEqual({
      check: "indexes",
      status: "fail",
      message: `firestore.indexes.json line ${line}, column 3: Unexpected token ']' (a deploy would stop there too)`,
    });
  });

  it("fails when the sweep's collection-group index on exactCounterRollup.dueAt is gone", async () => {
    const dir = brokenCopy((d) => edit(join(d, "firestore.indexes.json"), (t) => t.replace('"queryScope": "COLLECTION_GROUP"', '"queryScope": "COLLECTION"')));
    const indexes = only(await preflight(dir), "indexes");
    expect(indexes.status).toBe("fail");
    expect(indexes.message).toContain("no collection-group index on exactCounterRollup.dueAt");
  });

  it("fails when the index on counters' rollup.windowsMoveAt, which the midnight commit queries, is gone", async () => {
    const dir = brokenCopy((d) =>
      edit(join(d, "firestore.indexes.json"), (t) => {
        const spec = JSON.parse(t) as { fieldOverrides: { fieldPath: string }[] };
        spec.fieldOverrides = spec.fieldOverrides.filter((o) => o.fieldPath !== "rollup.windowsMoveAt");
        return JSON.stringify(spec, null, 2);
      }),
    );
    const indexes = only(await preflight(dir), "indexes");
    expect(indexes.status).toBe("fail");
    expect(indexes.message).toContain("has no index on counters.rollup.windowsMoveAt: rollupWindows' query would fail");
  });

  it("fails when the index on counters' rollup.trailing.dueAt, which the sweep's query of promises needs, is gone", async () => {
    const dir = brokenCopy((d) =>
      edit(join(d, "firestore.indexes.json"), (t) => {
        const spec = JSON.parse(t) as { fieldOverrides: { fieldPath: string }[] };
        spec.fieldOverrides = spec.fieldOverrides.filter((o) => o.fieldPath !== "rollup.trailing.dueAt");
        return JSON.stringify(spec, null, 2);
      }),
    );
    const indexes = only(await preflight(dir), "indexes");
    expect(indexes.status).toBe("fail");
    expect(indexes.message).toContain("has no index on counters.rollup.trailing.dueAt: rollupSweep's query would fail");
  });

  it("fails when the shards' index on (count, writes), which the rollup's one aggregation reads, is gone", async () => {
    const dir = brokenCopy((d) => edit(join(d, "firestore.indexes.json"), (t) => t.replace('"fieldPath": "writes"', '"fieldPath": "updates"')));
    const indexes = only(await preflight(dir), "indexes");
    expect(indexes.status).toBe("fail");
    expect(indexes.message).toContain("has no index on shards (count, writes)");
  });

  it("warns while the TTL policy of earlier versions on the group requests is still there: it deletes an app's own requests", async () => {
    const legacy = '{ "collectionGroup": "requests", "fieldPath": "expireAt", "ttl": true, "indexes": [] },';
    const dir = brokenCopy((d) => edit(join(d, "firestore.indexes.json"), (t) => t.replace('"fieldOverrides": [', `"fieldOverrides": [${legacy}`)));
    const indexes = only(await preflight(dir), "indexes");
    expect(indexes.status).toBe("warn");
    expect(indexes.message).toContain("still has the TTL override on requests.expireAt of earlier versions");
  });

  it("fails when firebase-functions does not satisfy functions/package.json", async () => {
    const dir = brokenCopy((d) =>
      edit(join(d, "functions", "package.json"), (t) => t.replace(/"firebase-functions": "[^"]*"/, '"firebase-functions": "^8.0.0"')),
    );
    const sdk = only(await preflight(dir), "functions sdk");
    expect(sdk.status).toBe("fail");
    expect(sdk.message).toMatch(/installed firebase-functions 7\.\d+\.\d+ does not satisfy "\^8\.0\.0"/);
  });

  describe("the params that name counters, read together", () => {
    const withParams = (values: Record<string, string>) =>
      brokenCopy((d) =>
        edit(join(d, "functions", ".env"), (t) => Object.entries(values).reduce((text, [name, value]) => text.replace(new RegExp(`^${name}=.*$`, "m"), `${name}=${value}`), t)),
      );

    it("fails on a window mirrored of ids that WINDOWED_COUNTERS does not make windowed (a letter short), naming the rule, the fix and the near pattern", async () => {
      const dir = withParams({ WINDOWED_COUNTERS: "post-{id}-view", MIRRORS: "post-{id}-views=posts/{id}:views7d@last7Days" });
      const check = only(await preflight(dir), "id patterns");
      expect(check.status).toBe("fail");
      expect(check.message).toContain(
        'MIRRORS: rule 1 "post-{id}-views=posts/{id}:views7d@last7Days" mirrors the window @last7Days of post-{id}-views, but WINDOWED_COUNTERS (post-{id}-view) ' +
          "does not make every such id windowed: on a counter that is not windowed the field is never written. Add post-{id}-views to WINDOWED_COUNTERS (it has post-{id}-view, one character away: a typo?)",
      );
      expect(check.message).toMatch(/fix it in functions\/\.env or functions\/\.env\.demo-counter$/);
    });

    it("passes a window mirrored of windowed ids, and a total's mirror of any id", async () => {
      const dir = withParams({ WINDOWED_COUNTERS: "post-{id}-views", MIRRORS: "post-{id}-views=posts/{id}:views7d@last7Days,post-{id}-likes=posts/{id}:likeCount" });
      expect(only(await preflight(dir), "id patterns").status).toBe("ok");
    });

    it("warns when the likes counters mirrored and created by AUTO_CREATE are one letter away from UNIQUE_COUNTERS's pattern", async () => {
      const dir = withParams({ UNIQUE_COUNTERS: "post-{id}-like", MIRRORS: "post-{id}-likes=posts/{id}:likeCount", AUTO_CREATE: "post-{id}-likes=posts/{id}" });
      const results = await preflight(dir);
      expect(failures(results)).toEqual([]);
      const check = only(results, "id patterns");
      expect(check.status).toBe("warn");
      expect(check.message).toContain(
        "MIRRORS names post-{id}-likes, one character away from UNIQUE_COUNTERS's post-{id}-like: a typo? Counters such as post-1-likes are not unique by UNIQUE_COUNTERS",
      );
      expect(check.message).toContain("AUTO_CREATE names post-{id}-likes, one character away from UNIQUE_COUNTERS's post-{id}-like");
    });

    it("says nothing when every pattern is where it belongs", async () => {
      const dir = withParams({
        UNIQUE_COUNTERS: "post-{id}-likes",
        WINDOWED_COUNTERS: "post-{id}-views",
        COUNTER_KINDS: "post-{id}-views=shards:3;maxDelta:1",
        MIRRORS: "post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:views7d@last7Days",
        AUTO_CREATE: "post-{id}-likes=posts/{id},post-{id}-views=posts/{id}",
      });
      const results = await preflight(dir);
      expect(results.filter((r) => r.status !== "ok")).toEqual([]);
    });
  });

  describe("an app codebase that imports the admin entry", () => {
    /** The fixture app with the counters added, its own codebase depending on the functions package. */
    function appUsingAdmin(appEnv: string): string {
      const app = copyOfFixtureApp();
      addCounters(app);
      edit(join(app, "functions", "package.json"), (t) => t.replace('"firebase-admin"', '"@firestore-exact-counter/functions": "^0.1.0",\n    "firebase-admin"'));
      edit(join(app, COUNTERS_SOURCE, ".env"), (t) => t.replace(/^UNIQUE_COUNTERS=.*$/m, "UNIQUE_COUNTERS=post-{id}-likes"));
      writeFileSync(join(app, "functions", ".env"), appEnv);
      return app;
    }

    async function adminCheck(app: string): Promise<CheckResult> {
      return only(await runPreflight({ projectDir: app, projectId: APP_PROJECT, now: TODAY, firestoreHost: "", predeploy: true }), "admin settings");
    }

    it("fails when its .env lacks a value the counters codebase sets, naming the param, both values and both files", async () => {
      const check = await adminCheck(appUsingAdmin("MAX_DELTA=1000\n"));
      expect(check.status).toBe("fail");
      expect(check.message).toContain('UNIQUE_COUNTERS is "" for codebase "default" (functions/.env) but "post-{id}-likes" for the counters');
      expect(check.message).toContain("Give it the counters' values (counters/.env, counters/.env.demo-existing-app) in its own .env files");
    });

    it("passes when it gives the counters' params the counters' values", async () => {
      const check = await adminCheck(appUsingAdmin("UNIQUE_COUNTERS=post-{id}-likes\n"));
      expect(check).toEqual({ check: "admin settings", status: "ok", message: 'codebase "default" uses the admin entry with the counters\' values of 14 params' });
    });
  });
});

describe("preflight of EXTENSION_COUNTERS (docs/from-the-extension.md)", () => {
  const RULE = "pages/{id}:visits=page-{id}-visits";
  /** A copy whose functions/.env sets the params, as `firebase deploy` would read them. */
  const withParams = (params: Record<string, string>) =>
    brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => Object.entries(params).reduce((text, [name, value]) => text.replace(new RegExp(`^${name}=.*$`, "m"), `${name}=${value}`), t)));

  it("deploys foldExtensionShards exactly while EXTENSION_COUNTERS is set, loaded as firebase-tools loads the code for a deploy", async () => {
    // DOCUMENT_COUNTERS emptied: the repository's own (the example feed's) would add its trigger to the count.
    const results = await preflight(withParams({ EXTENSION_COUNTERS: RULE, MIRRORS: "page-{id}-visits=pages/{id}:visits", DOCUMENT_COUNTERS: "" }));
    expect(failures(results)).toEqual([]);
    expect(only(results, "extension")).toEqual({
      check: "extension",
      status: "ok",
      message: "EXTENSION_COUNTERS: foldExtensionShards folds old clients' writes of pages/{id}:visits -> page-{id}-visits",
    });
    // This repository's LEADERBOARDS deploys rollupBoard too, listed after the fold trigger.
    expect(only(results, "manifest").message).toMatch(/^12 v2 endpoints.*; foldExtensionShards on google\.cloud\.firestore\.document\.v1\.written \{collection\}\/\{document\}\/_counter_shards_\/\{shardId\}, retry on; rollupBoard on .*, retry on$/);
    expect(only(results, "codebase").message).toContain(`deploys the ${CALLABLES.length + 6} functions`);
    expect(only(await preflight(REPO_ROOT), "extension").message).toBe("EXTENSION_COUNTERS is empty: foldExtensionShards is not deployed");
  });

  it("warns when no MIRRORS rule writes the counters back into the field they take over", async () => {
    const check = only(await preflight(withParams({ EXTENSION_COUNTERS: RULE })), "extension");
    expect(check.status).toBe("warn");
    expect(check.message).toContain("screens that read the field stop moving (add page-{id}-visits=pages/{id}:visits to MIRRORS in functions/.env or functions/.env.demo-counter)");
  });

  it.each<[string, Record<string, string>, string]>([
    ["a rule that does not parse", { EXTENSION_COUNTERS: "pages/{id}=page-{id}" }, 'EXTENSION_COUNTERS: rule 1 "pages/{id}=page-{id}" has no ":" between the document path and the field'],
    ["documents the trigger cannot serve", { EXTENSION_COUNTERS: "sites/a/pages/{id}:visits=p-{id}" }, "the fold trigger serves documents of top-level collections (collection/document) only"],
    ["counters UNIQUE_COUNTERS reserves", { EXTENSION_COUNTERS: RULE, UNIQUE_COUNTERS: "page-{id}-visits" }, "moves amounts into counters that UNIQUE_COUNTERS reserves for unique counters"],
  ])("fails on %s, naming it", async (_what, params, message) => {
    const check = only(await preflight(withParams(params)), "extension");
    expect(check.status).toBe("fail");
    expect(check.message).toContain(message);
  });
});

describe("preflight of DOCUMENT_COUNTERS (docs/documents.md)", () => {
  const RULES = "posts/{post}/comments/{comment}=post-{post}-comments,posts/{p}/comments/{c}[status==published]=post-{p}-published,products/{p}/ratings/{r}:stars=product-{p}-stars";
  const withParams = (params: Record<string, string>) =>
    brokenCopy((d) => edit(join(d, "functions", ".env"), (t) => Object.entries(params).reduce((text, [name, value]) => text.replace(new RegExp(`^${name}=.*$`, "m"), `${name}=${value}`), t)));

  it("deploys one trigger per pattern, under the names it shows, loaded as firebase-tools loads the code for a deploy", async () => {
    const results = await preflight(withParams({ DOCUMENT_COUNTERS: RULES }));
    expect(failures(results)).toEqual([]);
    const triggers = documentTriggers(parseDocumentCounterRules("DOCUMENT_COUNTERS", RULES));
    expect(triggers.map((t) => t.id)).toEqual(["documentCounters-posts_comments_0a61rcx", "documentCounters-products_ratings_0a7poek"]);
    expect(only(results, "document counters")).toEqual({
      check: "document counters",
      status: "ok",
      message:
        "DOCUMENT_COUNTERS deploys 2 triggers: documentCounters-posts_comments_0a61rcx on posts/{d1}/comments/{d2} (post-{post}-comments counts posts/{post}/comments/{comment}; " +
        "post-{p}-published counts posts/{p}/comments/{c} while [status==published]), documentCounters-products_ratings_0a7poek on products/{d1}/ratings/{d2} (product-{p}-stars sums stars of products/{p}/ratings/{r})",
    });
    expect(only(results, "manifest").message).toMatch(
      /^13 v2 endpoints.*; rollupBoard on .*, retry on; documentCounters-posts_comments_0a61rcx on google\.cloud\.firestore\.document\.v1\.written posts\/\{d1\}\/comments\/\{d2\}, retry on; documentCounters-products_ratings_0a7poek on .*, retry on$/,
    );
    expect(only(results, "codebase").message).toContain(`deploys the ${CALLABLES.length + 7} functions`);
    expect(only(await preflight(withParams({ DOCUMENT_COUNTERS: "" })), "document counters").message).toBe("DOCUMENT_COUNTERS is empty: no document trigger is deployed");
  });

  it.each<[string, Record<string, string>, string]>([
    ["a rule that does not parse", { DOCUMENT_COUNTERS: "posts/{post}=post-{post}" }, 'DOCUMENT_COUNTERS: rule 1 "posts/{post}=post-{post}" uses {post}, the document\'s own id'],
    ["a counter two rules name", { DOCUMENT_COUNTERS: "posts/{p}/comments/{c}=c-{p},videos/{v}/comments/{c}=c-{v}" }, "DOCUMENT_COUNTERS: rule 2"],
    ["counters UNIQUE_COUNTERS reserves", { DOCUMENT_COUNTERS: RULES, UNIQUE_COUNTERS: "post-{id}-comments" }, "UNIQUE_COUNTERS's \"post-{id}-comments\" also names"],
    ["counters AUTO_CREATE creates", { DOCUMENT_COUNTERS: RULES, AUTO_CREATE: "product-{id}-stars=products/{id}" }, "AUTO_CREATE's \"product-{id}-stars=products/{id}\" also names"],
  ])("fails on %s, naming it", async (_what, params, message) => {
    const check = only(await preflight(withParams(params)), "document counters");
    expect(check.status).toBe("fail");
    expect(check.message).toContain(message);
  });

  it("blames a DOCUMENT_COUNTERS that does not parse, not the build, when the functions do not load", async () => {
    const results = await preflight(withParams({ DOCUMENT_COUNTERS: "posts/{post}=post-{post}" }));
    const discovery = only(results, "discovery");
    expect(discovery.status).toBe("fail");
    expect(discovery.message).toContain('DOCUMENT_COUNTERS does not parse, and the functions refuse to load with it: the "document counters" check below names the rule; fix it in functions/.env or functions/.env.demo-counter');
    expect(discovery.message).not.toContain("npm run build");
  });

  it("warns of a mirror onto documents a rule's trigger watches: one more invocation per commit of the total, and how to avoid it", async () => {
    const check = only(await preflight(withParams({ DOCUMENT_COUNTERS: "posts/{p}[published==true]=published-posts", MIRRORS: "post-{id}-comments=posts/{id}:commentCount" })), "document counters");
    const trigger = documentTriggers(parseDocumentCounterRules("DOCUMENT_COUNTERS", "posts/{p}[published==true]=published-posts"))[0]!.id;
    expect(check.status).toBe("warn");
    expect(check.message).toContain(
      `MIRRORS rule "post-{id}-comments=posts/{id}:commentCount" writes posts/{id}, which DOCUMENT_COUNTERS rule 1 "posts/{p}[published==true]=published-posts" watches: ` +
        `every commit of that counter's total invokes ${trigger} once more (up to one per ROLLUP_INTERVAL_MS, 1000 ms, while the counter moves: up to 86,400 invocations a day per counter)`,
    );
    expect(check.message).toContain("a field its conditions do not read invokes it all the same");
    expect(check.message).toContain("mirror into a document no rule watches");
  });

  it("fails when the index file would let nothing a deleted document leaves behind expire", async () => {
    const dir = withParams({ DOCUMENT_COUNTERS: RULES });
    edit(join(dir, "firestore.indexes.json"), (t) => JSON.stringify({ ...JSON.parse(t), fieldOverrides: (JSON.parse(t) as { fieldOverrides: { collectionGroup: string }[] }).fieldOverrides.filter((o) => o.collectionGroup !== "exactCounterDocuments") }));
    const check = only(await preflight(dir), "indexes");
    expect(check.status).toBe("fail");
    expect(check.message).toContain("has no TTL override on exactCounterDocuments.expireAt");
  });
});
