// `firestore-exact-counter init` from its sources (as `npm run` would run it), on copies of the fixture app
// (test/fixtures/existing-app: its own `default` codebase, rules for posts, a composite index) and
// of variations of it, with --no-install: what it writes and says, that a second run and --dry-run change
// nothing, and each refusal, after which every file is as it was, byte for byte. Copies live inside the
// repository, so the app's codebase loads with the repository's node_modules. The whole flow installed
// from the packed tarballs, with npm install and the emulators: scripts/test/init.app.test.ts.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { runCommand, stopAll, type Run } from "../../test/helpers/run";
import { requireEmulators } from "../../test/helpers/emulators";
import { paramList } from "../../functions/src/model/params";
import { copyOfFixtureApp, removeCopies, withCatchAll } from "../../test/helpers/existing-app";
import { firebaseInitFirestore } from "../../test/helpers/firebase-init";
import { snapshot } from "../../test/helpers/tree";
import { createRequire } from "node:module";

jest.setTimeout(180_000);

const init = (dir: string, ...args: string[]): Promise<Run> => runCommand("init", ["--dir", dir, "--no-install", ...args]);

function edit(path: string, change: (text: string) => string): void {
  writeFileSync(path, change(readFileSync(path, "utf8")));
}

function json<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

/** A refusal as the convention answers it: exit 2, one line naming the cause, and no file changed. */
async function expectRefusal(dir: string, message: RegExp, args: string[] = []): Promise<void> {
  const before = snapshot(dir);
  const run = await init(dir, ...args);
  const lines = run.stderr.trimEnd().split("\n");
  expect({ code: run.code, lines: lines.length }).toEqual({ code: 2, lines: 1 });
  expect(lines[0]).toMatch(/^init: /);
  expect(lines[0]).toMatch(message);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(snapshot(dir)).toEqual(before);
}

beforeAll(() => requireEmulators());

afterAll(() => {
  stopAll();
  removeCopies();
});

