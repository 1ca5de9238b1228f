// docs/existing-app.md followed end to end on a fixture app (scripts/test/fixtures/existing-app: its own
// `default` codebase with a plain-JS callable, its own rules for posts and its own composite index). The
// guide's shell commands run as it writes them, only the two folders' paths put in: step 1 (cp, rm, a
// real npm install), step 5 (check-rules, the build, the preflight, whose output must contain the lines
// the guide shows) and "try it locally" (the installed Firestore emulator through npm run firestore-jar,
// no download). firebase.json, rules and indexes are merged by code (helpers/existing-app.ts). Then: one
// emulator run of the merged firebase.json serves both codebases, the app's function still works and
// the counters count.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EMULATORS, emulatorEnv, firebaseBin, REPO_ROOT, shellQuote } from "../lib/firebase-cli";
import { CALLABLES, runPreflight, type CheckResult } from "../lib/preflight";
import { requireEmulators } from "../../functions/test/helpers/emulators";
import { REQUESTS } from "../../functions/src/counters/paths";
import {
  APP_PROJECT,
  COUNTERS_SOURCE,
  PORT_OFFSET,
  addCounters,
  codeBlocks,
  commandsOf,
  copyOfFixtureApp,
  guideSection,
  mergeCounters,
  removeCopies,
  useOffsetEmulators,
} from "./helpers/existing-app";
import type { ProbeResult } from "./helpers/existing-app-probe";
import { run, runNode, stopAll, type Run } from "./helpers/run";

const OUR_FUNCTIONS = CALLABLES.length + 4; // and rollupTotal, rollupSweep, rollupWindows, cleanupDeletedCounter

let app: string;
let step1: Run[];
/** What step 1 left of what it removes (before step 5 builds lib/ again). */
let leftAfterStep1: string[];
let step5: Run[];
let build: Run;

jest.setTimeout(420_000);

/** A command of the guide with this run's folders put in for its placeholders. */
function ours(command: string): string {
  return command
    .replaceAll("firestore-exact-counter/", `${REPO_ROOT}/`)
    .replaceAll("../your-app", app)
    .replaceAll("your-app/", `${app}/`)
    .replaceAll("<your-project-id>", APP_PROJECT);
}

