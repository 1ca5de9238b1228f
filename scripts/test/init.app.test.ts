// `firestore-exact-counter init` as a user runs it on an existing project, everything installed from the
// packed tarballs: the fixture app (fixtures/existing-app: its own `default` codebase publishing posts,
// rules for posts, a composite index) with its dependencies, its own firebase-tools and its default project
// (.firebaserc), then docs/existing-app.md's tarball command as written, which copies the tarballs into the
// new codebase, writes the files and runs npm install there. The tarballs travel with the app: a copy of
// it elsewhere, and what firebase deploy uploads of the codebase, install with npm ci. Then: a second run
// changes nothing; every other command line of the app pages (README.md, docs/existing-app.md,
// docs/documents.md, docs/from-the-extension.md: test/helpers/doc-commands.ts) runs as written from the
// app's folder: the emulators started with docs/existing-app.md's two lines serve both codebases side by
// side (the app's callable publishes posts, a counter counts, and a burst of increments to several
// counters settles within seconds on init's .env.local), the codebase's CLI and preflight, the deploys
// offline (past their predeploy checks, stopped at the network), and `npx --yes @firestore-exact-counter/cli
// init` against the packages as they will be published (test/helpers/scoped-registry.ts). The app's rules
// allow and deny exactly what they did, and the codebase's preflight stops an offline deploy whose params
// the functions would refuse. (Every refusal and option, from the sources: cli/test/init.emulator.test.ts.)
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { initializeTestEnvironment } from "@firebase/rules-unit-testing";
import { doc, getDoc, setDoc, deleteDoc, setLogLevel, type Firestore } from "firebase/firestore";
import { createHash, randomUUID } from "node:crypto";
import { breakLimits, expectStoppedAtPredeploy, offlineDeploy, offlineEnv } from "../../test/helpers/offline-deploy";
import { APP_COMMANDS } from "../../test/helpers/doc-commands";
import { firestoreHost, requireEmulators } from "../../test/helpers/emulators";
import { freshApp, linkFirebaseTools, npmInstall, probeRunning, removeApp, STARTED_EMULATOR_NAMES, useOwnEmulators, userShellEnv } from "../../test/helpers/fresh-apps";
import { npm, packedTarballs, type Tarballs } from "../../test/helpers/packed";
import { run, start, stopAll, type Run } from "../../test/helpers/run";
import { scopedRegistry } from "../../test/helpers/scoped-registry";
import { GUARANTEES } from "../../cli/src/lib/rules-guarantees";
import { snapshot } from "../../test/helpers/tree";
import type { ProbeResult } from "../../test/helpers/app-probe";

jest.setTimeout(900_000);

const PROJECT = "demo-existing-app";
const VERSION = "0.2.0";
/** The tarballs as `npm pack` names them, in a folder of their own: docs/existing-app.md's /path/to/packs. */
const PACKED = { functions: `firestore-exact-counter-functions-${VERSION}.tgz`, cli: `firestore-exact-counter-cli-${VERSION}.tgz` };

let tarballs: Tarballs;
let app: string;
let packs: string;
let firebase: string;
let original: Record<string, string>;
let first: Run;
/** The documented command lines run so far, as written (APP_COMMANDS' keys). */
const ran = new Set<string>();

/**
 * A command line of the app pages, run as written by bash in the app's folder, with its placeholders filled
 * in, in a user's shell: none of the suite's emulators, npm taking what its cache has.
 */
