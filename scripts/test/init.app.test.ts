// `firestore-exact-counter init` as a user runs it on an existing project, everything installed from the
// packed tarballs: the fixture app (fixtures/existing-app: its own `default` codebase publishing posts,
// rules for posts, a composite index) with its dependencies and its own firebase-tools, then `npx
// <cli tarball> init`, which copies the tarballs into the new codebase, writes the files and runs npm
// install there. The tarballs travel with the app: a copy of it elsewhere, and what firebase deploy
// uploads of the codebase, install with npm ci. Then: a second run
// changes nothing; one emulator run of the app serves both codebases side by side (the app's callable
// publishes posts, a counter counts); the app's rules allow and deny exactly what they did; the
// codebase's preflight runs from its folder, and stops an offline deploy whose params the functions would
// refuse. (Every refusal and option, from the sources: cli/test/init.emulator.test.ts.)
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { initializeTestEnvironment } from "@firebase/rules-unit-testing";
import { doc, getDoc, setDoc, deleteDoc, setLogLevel, type Firestore } from "firebase/firestore";
import { randomUUID } from "node:crypto";
import { breakLimits, expectStoppedAtPredeploy, offlineDeploy } from "../../test/helpers/offline-deploy";
import { firestoreHost, requireEmulators } from "../../test/helpers/emulators";
import { freshApp, linkFirebaseTools, npmInstall, probeApp, removeApp, useOwnEmulators, withoutOuterEmulators, type ProbeRun } from "../../test/helpers/fresh-apps";
import { npm, packedTarballs, type Tarballs } from "../../test/helpers/packed";
import { run, stopAll, type Run } from "../../test/helpers/run";
import { snapshot } from "../../test/helpers/tree";

jest.setTimeout(900_000);

const PROJECT = "demo-existing-app";

let tarballs: Tarballs;
let app: string;
let firebase: string;
let original: Record<string, string>;
let first: Run;

/** `npx <cli tarball> init` in the app folder, as the README says, in a user's shell (none of the suite's emulators). */
function init(...args: string[]): Promise<Run> {
  return npm(["exec", "--yes", "--prefer-offline", "--package", tarballs.cli, "--", "firestore-exact-counter", "init", "--functions-package", tarballs.functions, "--cli-package", tarballs.cli, ...args], app, {
    ...withoutOuterEmulators(),
    npm_config_prefer_offline: "true",
  });
}

/** The CLI as the codebase has it installed (its devDependency), run from the codebase folder. */
function codebaseCli(args: string[], env: NodeJS.ProcessEnv = withoutOuterEmulators()): Promise<Run> {
  return run(join(app, "counters", "node_modules", ".bin", "firestore-exact-counter"), args, { cwd: join(app, "counters"), env });
}

beforeAll(async () => {
  tarballs = await packedTarballs();
  app = freshApp("existing-app");
  await npmInstall(join(app, "functions"));
  firebase = linkFirebaseTools(app);
  original = snapshot(app);
  first = await init();
});

afterAll(() => {
  stopAll();
  removeApp(app);
});

