// docs/existing-app.md followed end to end on a fixture app (scripts/test/fixtures/existing-app: its own
// `default` codebase with a plain-JS callable, its own rules for posts and its own composite index): our
// functions/ copied in as codebase `counters`, firebase.json, rules and indexes merged (helpers/
// existing-app.ts). Then what the guide promises: the copy builds on its own, check-rules and the
// preflight pass on the merged project, and one emulator run of the merged firebase.json serves both
// codebases: the app's function still works and the counters count.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EMULATORS, emulatorEnv, firebaseBin, shellQuote } from "../lib/firebase-cli";
import { CALLABLES, runPreflight, type CheckResult } from "../lib/preflight";
import { requireEmulators } from "../../functions/test/helpers/emulators";
import { REQUESTS } from "../../functions/src/counters/paths";
import {
  APP_PROJECT,
  COUNTERS_SOURCE,
  PORT_OFFSET,
  addCounters,
  copyOfFixtureApp,
  removeCopies,
  useOffsetEmulators,
} from "./helpers/existing-app";
import type { ProbeResult } from "./helpers/existing-app-probe";
import { run, runNode, runScript, stopAll, type Run } from "./helpers/run";

const OUR_FUNCTIONS = CALLABLES.length + 3; // and rollupTotal, rollupSweep, cleanupDeletedCounter

let app: string;
let build: Run;

jest.setTimeout(300_000);

beforeAll(async () => {
  await requireEmulators();
  app = copyOfFixtureApp();
  addCounters(app);
  // What the deploy's predeploy step runs in the copied folder (firebase.json of the repository).
  build = await run("npm", ["--prefix", join(app, COUNTERS_SOURCE), "run", "--silent", "build"]);
});

afterAll(() => {
  stopAll();
  removeCopies();
});

function failures(results: CheckResult[]): CheckResult[] {
  return results.filter((r) => r.status === "fail");
}

describe("adding the counters to an existing app (docs/existing-app.md)", () => {
  it("leaves the app's codebase, rules and index in place next to ours", () => {
    const firebaseJson = JSON.parse(readFileSync(join(app, "firebase.json"), "utf8")) as { functions: { source: string; codebase: string }[] };
    expect(firebaseJson.functions.map((f) => [f.codebase, f.source])).toEqual([
      ["default", "functions"],
      ["counters", COUNTERS_SOURCE],
    ]);
    const rules = readFileSync(join(app, "firestore.rules"), "utf8");
    expect(rules).toContain("match /posts/{postId} {");
    expect(rules).toContain("// BEGIN firestore-exact-counter rules");
    const indexes = JSON.parse(readFileSync(join(app, "firestore.indexes.json"), "utf8")) as {
      indexes: { collectionGroup: string }[];
      fieldOverrides: { collectionGroup: string; fieldPath: string; ttl?: boolean }[];
    };
    expect(indexes.indexes.map((i) => i.collectionGroup)).toContain("posts");
    expect(indexes.fieldOverrides).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ collectionGroup: "posts", fieldPath: "body" }),
        expect.objectContaining({ collectionGroup: REQUESTS, fieldPath: "expireAt", ttl: true }),
      ]),
    );
  });

  it("the copied functions folder builds on its own, as the deploy's predeploy step builds it", () => {
    expect(build.stderr + build.stdout).toBe("");
    expect(build.code).toBe(0);
    expect(existsSync(join(app, COUNTERS_SOURCE, "lib", "index.js"))).toBe(true);
  });

  it("check-rules passes on the app's rules with our block pasted in", async () => {
    const run = await runScript("check-rules", [join(app, "firestore.rules")]);
    expect(run.stdout).toMatch(/check-rules: all \d+ guarantees hold/);
    expect(run.code).toBe(0);
  });

  it("the preflight passes on the merged project and finds our codebase among the app's", async () => {
    const run = await runScript("preflight", ["--dir", app, "--project", APP_PROJECT]);
    expect(run.stdout).toMatch(
      new RegExp(`ok {3}codebase +firebase deploy --only functions:counters deploys the ${OUR_FUNCTIONS} functions of codebase "counters"; no function name in common with codebase "default" \\(1 function\\)\n`),
    );
    expect(run.stdout).toMatch(/ok {3}params +all \d+ params have a value for demo-existing-app \(counters\/\.env, \.env\.demo-existing-app\)/);
    expect(run.stdout).toContain("preflight: passed");
    expect(run.code).toBe(0);
  });

  it("the preflight fails when an app function has the name of one of ours, and warns when --only would deploy an app function too", async () => {
    const preflight = (projectDir: string) =>
      runPreflight({ projectDir, projectId: APP_PROJECT, now: new Date(), firestoreHost: process.env.FIRESTORE_EMULATOR_HOST! });
    const clash = appWithFunction("exports.createCounter = exports.publishPost;");
    expect(await preflight(clash)).toContainEqual({
      check: "codebase",
      status: "fail",
      message: expect.stringContaining("More than one codebase claims following functions: projects/demo-existing-app/locations/us-central1/functions/createCounter: counters,default") as string,
    });

    const group = appWithFunction("exports.counters = { sync: exports.publishPost };");
    const results = await preflight(group);
    expect(failures(results)).toEqual([]);
    expect(results).toContainEqual({
      check: "codebase",
      status: "warn",
      message: expect.stringContaining('would also deploy counters-sync of codebase "default" (a function id starting with "counters" matches the selector too)') as string,
    });
  });

  it("runs both codebases in one emulator run of the merged firebase.json: the app's function works and the counters count", async () => {
    useOffsetEmulators(app);
    const probe = ["node", "--import", "tsx", join(__dirname, "helpers", "existing-app-probe.ts")].map(shellQuote).join(" ");
    const args = [firebaseBin(), "emulators:exec", "--project", APP_PROJECT, "--only", EMULATORS, "--log-verbosity", "QUIET", probe];
    const run = await runNode(args, { cwd: app, env: emulatorEnv(withoutOuterEmulators(process.env)) });
    const output = `${run.stdout}\n${run.stderr}`;
    const line = /^PROBE (.*)$/m.exec(run.stdout);
    if (run.code !== 0 || line === null) throw new Error(`emulators:exec of the merged app (ports +${PORT_OFFSET}) failed (code ${run.code}):\n${output}`);
    const result = JSON.parse(line[1]!) as ProbeResult;
    expect(result.projectId).toBe(APP_PROJECT);
    expect(result.post).toMatchObject({ title: "Hello", authorIsCaller: true });
    expect(result.counter).toMatchObject({
      created: { counterId: `post-${result.post.postId}-likes`, numShards: 2 },
      applied: [true, true, true],
      total: 3,
      numShards: 2,
    });
  });
});

/** Another copy of the app with the counters added (prebuilt), whose own index.js also runs `code`. */
function appWithFunction(code: string): string {
  const dir = copyOfFixtureApp();
  addCounters(dir, true);
  const index = join(dir, "functions", "index.js");
  writeFileSync(index, `${readFileSync(index, "utf8")}\n${code}\n`);
  return dir;
}

/** The suite's own emulator addresses, which the nested run must not inherit (it has its own). */
function withoutOuterEmulators(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const outer = /(_EMULATOR_HOST|_EMULATOR_ADDRESS|^FIREBASE_EMULATOR_HUB|^GCLOUD_PROJECT|^FIREBASE_CONFIG)$/;
  return Object.fromEntries(Object.entries(env).filter(([key]) => !outer.test(key)));
}