function asWritten(command: string, { fill = {}, env = {} }: { fill?: Record<string, string>; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  if (APP_COMMANDS[command] !== "run") throw new Error(`not a command of the app pages that the test runs (test/helpers/doc-commands.ts): ${command}`);
  ran.add(command);
  let script = command;
  for (const [placeholder, value] of Object.entries(fill)) script = script.split(placeholder).join(value);
  return run("bash", ["-c", script], { cwd: app, env: { ...userShellEnv(), npm_config_prefer_offline: "true", ...env } });
}

const TARBALL_INIT =
  "npx --yes --package /path/to/packs/firestore-exact-counter-cli-*.tgz firestore-exact-counter init --functions-package /path/to/packs/firestore-exact-counter-functions-*.tgz --cli-package /path/to/packs/firestore-exact-counter-cli-*.tgz";

const EMULATORS_START = ['export FIRESTORE_EMULATOR_BINARY_PATH="$(npx --prefix counters firestore-exact-counter firestore-jar)"', "npx firebase emulators:start"];
/** "Within seconds": a burst settles this long after its last answer at most (its time is printed). */
const SETTLED_WITHIN_MS = 20_000;

/**
 * docs/existing-app.md's "Try it locally" lines as written, in one shell, until firebase says every emulator
 * is ready; then the probe (test/helpers/app-probe.ts) as the app's users, with `env`; then Ctrl-C. What the
 * emulators printed, and what the probe saw.
 */
async function emulatorsAsWritten(env: NodeJS.ProcessEnv): Promise<{ output: string; probe: ProbeResult }> {
  for (const line of EMULATORS_START) {
    expect(APP_COMMANDS[line]).toBe("run");
    ran.add(line);
  }
  const emulators = start("bash", ["-c", EMULATORS_START.join("\n")], { cwd: app, env: { ...userShellEnv(), npm_config_prefer_offline: "true" } });
  let ended: Run | undefined;
  void emulators.done.then((done) => (ended = done));
  try {
    const deadline = Date.now() + 300_000;
    while (!emulators.output().includes("All emulators ready!")) {
      if (ended !== undefined || Date.now() > deadline) throw new Error(`npx firebase emulators:start did not get ready (code ${ended?.code}):\n${emulators.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const { probe } = await probeRunning(app, PROJECT, env);
    return { output: emulators.output(), probe };
  } finally {
    emulators.signal("SIGINT");
    const stopped = await Promise.race([emulators.done, new Promise((resolve) => setTimeout(resolve, 60_000))]);
    if (stopped === undefined) emulators.signal("SIGKILL");
  }
}

/** The CLI as the codebase has it installed (its devDependency), run from the codebase folder. */
function codebaseCli(args: string[], env: NodeJS.ProcessEnv = userShellEnv()): Promise<Run> {
  return run(join(app, "counters", "node_modules", ".bin", "firestore-exact-counter"), args, { cwd: join(app, "counters"), env });
}

beforeAll(async () => {
  tarballs = await packedTarballs();
  app = freshApp("existing-app");
  await npmInstall(join(app, "functions"));
  firebase = linkFirebaseTools(app);
  // The app's default project, as `firebase use` sets it: the commands as written name none.
  writeFileSync(join(app, ".firebaserc"), `${JSON.stringify({ projects: { default: PROJECT } }, null, 2)}\n`);
  packs = join(app, "..", "packs");
  mkdirSync(packs);
  copyFileSync(tarballs.functions, join(packs, PACKED.functions));
  copyFileSync(tarballs.cli, join(packs, PACKED.cli));
  original = snapshot(app);
  first = await asWritten(TARBALL_INIT, { fill: { "/path/to/packs": packs } });
});

afterAll(() => {
  stopAll();
  removeApp(app);
});

describe("firestore-exact-counter init on an existing project, installed from the packed tarballs", () => {
  it("adds the codebase, firebase.json's entry, the rules and the indexes, installs, and says what it changed", () => {
    expect(first.code).toBe(0);
    for (const line of [
      `copy counters/${PACKED.functions}`,
      `copy counters/${PACKED.cli}`,
      "create counters/package.json",
      "create counters/index.js",
      "create counters/.env",
      "create counters/.env.local",
      "create counters/.gitignore",
      "change firebase.json",
      "change firestore.rules",
      "change firestore.indexes.json",
    ]) {
      expect(first.stdout).toContain(`  ${line}: `);
    }
    expect(first.stdout).toContain('  function names: none in common with codebase "default" (1 function)');
    expect(first.stdout).toMatch(/^ {2}check-rules: all 22 guarantees hold/m);
    // Its first lines: which project, and that it needs firebase-tools there (the app's, found in its node_modules).
    expect(first.stdout.split("\n").slice(0, 2)).toEqual([
      `init: ${app}`,
      "  init needs firebase-tools in the project to load your codebases as a deploy does (add it: npm install --save-dev firebase-tools@14.27.0): found 14.27.0 (node_modules/firebase-tools)",
    ]);
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
      "counters/.env.local",
      "counters/.gitignore",
      `counters/${PACKED.cli}`,
      `counters/${PACKED.functions}`,
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
    expect(pkg.dependencies!["@firestore-exact-counter/functions"]).toBe(`file:./${PACKED.functions}`);
    expect(pkg.devDependencies!["@firestore-exact-counter/cli"]).toBe(`file:./${PACKED.cli}`);
    for (const name of ["functions", "cli"] as const) expect(readFileSync(join(app, "counters", PACKED[name])).equals(readFileSync(tarballs[name]))).toBe(true);
    const lock = readFileSync(join(app, "counters", "package-lock.json"), "utf8");
    expect(lock).toContain(`"resolved": "file:${PACKED.functions}"`);
    expect(lock).not.toContain(packs);
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
      // Not .env.local: the emulator's alone (firebase.json's ignore has *.local).
      expect(readdirSync(built).sort()).toEqual([".env", ".gitignore", PACKED.cli, PACKED.functions, "index.js", "package-lock.json", "package.json"]);
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
    const again = await codebaseCli(["init", "--dir", app, "--functions-package", join(packs, PACKED.functions), "--cli-package", join(packs, PACKED.cli)]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("init: nothing to change");
    expect(again.stdout).not.toContain("init: npm install in");
    expect(snapshot(app)).toEqual(before);
  });

  it("runs the codebase's preflight as written (npm --prefix counters …), with the app's firebase-tools: it finds the project and passes", async () => {
    const preflight = await asWritten("npm --prefix counters run preflight -- --project <projectId>", { fill: { "<projectId>": PROJECT }, env: { FIRESTORE_EMULATOR_HOST: firestoreHost() } });
    expect(preflight.stdout).toContain(`preflight: ${app} for project ${PROJECT}`);
    expect(preflight.stdout).toMatch(/ok {3}codebase +firebase deploy --only functions:counters deploys the 10 functions of codebase "counters"; no function name in common with codebase "default" \(1 function\)/);
    expect(preflight.stdout).toContain("preflight: passed");
    expect(preflight.code).toBe(0);
  });

  it("runs the codebase's CLI as written from the app's folder (npx --prefix counters …): the emulator launcher, and check-rules on the app's rules", async () => {
    const jar = await asWritten("npx --prefix counters firestore-exact-counter firestore-jar");
    expect({ code: jar.code, stderr: jar.stderr }).toEqual({ code: 0, stderr: "" });
    expect(existsSync(jar.stdout.trim())).toBe(true);
    const rules = await asWritten("npx --prefix counters firestore-exact-counter check-rules firestore.rules", { env: { FIRESTORE_EMULATOR_HOST: firestoreHost() } });
    expect({ code: rules.code, stderr: rules.stderr }).toEqual({ code: 0, stderr: "" });
    expect(rules.stdout).toContain(`all ${GUARANTEES.length} guarantees hold`);
  });

  let started: { output: string; probe: ProbeResult };
  it("starts the emulators with docs/existing-app.md's two lines as written: both codebases served side by side, the app's callable still publishes posts, and the counters count", async () => {
    await useOwnEmulators(app, STARTED_EMULATOR_NAMES);
    started = await emulatorsAsWritten({ PROBE_APP_CALLABLE: "publishPost@us-central1", PROBE_CREATOR: "admin", PROBE_BURST: "5x10" });
    expect(started.probe.projectId).toBe(PROJECT);
    expect(started.probe.post).toEqual({ title: "Hello", authorIsCaller: true });
    expect(started.probe.counter).toMatchObject({ created: { numShards: 2 }, applied: [true, true, true], total: 3, numShards: 2 });
    // The Firestore emulator the codebase's CLI named (the launcher of the installed jar), not a download.
    expect(started.output).toMatch(/Using firestore emulator at \S*firestore-emulator-launcher\.jar/);
  });

  it("says as the emulator loads the functions which rollup interval it uses: init's .env.local's 100 ms", () => {
    expect(started.output).toContain(
      "firestore-exact-counter: the emulator runs rollups every 100 ms (ROLLUP_INTERVAL_MS in .env.local), which only the emulator reads: a local burst of writes settles within seconds",
    );
  });

  it("settles a local burst within seconds: 50 increments to 5 counters at once, every total exact soon after the last answer", () => {
    const burst = started.probe.burst!;
    console.log(`init.app.test: a burst of ${burst.counters} x ${burst.increments} increments settled ${burst.settledMs} ms after its last answer`);
    expect(burst.totals).toEqual(Array.from({ length: burst.counters }, () => burst.increments));
    expect(burst.settledMs).toBeLessThan(SETTLED_WITHIN_MS);
  });

  it("says what to install, in one line with exit 2, where the project has no firebase-tools (the CLI never brings its own): init before anything else", async () => {
    // The app's firebase-tools set aside, and an empty global npm install: none anywhere the CLI looks.
    const tools = join(app, "node_modules", "firebase-tools");
    renameSync(tools, `${tools}.aside`);
    try {
      const env = { ...userShellEnv(), npm_config_prefix: join(app, "..", "no-global") };
      const missing = (command: string) =>
        `${command}: firebase-tools is not installed for ${app}: install it in the project (npm install --save-dev firebase-tools@14.27.0) or globally (npm install --global firebase-tools), then run this again\n`;
      const preflight = await codebaseCli(["preflight", "--project", PROJECT], env);
      expect({ code: preflight.code, stderr: preflight.stderr }).toEqual({ code: 2, stderr: missing("preflight") });
      const before = snapshot(app);
      const init = await codebaseCli(["init", "--dir", app], env);
      expect({ code: init.code, stdout: init.stdout, stderr: init.stderr }).toEqual({ code: 2, stdout: `init: ${app}\n`, stderr: missing("init") });
      expect(snapshot(app)).toEqual(before);
    } finally {
      renameSync(`${tools}.aside`, tools);
    }
  });

  it("stops an offline deploy whose params the functions would refuse at the codebase's predeploy preflight", async () => {
    breakLimits(join(app, "counters"), PROJECT);
    try {
      expectStoppedAtPredeploy(await offlineDeploy(firebase, app, PROJECT, userShellEnv()));
    } finally {
      rmSync(join(app, "counters", `.env.${PROJECT}`));
    }
  });

  it.each(["npx firebase deploy --only functions:counters,firestore", "npx firebase deploy --only functions:counters"])(
    "runs %s as written, offline: past every predeploy check of the counters, stopped where it needs the network",
    async (command) => {
      const deployed = await asWritten(command, { env: offlineEnv({}) });
      const output = deployed.stdout + deployed.stderr;
      // The codebase's preflight (and, with firestore, the rules check) passed; nothing was uploaded.
      expect(output.match(/preflight: passed/g)).toHaveLength(command.endsWith(",firestore") ? 2 : 1);
      expect(output).not.toMatch(/predeploy error|FAIL /);
      expect(output).not.toMatch(/uploading|Deploy complete/i);
      expect(deployed.code).not.toBe(0);
    },
  );

  it("runs the undo's functions:delete as written, offline: firebase-tools takes the command and stops where it needs the project", async () => {
    const deleted = await asWritten(
      "npx firebase functions:delete createCounter incrementCounter setMember resetCounter reshardCounter deleteCounter rollupTotal rollupSweep rollupWindows cleanupDeletedCounter",
      { env: offlineEnv({}) },
    );
    const output = deleted.stdout + deleted.stderr;
    expect(output).not.toMatch(/is not a Firebase command|unknown command|could not determine executable/i);
    expect(output).not.toMatch(/Successful delete/i);
    expect(deleted.code).not.toBe(0);
  });

  it("runs docs/documents.md's backfill lines as written, once DOCUMENT_COUNTERS names a rule (its step 1)", async () => {
    const env = join(app, "counters", `.env.${PROJECT}`);
    writeFileSync(env, "DOCUMENT_COUNTERS=posts/{post}/comments/{comment}=post-{post}-comments\n");
    try {
      const all = await asWritten("npx --prefix counters firestore-exact-counter backfill", { env: { FIRESTORE_EMULATOR_HOST: firestoreHost() } });
      expect(all.code).toBe(0);
      expect(all.stdout).toMatch(/^rule 1 posts\/\{post\}\/comments\/\{comment\}=post-\{post\}-comments +seen 0/m);
      // No comment yet and nothing counted: a note in case the path is a typo, not a refusal.
      expect(all.stderr).toContain('backfill: note: rule 1 "posts/{post}/comments/{comment}=post-{post}-comments" finds no document at all');
      const one = await asWritten("npx --prefix counters firestore-exact-counter backfill --counter post-42-comments --dry-run", { env: { FIRESTORE_EMULATOR_HOST: firestoreHost() } });
      expect(one.code).toBe(0);
      expect(one.stdout).toContain(PROJECT);
    } finally {
      rmSync(env);
    }
  });

  it("runs docs/from-the-extension.md's migrate-extension lines as written (a dry run into a file, then the run)", async () => {
    const env = { FIRESTORE_EMULATOR_HOST: firestoreHost() };
    const dry = await asWritten("npx --prefix counters firestore-exact-counter migrate-extension --document 'pages/{id}' --field visits --counter 'page-{id}-visits' --dry-run > extension-values.txt", { env });
    expect({ code: dry.code, stdout: dry.stdout }).toEqual({ code: 0, stdout: "" });
    expect(readFileSync(join(app, "extension-values.txt"), "utf8")).toMatch(/dry run/i);
    rmSync(join(app, "extension-values.txt"));
    const moved = await asWritten("npx --prefix counters firestore-exact-counter migrate-extension --document 'pages/{id}' --field visits --counter 'page-{id}-visits'", { env });
    expect(moved.code).toBe(0);
  });

  it("runs npx --yes @firestore-exact-counter/cli init as written against the packages as published: the codebase then names versions, and installs them", async () => {
    const registry = await scopedRegistry(tarballs);
    try {
      const init = await asWritten("npx --yes @firestore-exact-counter/cli init", { env: registry.env });
      expect({ code: init.code, done: init.stdout.includes("init: done") }).toEqual({ code: 0, done: true });
      expect(init.stdout).toContain(`  change counters/package.json: depends on @firestore-exact-counter/functions (${VERSION})`);
      expect(init.stdout).toContain(`  remove counters/${PACKED.functions}: package.json names it no more`);
      const pkg = JSON.parse(readFileSync(join(app, "counters", "package.json"), "utf8")) as Record<string, Record<string, string>>;
      expect([pkg.dependencies!["@firestore-exact-counter/functions"], pkg.devDependencies!["@firestore-exact-counter/cli"]]).toEqual([VERSION, VERSION]);
      // Installed from the registry's tarball: the lock's integrity is the packed tarball's.
      const lock = readFileSync(join(app, "counters", "package-lock.json"), "utf8");
      expect(lock).toContain(`"integrity": "sha512-${createHash("sha512").update(readFileSync(tarballs.functions)).digest("base64")}"`);
      // The update line of the same page, with the version: nothing left to change.
      const update = await asWritten("npx --yes @firestore-exact-counter/cli@<version> init", { fill: { "<version>": VERSION }, env: registry.env });
      expect(update.code).toBe(0);
      expect(update.stdout).toContain("init: nothing to change");
      expect(registry.requests).toContain("/@firestore-exact-counter/cli");
    } finally {
      await registry.close();
    }
  });

  it("ran every command line of the app pages that APP_COMMANDS says it runs, as written", () => {
    const toRun = Object.entries(APP_COMMANDS).filter(([, how]) => how === "run").map(([command]) => command);
    expect(toRun.filter((command) => !ran.has(command))).toEqual([]);
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