describe("firestore-exact-counter init on an existing project, installed from the packed tarballs", () => {
  it("adds the codebase, firebase.json's entry, the rules and the indexes, installs, and says what it changed", () => {
    expect(first.code).toBe(0);
    for (const line of [
      "copy counters/functions.tgz",
      "copy counters/cli.tgz",
      "create counters/package.json",
      "create counters/index.js",
      "create counters/.env",
      "change firebase.json",
      "change firestore.rules",
      "change firestore.indexes.json",
    ]) {
      expect(first.stdout).toContain(`  ${line}: `);
    }
    expect(first.stdout).toContain('  function names: none in common with codebase "default" (1 function)');
    expect(first.stdout).toMatch(/^ {2}check-rules: all 18 guarantees hold/m);
    expect(first.stdout).toContain("init: npm install in counters/");
    expect(first.stdout).toContain("init: done");
    // npm installed the package, its peers once, and the CLI, in the codebase folder.
    const installed = (name: string) => (JSON.parse(readFileSync(join(app, "counters", "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
    expect(installed("@firestore-exact-counter/functions")).toBe("0.2.0");
    expect(installed("@firestore-exact-counter/cli")).toBe("0.2.0");
    expect(installed("firebase-functions")).toMatch(/^7\./);
    expect(installed("firebase-admin")).toMatch(/^14\./);
    expect(existsSync(join(app, "counters", "node_modules", "@firestore-exact-counter", "functions", "node_modules", "firebase-functions"))).toBe(false);
    // No firebase-tools in the deployed codebase: the CLI's is an optional peer, the app's own.
    expect(existsSync(join(app, "counters", "node_modules", "firebase-tools"))).toBe(false);
  });

  it("touches nothing else of the app's", () => {
    const now = snapshot(app);
    const changed = Object.keys(now).filter((path) => now[path] !== original[path]).sort();
    expect(changed).toEqual([
      "counters/.env",
      "counters/.gitignore",
      "counters/cli.tgz",
      "counters/functions.tgz",
      "counters/index.js",
      "counters/package-lock.json",
      "counters/package.json",
      "firebase.json",
      "firestore.indexes.json",
      "firestore.rules",
    ]);
    expect(Object.keys(original).filter((path) => !(path in now))).toEqual([]);
  });

  it("copies the tarballs into the codebase folder and names them by relative paths, in package.json and its lock", () => {
    const pkg = JSON.parse(readFileSync(join(app, "counters", "package.json"), "utf8")) as Record<string, Record<string, string>>;
    expect(pkg.dependencies!["@firestore-exact-counter/functions"]).toBe("file:./functions.tgz");
    expect(pkg.devDependencies!["@firestore-exact-counter/cli"]).toBe("file:./cli.tgz");
    for (const name of ["functions", "cli"] as const) expect(readFileSync(join(app, "counters", `${name}.tgz`)).equals(readFileSync(tarballs[name]))).toBe(true);
    const lock = readFileSync(join(app, "counters", "package-lock.json"), "utf8");
    expect(lock).toContain('"resolved": "file:functions.tgz"');
    expect(lock).not.toContain(dirname(tarballs.functions));
  });

  it("installs with npm ci in a copy of the app in another folder, as a clone of its repository has it (no node_modules)", async () => {
    const clone = join(mkdtempSync(join(tmpdir(), "counter-app-clone-")), "app");
    try {
      cpSync(app, clone, { recursive: true, filter: (path) => basename(path) !== "node_modules" });
      const installed = await npm(["ci", "--prefer-offline", "--no-audit", "--no-fund"], join(clone, "counters"));
      expect({ code: installed.code, errors: installed.stderr.split("\n").filter((line) => line.startsWith("npm error")) }).toEqual({ code: 0, errors: [] });
      const version = (name: string) => (JSON.parse(readFileSync(join(clone, "counters", "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
      expect([version("@firestore-exact-counter/functions"), version("@firestore-exact-counter/cli")]).toEqual(["0.2.0", "0.2.0"]);
    } finally {
      rmSync(join(clone, ".."), { recursive: true, force: true });
    }
  });

  it("installs with npm ci from what firebase deploy uploads of the codebase (its folder alone, packed by firebase-tools' own code)", async () => {
    const entry = (JSON.parse(readFileSync(join(app, "firebase.json"), "utf8")) as { functions: { codebase?: string; ignore?: string[] }[] }).functions.find((e) => e.codebase === "counters")!;
    const tools = createRequire(join(app, "node_modules", "firebase-tools", "package.json"));
    const { prepareFunctionsUpload } = tools("./lib/deploy/functions/prepareFunctionsUpload") as { prepareFunctionsUpload: (dir: string, config: unknown) => Promise<{ pathToSource: string }> };
    const upload = await prepareFunctionsUpload(join(app, "counters"), { ...entry, ignore: [...(entry.ignore ?? [])] });
    const built = mkdtempSync(join(tmpdir(), "counter-app-upload-"));
    try {
      expect((await run("unzip", ["-q", upload.pathToSource, "-d", built])).code).toBe(0);
      expect(readdirSync(built).sort()).toEqual([".env", ".gitignore", "cli.tgz", "functions.tgz", "index.js", "package-lock.json", "package.json"]);
      const installed = await npm(["ci", "--prefer-offline", "--no-audit", "--no-fund"], built);
      expect({ code: installed.code, errors: installed.stderr.split("\n").filter((line) => line.startsWith("npm error")) }).toEqual({ code: 0, errors: [] });
      expect(existsSync(join(built, "node_modules", "@firestore-exact-counter", "functions", "lib", "index.js"))).toBe(true);
    } finally {
      rmSync(built, { recursive: true, force: true });
      rmSync(upload.pathToSource, { force: true });
    }
  });

  it("changes nothing when run again (with the CLI the codebase installed), byte for byte", async () => {
    const before = snapshot(app);
    const again = await codebaseCli(["init", "--dir", app, "--functions-package", tarballs.functions, "--cli-package", tarballs.cli]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("init: nothing to change");
    expect(again.stdout).not.toContain("npm install");
    expect(snapshot(app)).toEqual(before);
  });

  it("runs the codebase's preflight from the codebase folder, with the app's firebase-tools: it finds the project and passes", async () => {
    const env = { ...withoutOuterEmulators(), FIRESTORE_EMULATOR_HOST: firestoreHost() };
    const preflight = await npm(["run", "preflight", "--", "--project", PROJECT], join(app, "counters"), env);
    expect(preflight.stdout).toContain(`preflight: ${app} for project ${PROJECT}`);
    expect(preflight.stdout).toMatch(/ok {3}codebase +firebase deploy --only functions:counters deploys the 10 functions of codebase "counters"; no function name in common with codebase "default" \(1 function\)/);
    expect(preflight.stdout).toContain("preflight: passed");
    expect(preflight.code).toBe(0);
  });

  let served: ProbeRun;
  it("serves both codebases in one emulator run, with the emulator the codebase's CLI names: the app's callable still publishes posts, and the counters count", async () => {
    await useOwnEmulators(app);
    const jar = await codebaseCli(["firestore-jar"]);
    expect({ code: jar.code, stderr: jar.stderr }).toEqual({ code: 0, stderr: "" });
    served = await probeApp(app, firebase, PROJECT, { FIRESTORE_EMULATOR_BINARY_PATH: jar.stdout.trim(), PROBE_APP_CALLABLE: "publishPost@us-central1", PROBE_CREATOR: "admin" });
    expect(served.probe.projectId).toBe(PROJECT);
    expect(served.probe.post).toEqual({ title: "Hello", authorIsCaller: true });
    expect(served.probe.counter).toMatchObject({ created: { numShards: 2 }, applied: [true, true, true], total: 3, numShards: 2 });
  });

  it("says what to install, in one line with exit 2, where the project has no firebase-tools (the CLI never brings its own)", async () => {
    // The app's firebase-tools set aside, and an empty global npm install: none anywhere the CLI looks.
    const tools = join(app, "node_modules", "firebase-tools");
    renameSync(tools, `${tools}.aside`);
    try {
      const env = { ...withoutOuterEmulators(), npm_config_prefix: join(app, "..", "no-global") };
      const preflight = await codebaseCli(["preflight", "--project", PROJECT], env);
      expect({ code: preflight.code, stderr: preflight.stderr }).toEqual({
        code: 2,
        stderr: `preflight: firebase-tools is not installed for ${app}: install it in the project (npm install --save-dev firebase-tools@14.27.0) or globally (npm install --global firebase-tools), then run this again\n`,
      });
    } finally {
      renameSync(`${tools}.aside`, tools);
    }
  });

  it("stops an offline deploy whose params the functions would refuse at the codebase's predeploy preflight", async () => {
    breakLimits(join(app, "counters"), PROJECT);
    try {
      expectStoppedAtPredeploy(await offlineDeploy(firebase, app, PROJECT, withoutOuterEmulators()));
    } finally {
      rmSync(join(app, "counters", `.env.${PROJECT}`));
    }
  });
});

/** The app's own requests on its posts: what its rules allowed and denied before the counters came. */
interface PostRequest {
  name: string;
  as: string | null;
  run: (db: Firestore, postId: string) => Promise<unknown>;
}

const POST_REQUESTS: PostRequest[] = [
  { name: "anyone gets a post", as: null, run: (db, id) => getDoc(doc(db, "posts", id)) },
  { name: "a signed-in user gets a post", as: "bob", run: (db, id) => getDoc(doc(db, "posts", id)) },
  { name: "the author creates a post of their own", as: "alice", run: (db) => setDoc(doc(db, "posts", randomUUID()), { authorId: "alice", title: "t" }) },
  { name: "a user creates a post in another's name", as: "bob", run: (db) => setDoc(doc(db, "posts", randomUUID()), { authorId: "alice", title: "t" }) },
  { name: "signed out, creates a post", as: null, run: (db) => setDoc(doc(db, "posts", randomUUID()), { authorId: "alice", title: "t" }) },
  { name: "the author updates their post", as: "alice", run: (db, id) => setDoc(doc(db, "posts", id), { authorId: "alice", title: "u" }) },
  { name: "another user updates it", as: "bob", run: (db, id) => setDoc(doc(db, "posts", id), { authorId: "bob", title: "u" }) },
  { name: "another user deletes it", as: "bob", run: (db, id) => deleteDoc(doc(db, "posts", id)) },
  { name: "the author deletes it", as: "alice", run: (db, id) => deleteDoc(doc(db, "posts", id)) },
  { name: "a user writes a document of no collection the rules name", as: "alice", run: (db) => setDoc(doc(db, "profiles", "alice"), { name: "A" }) },
];

/** Each request's outcome under `rules`, each on a post of alice's seeded for it. */
async function outcomes(rules: string): Promise<Record<string, "allowed" | "denied">> {
  // A denied request is an answer here, not a problem: keep the SDK from logging each one.
  setLogLevel("silent");
  const [host, port] = firestoreHost().split(":") as [string, string];
  const env = await initializeTestEnvironment({ projectId: `demo-app-rules-${randomUUID().slice(0, 8)}`, firestore: { rules, host, port: Number(port) } });
  try {
    const result: Record<string, "allowed" | "denied"> = {};
    for (const request of POST_REQUESTS) {
      const postId = randomUUID();
      await env.withSecurityRulesDisabled((context) => setDoc(doc(context.firestore() as unknown as Firestore, "posts", postId), { authorId: "alice", title: "seeded" }));
      const context = request.as === null ? env.unauthenticatedContext() : env.authenticatedContext(request.as);
      try {
        await request.run(context.firestore() as unknown as Firestore, postId);
        result[request.name] = "allowed";
      } catch (error) {
        if ((error as { code?: string }).code !== "permission-denied") throw error;
        result[request.name] = "denied";
      }
    }
    return result;
  } finally {
    await env.cleanup();
  }
}

describe("the app's rules after init", () => {
  beforeAll(() => requireEmulators());

  it("allow and deny the app's own requests exactly as before", async () => {
    const before = await outcomes(original["firestore.rules"]!);
    const after = await outcomes(readFileSync(join(app, "firestore.rules"), "utf8"));
    expect(after).toEqual(before);
    // The table exercises both answers: it would notice a rule that opened or closed something.
    expect(new Set(Object.values(before))).toEqual(new Set(["allowed", "denied"]));
  });
});