/** Runs the guide's commands one by one in a shell (from `cwd`), stopping at the first that fails. */
async function shell(commands: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Run[]> {
  const runs: Run[] = [];
  for (const command of commands) {
    const result = await run("sh", ["-c", ours(command)], { cwd, env });
    runs.push(result);
    if (result.code !== 0) throw new Error(`the guide's command failed (exit ${result.code}): ${command}\n${result.stdout}\n${result.stderr}`);
  }
  return runs;
}

/** The environment of a user's shell: without the suite's emulator addresses (the nested run has its own). */
function withoutOuterEmulators(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const outer = /(_EMULATOR_HOST|_EMULATOR_ADDRESS|^FIREBASE_EMULATOR_HUB|^GCLOUD_PROJECT|^FIREBASE_CONFIG|^FIRESTORE_EMULATOR_BINARY_PATH)$/;
  return Object.fromEntries(Object.entries(env).filter(([key]) => !outer.test(key)));
}

beforeAll(async () => {
  await requireEmulators();
  app = copyOfFixtureApp();
  // Step 1 as written; npm may take what it needs from its cache first (npm ci filled it), as offline
  // machines must.
  step1 = await shell(commandsOf(codeBlocks(guideSection("## 1. Copy"))[0]!), REPO_ROOT, { ...process.env, npm_config_prefer_offline: "true" });
  leftAfterStep1 = ["lib", "test", ".env.local"].filter((name) => existsSync(join(app, COUNTERS_SOURCE, name)));
  mergeCounters(app);
  // Step 5 as written, from this repository's checkout: check-rules, the build (also what the deploy's
  // predeploy runs), the preflight.
  step5 = await shell(commandsOf(codeBlocks(guideSection("## 5. Check"))[0]!), REPO_ROOT);
  build = step5.find((_, i) => commandsOf(codeBlocks(guideSection("## 5. Check"))[0]!)[i]!.includes("run build"))!;
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

  it("step 1's commands copy our functions without what npm and the build make, and install them on their own", () => {
    expect(step1.map((r) => r.code)).toEqual(step1.map(() => 0));
    expect(leftAfterStep1).toEqual([]);
    expect(existsSync(join(app, COUNTERS_SOURCE, ".env"))).toBe(true);
    // A real install in the copied folder (its own node_modules, not a link to this repository's).
    const installed = (name: string) => (JSON.parse(readFileSync(join(app, COUNTERS_SOURCE, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
    expect(installed("firebase-functions")).toMatch(/^7\./);
    expect(installed("firebase-admin")).toMatch(/^14\./);
  });

  it("the copied functions folder builds on its own, as the deploy's predeploy step builds it", () => {
    expect(build.code).toBe(0);
    expect(build.stderr).not.toMatch(/error/i);
    expect(existsSync(join(app, COUNTERS_SOURCE, "lib", "index.js"))).toBe(true);
  });

  it("check-rules passes on the app's rules with our block pasted in, printing the lines the guide shows", () => {
    const checkRules = step5[0]!;
    expect(checkRules.stdout).toMatch(/check-rules: all \d+ guarantees hold/);
    const shown = codeBlocks(guideSection("## 5. Check"))[1]!.split("\n").filter((line) => line.startsWith("  ok") || line.startsWith("  note") || line.startsWith("check-rules: all"));
    expect(shown.length).toBeGreaterThan(10);
    for (const line of shown) expect(checkRules.stdout).toContain(line);
  });

  it("the preflight passes on the merged project, finds our codebase among the app's, and prints the lines the guide shows", () => {
    const preflight = step5.at(-1)!;
    expect(preflight.stdout).toMatch(
      new RegExp(`ok {3}codebase +firebase deploy --only functions:counters deploys the ${OUR_FUNCTIONS} functions of codebase "counters"; no function name in common with codebase "default" \\(1 function\\)\n`),
    );
    const blocks = codeBlocks(guideSection("## 5. Check"));
    const sample = blocks.find((block) => block.includes("ok   params"))!;
    const lines = sample.split("\n").filter((line) => line.trim() !== "" && line.trim() !== "…");
    expect(lines.length).toBe(3);
    for (const line of lines) expect(preflight.stdout).toContain(`${line}\n`);
    expect(preflight.stdout).toContain("preflight: passed");
    expect(preflight.code).toBe(0);
  });

  it("the preflight fails when an app function has the name of one of ours, and deploys no app function of a group named counters", async () => {
    const preflight = (projectDir: string) =>
      runPreflight({ projectDir, projectId: APP_PROJECT, now: new Date(), firestoreHost: process.env.FIRESTORE_EMULATOR_HOST! });
    const clash = appWithFunction("exports.createCounter = exports.publishPost;");
    expect(await preflight(clash)).toContainEqual({
      check: "codebase",
      status: "fail",
      message: expect.stringContaining("More than one codebase claims following functions: projects/demo-existing-app/locations/us-central1/functions/createCounter: counters,default") as string,
    });

    // firebase-tools 14.27 reads functions:counters as the codebase counters when firebase.json has one
    // (14.18 also took it for the function ids counters-… of codebase default, which the preflight warned of).
    const group = appWithFunction("exports.counters = { sync: exports.publishPost };");
    const results = await preflight(group);
    expect(failures(results)).toEqual([]);
    expect(results).toContainEqual({
      check: "codebase",
      status: "ok",
      message: `firebase deploy --only functions:counters deploys the ${OUR_FUNCTIONS} functions of codebase "counters"; no function name in common with codebase "default" (2 functions)`,
    });
  });

  it("runs both codebases in one emulator run of the merged firebase.json, with the installed Firestore emulator as the guide says: the app's function works and the counters count", async () => {
    useOffsetEmulators(app);
    // "Try it locally": the export line, run as written in this checkout by a user's shell.
    const tryIt = commandsOf(codeBlocks(guideSection("## 5. Check")).find((block) => block.includes("FIRESTORE_EMULATOR_BINARY_PATH"))!);
    expect(tryIt).toEqual(['export FIRESTORE_EMULATOR_BINARY_PATH="$(npm run --silent firestore-jar)"', "cd ../your-app", "firebase emulators:start"]);
    const exported = await run("sh", ["-c", `${tryIt[0]!} && printf %s "$FIRESTORE_EMULATOR_BINARY_PATH"`], { cwd: REPO_ROOT, env: withoutOuterEmulators(process.env) });
    expect(exported.code).toBe(0);
    expect(existsSync(exported.stdout)).toBe(true);
    // Then firebase in the app's folder (emulators:exec, to run the probe in it) with that variable alone
    // pointing at the emulator: nothing is downloaded (these machines cannot).
    const env = emulatorEnv(withoutOuterEmulators(process.env));
    env.FIRESTORE_EMULATOR_BINARY_PATH = exported.stdout;
    const probe = ["node", "--import", "tsx", join(__dirname, "helpers", "existing-app-probe.ts")].map(shellQuote).join(" ");
    const args = [firebaseBin(), "emulators:exec", "--project", APP_PROJECT, "--only", EMULATORS, "--log-verbosity", "QUIET", probe];
    const exec = await runNode(args, { cwd: app, env });
    const output = `${exec.stdout}\n${exec.stderr}`;
    const line = /^PROBE (.*)$/m.exec(exec.stdout);
    if (exec.code !== 0 || line === null) throw new Error(`emulators:exec of the merged app (ports +${PORT_OFFSET}) failed (code ${exec.code}):\n${output}`);
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