describe("init on an existing app", () => {
  let app: string;
  let original: Record<string, string>;
  let first: Run;

  beforeAll(async () => {
    app = copyOfFixtureApp();
    original = snapshot(app);
    first = await init(app);
  });

  it("says what it changed, file by file, and that the merged rules keep every guarantee", () => {
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
    const said = first.stdout.split("\n");
    const stock = json<{ indexes: unknown[]; fieldOverrides: unknown[] }>(join(REPO_ROOT, "firestore.indexes.json"));
    for (const line of [
      "  create counters/package.json: ",
      "  create counters/index.js: re-exports @firestore-exact-counter/functions",
      "  create counters/.env: every param with its default and what it does",
      "  create counters/.env.local: ROLLUP_INTERVAL_MS=100 for the emulator only (it delivers trigger events one at a time: a local burst settles within seconds)",
      "  create counters/.gitignore: node_modules/ and .env.local",
      '  change firebase.json: functions codebase "counters" (source counters/, the preflight as its predeploy); the rules check (preflight --rules) as the firestore predeploy',
      "  change firestore.rules: the counters' block inside match /databases/{database}/documents, every line of yours kept",
      `  change firestore.indexes.json: ${stock.indexes.length} composite index(es) and ${stock.fieldOverrides.length} field override(s) of the counters'`,
    ]) {
      expect(said.filter((l) => l.startsWith(line))).toHaveLength(1);
    }
    expect(first.stdout).toContain('  function names: none in common with codebase "default" (1 function)');
    expect(first.stdout).toMatch(/^ {2}check-rules: all 22 guarantees hold/m);
    expect(first.stdout).toContain("deploy: npx firebase deploy --only functions:counters,firestore");
    // Before anything else: that init needs firebase-tools in the project, how to add it, and which one it found.
    expect(said.slice(0, 2)).toEqual([
      `init: ${app}`,
      `  init needs firebase-tools in the project to load your codebases as a deploy does (add it: npm install --save-dev firebase-tools@14.27.0): found 14.27.0 (${join(REPO_ROOT, "node_modules", "firebase-tools")})`,
    ]);
  });

  it("adds the codebase to firebase.json, keeping the app's entry as it was (still codebase default), and the rules check to its firestore section", () => {
    const merged = json<{ functions: Record<string, unknown>[]; firestore: Record<string, unknown> }>(join(app, "firebase.json"));
    const fixture = json<{ firestore: Record<string, unknown> }>(join(REPO_ROOT, "test", "fixtures", "existing-app", "firebase.json"));
    // Whenever a deploy includes Firestore rules, they must keep the counters' guarantees first (preflight --rules).
    expect(merged.firestore).toEqual({
      ...fixture.firestore,
      predeploy: ['npm --prefix "$PROJECT_DIR/counters" run preflight -- --rules --dir "$PROJECT_DIR" --project "$GCLOUD_PROJECT"'],
    });
    const functions = merged.functions;
    expect(functions[0]).toEqual(json<{ functions: unknown }>(join(REPO_ROOT, "test", "fixtures", "existing-app", "firebase.json")).functions);
    expect(functions[1]).toEqual({
      source: "counters",
      codebase: "counters",
      ignore: ["node_modules", ".git", "*.log", "*.local"],
      predeploy: ['npm --prefix "$RESOURCE_DIR" run preflight -- --dir "$PROJECT_DIR" --project "$GCLOUD_PROJECT"'],
    });
  });

  it("keeps every line of the app's rules and indexes, and adds ours", () => {
    const rules = readFileSync(join(app, "firestore.rules"), "utf8").split("\n");
    const begin = rules.indexOf("    // BEGIN firestore-exact-counter rules (firestore-exact-counter init keeps this block current; docs/existing-app.md)");
    const end = rules.indexOf("    // END firestore-exact-counter rules");
    expect(begin).toBe(rules.indexOf("  match /databases/{database}/documents {") + 1);
    // Without the block, the file is the app's, line for line.
    expect([...rules.slice(0, begin), ...rules.slice(end + 1)].join("\n")).toBe(original["firestore.rules"]);
    const indexes = json<{ indexes: unknown[]; fieldOverrides: unknown[] }>(join(app, "firestore.indexes.json"));
    const before = JSON.parse(original["firestore.indexes.json"]!) as { indexes: unknown[]; fieldOverrides: unknown[] };
    const ours = json<{ indexes: unknown[]; fieldOverrides: unknown[] }>(join(REPO_ROOT, "firestore.indexes.json"));
    expect(indexes).toEqual({ indexes: [...before.indexes, ...ours.indexes], fieldOverrides: [...before.fieldOverrides, ...ours.fieldOverrides] });
  });

  it("writes the codebase: the package and its peers, the CLI for the predeploy, the re-export, every param with what it does", () => {
    const pkg = json<{ main: string; engines: unknown; scripts: unknown; dependencies: unknown; devDependencies: unknown }>(join(app, "counters", "package.json"));
    expect(pkg).toMatchObject({
      main: "index.js",
      engines: { node: "22" },
      scripts: { preflight: "firestore-exact-counter preflight" },
      dependencies: { "@firestore-exact-counter/functions": "0.2.0", "firebase-admin": "^14.5.1", "firebase-functions": "^7.4.0" },
      devDependencies: { "@firestore-exact-counter/cli": "0.2.0" },
    });
    expect(readFileSync(join(app, "counters", "index.js"), "utf8")).toContain('Object.assign(exports, require("@firestore-exact-counter/functions"));');
    const env = readFileSync(join(app, "counters", ".env"), "utf8");
    for (const param of paramList()) {
      expect(env).toContain(`\n${param.name}=${param.default ?? ""}\n`);
      // Its description, as comment lines right above it.
      const above = env.slice(0, env.indexOf(`\n${param.name}=`)).split("\n").reverse();
      expect(above[0]!.startsWith("# ")).toBe(true);
    }
    // DOCUMENT_COUNTERS' comment shows a rule to copy (docs/documents.md).
    const documents = env.slice(0, env.indexOf("\nDOCUMENT_COUNTERS=")).split("\n").reverse();
    expect(documents.slice(0, 6).join("\n")).toContain("posts/{post}/comments/{comment}=post-{post}-comments");
  });

  it("gives the emulator alone a short rollup interval, in .env.local, which git and the deploy leave out", () => {
    const local = readFileSync(join(app, "counters", ".env.local"), "utf8");
    expect(local).toMatch(/^ROLLUP_INTERVAL_MS=100$/m);
    expect(local).toMatch(/^# .*one at a time/m);
    expect(readFileSync(join(app, "counters", ".env"), "utf8")).toMatch(/^ROLLUP_INTERVAL_MS=1000$/m);
    expect(readFileSync(join(app, "counters", ".gitignore"), "utf8").split("\n")).toEqual(["node_modules/", ".env.local", ""]);
    // firebase.json's entry leaves *.local out of what a deploy uploads (firebase-tools reads .env.local only when it emulates).
    expect(json<{ functions: { codebase?: string; ignore?: string[] }[] }>(join(app, "firebase.json")).functions[1]!.ignore).toContain("*.local");
  });

  it("changes nothing when run again: every file byte for byte, and says so", async () => {
    const before = snapshot(app);
    const again = await init(app);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" });
    expect(again.stdout).toContain("init: nothing to change: the counters are in counters/ as this version adds them");
    expect(again.stdout).not.toMatch(/^ {2}(create|change) /m);
    expect(snapshot(app)).toEqual(before);
  });

  it("keeps the app's own param values, and adds only a param the .env lacks (as a newer version's)", async () => {
    const path = join(app, "counters", ".env");
    edit(path, (text) => text.replace(/^CREATE_POLICY=.*$/m, "CREATE_POLICY=non-anonymous").replace(/^# .*\n(# .*\n)*MAX_DELTA=.*\n/m, ""));
    const edited = readFileSync(path, "utf8");
    const run = await init(app);
    expect(run.stdout).toContain("  change counters/.env: every param with its default and what it does");
    const now = readFileSync(path, "utf8");
    expect(now.startsWith(edited)).toBe(true);
    expect(now.slice(edited.length)).toMatch(/^\n# Added by firestore-exact-counter init 0\.2\.0:\n# Largest \|delta\| one incrementCounter call may apply\.\nMAX_DELTA=1000\n$/);
    expect(now).toContain("\nCREATE_POLICY=non-anonymous\n");
  });

  it("puts the current block in place of an older one", async () => {
    const path = join(app, "firestore.rules");
    edit(path, (text) => text.replace("// No listing or querying of the collection: counter ids are not enumerable.", "// (an older comment)"));
    const run = await init(app);
    expect(run.stdout).toMatch(/^ {2}change firestore\.rules: /m);
    expect(readFileSync(path, "utf8")).toContain("// No listing or querying of the collection: counter ids are not enumerable.");
    expect(readFileSync(path, "utf8")).not.toContain("(an older comment)");
  });
});

describe("init --dry-run", () => {
  it("prints what it would change and writes nothing", async () => {
    const app = copyOfFixtureApp();
    const before = snapshot(app);
    const run = await init(app, "--dry-run");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("(dry run: nothing is written)");
    expect(run.stdout).toMatch(/^ {2}would create counters\/package\.json: /m);
    expect(run.stdout).toMatch(/^ {2}would change firebase\.json: /m);
    expect(snapshot(app)).toEqual(before);
  });
});

describe("init given tarballs", () => {
  let app: string;
  let packs: string;
  const tarball = (name: string, content: string) => {
    writeFileSync(join(packs, name), content);
    return join(packs, name);
  };

  beforeAll(() => {
    app = copyOfFixtureApp();
    packs = mkdtempSync(join(REPO_ROOT, ".cache", "existing-app", "packs-"));
  });

  it("copies them into the codebase folder and names them by relative paths, so the app carries them", async () => {
    const functions = tarball("firestore-exact-counter-functions-0.2.0.tgz", "functions 0.2.0");
    const cli = tarball("firestore-exact-counter-cli-0.2.0.tgz", "cli 0.2.0");
    const run = await init(app, "--functions-package", functions, "--cli-package", cli);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(run.stdout).toContain(`  copy counters/firestore-exact-counter-functions-0.2.0.tgz: ${functions}, which package.json names`);
    expect(run.stdout).toContain(`  copy counters/firestore-exact-counter-cli-0.2.0.tgz: ${cli}, which package.json names`);
    expect(json(join(app, "counters", "package.json"))).toMatchObject({
      dependencies: { "@firestore-exact-counter/functions": "file:./firestore-exact-counter-functions-0.2.0.tgz" },
      devDependencies: { "@firestore-exact-counter/cli": "file:./firestore-exact-counter-cli-0.2.0.tgz" },
    });
    expect(readFileSync(join(app, "counters", "firestore-exact-counter-functions-0.2.0.tgz"), "utf8")).toBe("functions 0.2.0");
  });

  it("changes nothing when run again with the same tarballs, and --dry-run says what a newer one would replace", async () => {
    const before = snapshot(app);
    const again = await init(app, "--functions-package", join(packs, "firestore-exact-counter-functions-0.2.0.tgz"), "--cli-package", join(packs, "firestore-exact-counter-cli-0.2.0.tgz"));
    expect(again.stdout).toContain("init: nothing to change");
    expect(snapshot(app)).toEqual(before);
    const newer = tarball("firestore-exact-counter-functions-0.3.0.tgz", "functions 0.3.0");
    const dry = await init(app, "--dry-run", "--functions-package", newer, "--cli-package", join(packs, "firestore-exact-counter-cli-0.2.0.tgz"));
    expect(dry.stdout).toContain("  would copy counters/firestore-exact-counter-functions-0.3.0.tgz: ");
    expect(dry.stdout).toContain("  would remove counters/firestore-exact-counter-functions-0.2.0.tgz: package.json names it no more");
    expect(snapshot(app)).toEqual(before);
  });

  it("replaces the tarball package.json named with a newer one, and keeps the one it still names", async () => {
    const run = await init(app, "--functions-package", join(packs, "firestore-exact-counter-functions-0.3.0.tgz"), "--cli-package", join(packs, "firestore-exact-counter-cli-0.2.0.tgz"));
    expect(run.code).toBe(0);
    expect(readdirSync(join(app, "counters")).filter((name) => name.endsWith(".tgz")).sort()).toEqual(["firestore-exact-counter-cli-0.2.0.tgz", "firestore-exact-counter-functions-0.3.0.tgz"]);
    expect(json<{ dependencies: Record<string, string> }>(join(app, "counters", "package.json")).dependencies["@firestore-exact-counter/functions"]).toBe("file:./firestore-exact-counter-functions-0.3.0.tgz");
  });

  it("refuses a tarball that does not exist, and two of the same name, changing nothing", async () => {
    await expectRefusal(app, /^init: --functions-package \S+nosuch\.tgz: no such file or folder/, ["--functions-package", join(packs, "nosuch.tgz")]);
    const other = mkdtempSync(join(packs, "other-"));
    writeFileSync(join(other, "firestore-exact-counter-cli-0.2.0.tgz"), "another cli");
    await expectRefusal(app, /have the same name, and init copies both into counters\/: rename one$/, [
      "--functions-package",
      join(other, "firestore-exact-counter-cli-0.2.0.tgz"),
      "--cli-package",
      join(packs, "firestore-exact-counter-cli-0.2.0.tgz"),
    ]);
  });
});

describe("init on other project shapes", () => {
  it("gives a project without functions, rules or indexes a firestore section, the counters' rules and indexes, and warns of the Emulator UI", async () => {
    const dir = mkdtempSync(join(REPO_ROOT, ".cache", "existing-app", "bare-"));
    writeFileSync(join(dir, "firebase.json"), `${JSON.stringify({ hosting: { public: "public" } }, null, 2)}\n`);
    const run = await init(dir);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(json(join(dir, "firebase.json"))).toMatchObject({
      hosting: { public: "public" },
      functions: [{ source: "counters", codebase: "counters" }],
      firestore: { rules: "firestore.rules", indexes: "firestore.indexes.json" },
    });
    expect(readFileSync(join(dir, "firestore.rules"), "utf8")).toBe(readFileSync(join(REPO_ROOT, "firestore.rules"), "utf8"));
    expect(readFileSync(join(dir, "firestore.indexes.json"), "utf8")).toBe(readFileSync(join(REPO_ROOT, "firestore.indexes.json"), "utf8"));
    expect(run.stdout).toContain('WARN firebase.json: firebase emulators:start would start the Emulator UI, which firebase-tools downloads at first use (it fails offline); add "ui": { "enabled": false }');
    expect(run.stdout).toContain("function names: no other codebase to compare with");
  });

  it("names another codebase with --codebase, and does not warn of the UI where firebase.json turns it off", async () => {
    const app = copyOfFixtureApp();
    const run = await init(app, "--codebase", "likes");
    expect(run.code).toBe(0);
    expect(json<{ functions: { codebase?: string }[] }>(join(app, "firebase.json")).functions.map((f) => f.codebase)).toEqual([undefined, "likes"]);
    expect(statSync(join(app, "likes", "index.js")).isFile()).toBe(true);
    expect(run.stdout).toContain("deploy: npx firebase deploy --only functions:likes,firestore");
    expect(run.stdout).not.toContain("Emulator UI");
  });
});

describe("init on a project as a stock `firebase init firestore` writes it (firebase-tools' own setup code and templates)", () => {
  let dir: string;
  let stock: Record<string, string>;
  const tools = createRequire(join(REPO_ROOT, "node_modules", "firebase-tools", "package.json"));

  beforeAll(async () => {
    dir = mkdtempSync(join(REPO_ROOT, ".cache", "existing-app", "stock-"));
    writeFileSync(join(dir, "firebase.json"), `${JSON.stringify({ emulators: { ui: { enabled: false } } }, null, 2)}\n`);
    await firebaseInitFirestore(dir);
    stock = snapshot(dir);
  });

  it("starts from the template's index file, with its // comments", () => {
    expect(stock["firestore.indexes.json"]).toMatch(/^ {2}\/\/ Example \(Standard Edition\):$/m);
    expect(() => JSON.parse(stock["firestore.indexes.json"]!) as unknown).toThrow();
  });

  it("refuses the template's rules, which open every document to anyone for 30 days, naming them and not the index file", async () => {
    await expectRefusal(dir, /^init: firestore\.rules would let clients write or read what the counters keep to themselves.*signed-out clients can write counters\/\{id\}\/shards\/\{n\}/);
  });

  it("takes the index file as it is once the app's rules leave the counters out: every comment kept, and firebase-tools reads the merged file", async () => {
    // The template's rule, narrowed as docs/existing-app.md shows (the counters left out of it).
    edit(join(dir, "firestore.rules"), (text) => text.replace("match /{document=**} {", "match /{collection}/{document=**} {").replace(/allow read, write: if (.*);/, 'allow read, write: if $1 && collection != "counters";'));
    const run = await init(dir);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^ {2}change firestore\.indexes\.json: 1 composite index\(es\) and \d+ field override\(s\) of the counters'/m);
    const merged = readFileSync(join(dir, "firestore.indexes.json"), "utf8");
    const comments = (text: string) => text.split("\n").filter((line) => line.trim().startsWith("//"));
    expect(comments(merged)).toEqual(comments(stock["firestore.indexes.json"]!));
    expect(comments(merged).length).toBeGreaterThan(40);
    // What a deploy reads (lib/deploy/firestore/prepare.js: loadCJSON) and checks (FirestoreApi.validateSpec): ours, all of it.
    const { loadCJSON } = tools("./lib/loadCJSON") as { loadCJSON: (path: string) => unknown };
    const { FirestoreApi } = tools("./lib/firestore/api") as { FirestoreApi: new () => { validateSpec(spec: unknown): void } };
    const read = loadCJSON(join(dir, "firestore.indexes.json"));
    expect(() => new FirestoreApi().validateSpec(read)).not.toThrow();
    expect(read).toEqual(json(join(REPO_ROOT, "firestore.indexes.json")));
    const again = await init(dir);
    expect(again.stdout).toContain("init: nothing to change");
  });

  it("refuses an index file firebase-tools would refuse too, naming the line and column, and changes nothing", async () => {
    edit(join(dir, "firestore.indexes.json"), (text) => text.replace(/\n {2}\],\n {2}"fieldOverrides"/, ',\n  ],\n  "fieldOverrides"'));
    const line = readFileSync(join(dir, "firestore.indexes.json"), "utf8").split("\n").findIndex((l) => l.startsWith("  ],")) + 1;
    await expectRefusal(dir, new RegExp(`^init: firestore\\.indexes\\.json line ${line}, column 3: Unexpected token '\\]' \\(firebase-tools reads it as JSON with comments, and a deploy would stop there too\\): fix it, then run init again$`));
  });
});

describe("init refuses, naming the cause, with exit 2 and every file as it was", () => {
  it("a folder without firebase.json", async () => {
    const dir = mkdtempSync(join(REPO_ROOT, ".cache", "existing-app", "empty-"));
    writeFileSync(join(dir, "README.md"), "not a Firebase project\n");
    await expectRefusal(dir, /has no firebase\.json: run init in your Firebase project folder/);
  });

  it("a codebase folder that exists and is not ours", async () => {
    const app = copyOfFixtureApp();
    mkdirSync(join(app, "counters"));
    writeFileSync(join(app, "counters", "package.json"), `${JSON.stringify({ name: "the-apps-own-counters" })}\n`);
    await expectRefusal(app, /counters\/ exists and is not a firestore-exact-counter codebase .*: choose another folder with --codebase <name>/);
  });

  it("a function name of ours that the app's codebase already exports", async () => {
    const app = copyOfFixtureApp();
    edit(join(app, "functions", "index.js"), (text) => `${text}\nexports.createCounter = exports.publishPost;\n`);
    await expectRefusal(app, /codebase "default" \(functions\/\) exports createCounter: function names are per project/);
  });

  it("app rules that would let clients write the counters even with the block (a catch-all: rules are OR'ed)", async () => {
    const app = copyOfFixtureApp();
    edit(join(app, "firestore.rules"), withCatchAll);
    await expectRefusal(app, /firestore\.rules would let clients write or read .*: .*signed-in users can write counters\/\{id\}\/shards\/\{n\}.*Leave the counters out of the rule that opens them/);
  });

  it("a codebase named counters that firebase.json already gives another folder", async () => {
    const app = copyOfFixtureApp();
    edit(join(app, "firebase.json"), (text) => text.replace('"source": "functions",', '"source": "functions",\n    "codebase": "counters",'));
    await expectRefusal(app, /firebase\.json already has a functions codebase "counters" with source "functions": give the counters another name with --codebase/);
  });

  it("a field override of the app's on one of our fields that differs from ours", async () => {
    const app = copyOfFixtureApp();
    edit(join(app, "firestore.indexes.json"), (text) =>
      text.replace('"fieldOverrides": [', '"fieldOverrides": [\n    { "collectionGroup": "exactCounterRequests", "fieldPath": "expireAt", "ttl": false, "indexes": [] },'),
    );
    await expectRefusal(app, /firestore\.indexes\.json already has a field override on exactCounterRequests\.expireAt that differs from the counters'/);
  });

  it("rules with no match /databases/{database}/documents to put the block in", async () => {
    const app = copyOfFixtureApp();
    writeFileSync(join(app, "firestore.rules"), "rules_version = '2';\nservice firebase.storage {\n}\n");
    await expectRefusal(app, /firestore\.rules has no line "match \/databases\/\{database\}\/documents \{"/);
  });
});

afterAll(() => rmSync(join(REPO_ROOT, ".cache", "existing-app"), { recursive: true, force: true }));
