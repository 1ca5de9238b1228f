// The client as an app gets it: `npm pack ./client`, installed with the project's exact firebase version
// into a fresh app outside the repository. A "type": "module" Node app imports both by name and watches
// a counter on the running emulators; a CommonJS script requires them; a browser app is bundled by
// esbuild and run in headless Chromium. Each would break if the client loaded a second copy of the SDK:
// the app's Firestore instance is then refused by the client's copy ("Expected first argument to doc()
// to be a CollectionReference, a DocumentReference or FirebaseFirestore").
// Also: `npm publish --dry-run` passes with what a published package needs; the client runs with the
// newest release of every other major its peer range claims (the range claims nothing this does not
// run); and docs/app.md's main snippet runs as written in the fresh app.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { packageBuildsIn, bundleBrowserApp } from "../../scripts/lib/bundle";
import { launchChromium } from "../../scripts/lib/chromium";
import { emulatorHosts, type EmulatorHosts } from "../../scripts/lib/emulator-hosts";
import { functionsRegion } from "../../scripts/lib/example-web";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { serveStatic } from "../../scripts/lib/static-server";
import { npm, packedTarballs } from "../../test/helpers/packed";
import { run } from "../../test/helpers/run";
import { E2E_PROJECT, signedInClient, type Client } from "../../test/helpers/client";
import { installFreshApp } from "../../test/helpers/client-app";

// npm pack and an install of firebase (from npm's cache, which `npm ci` filled) take a minute or two here.
jest.setTimeout(300_000);

const FIREBASE_VERSION = (JSON.parse(readFileSync(require.resolve("firebase/package.json", { paths: [REPO_ROOT] }), "utf8")) as { version: string }).version;
const INCREMENTS = 4;
const CLIENT_PACKAGE = JSON.parse(readFileSync(join(REPO_ROOT, "client", "package.json"), "utf8")) as {
  peerDependencies: { firebase: string; react: string };
  peerDependenciesMeta: { react: unknown };
};

/** The majors of a ">=A.0.0 <B.0.0" peer range: A … B-1 (the only form the client's range takes). */
function claimedMajors(range: string): number[] {
  const match = /^>=(\d+)\.0\.0 <(\d+)\.0\.0$/.exec(range);
  if (match === null) throw new Error(`client/package.json: peer range ${JSON.stringify(range)} is not ">=A.0.0 <B.0.0"`);
  const [from, to] = [Number(match[1]), Number(match[2])];
  return Array.from({ length: to - from }, (_, i) => from + i);
}
const OTHER_MAJORS = claimedMajors(CLIENT_PACKAGE.peerDependencies.firebase).filter((major) => major !== Number(FIREBASE_VERSION.split(".")[0]));

let work: string;
let tarball: string;
let appDir: string;
let hosts: EmulatorHosts;
let admin: Client;
const counterId = `packed-${randomUUID().slice(0, 8)}`;

function appConfig() {
  return { projectId: E2E_PROJECT, region: functionsRegion(), emulators: hosts, counterId };
}

/** JSON lines a test app printed. */
function stepsOf(output: string): { step: string; value?: number | null; message?: string }[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { step: string });
}

beforeAll(async () => {
  hosts = await emulatorHosts();
  admin = await signedInClient({ admin: true });
  work = mkdtempSync(join(tmpdir(), "counter-packed-"));

  tarball = (await packedTarballs()).client;
  appDir = await freshApp("app", FIREBASE_VERSION);

  await admin.call("createCounter", { counterId, numShards: 3 });
  for (let i = 0; i < INCREMENTS; i++) await admin.call("incrementCounter", { counterId, requestId: randomUUID() });
  const deadline = Date.now() + 30_000;
  while ((await admin.readCounter(counterId))?.total !== INCREMENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect((await admin.readCounter(counterId))?.total).toBe(INCREMENTS);
});

/** A fresh "type": "module" app in work/<name> with the packed client and `firebase@<firebase>` installed. */
function freshApp(name: string, firebase: string): Promise<string> {
  return installFreshApp(join(work, name), join(REPO_ROOT, "test", "fixtures", "client-app"), [tarball, `firebase@${firebase}`]);
}

afterAll(async () => {
  await admin?.close();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe("the packed client in a fresh app", () => {
  it("installs with the project's firebase version as its peer, without a second firebase", () => {
    const lock = JSON.parse(readFileSync(join(appDir, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
    const firebases = Object.entries(lock.packages).filter(([path]) => path.endsWith("node_modules/firebase"));
    expect(firebases).toEqual([["node_modules/firebase", expect.objectContaining({ version: FIREBASE_VERSION })]]);
  });

  it("imports the main entry, ESM and CommonJS, in an app without React (an optional peer: not installed); only /react needs it", async () => {
    const lock = JSON.parse(readFileSync(join(appDir, "package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
    expect(Object.keys(lock.packages).filter((path) => /node_modules\/(react|react-dom)$/.test(path))).toEqual([]);
    const esm = await run(process.execPath, ["--input-type=module", "-e", 'const c = await import("@firestore-exact-counter/client"); console.log(typeof c.createCounterClient)'], { cwd: appDir });
    expect(esm).toEqual({ code: 0, stdout: "function\n", stderr: "" });
    const cjs = await run(process.execPath, ["-e", 'console.log(typeof require("@firestore-exact-counter/client").createCounterClient)'], { cwd: appDir });
    expect(cjs).toEqual({ code: 0, stdout: "function\n", stderr: "" });
    const hooks = await run(process.execPath, ["--input-type=module", "-e", 'await import("@firestore-exact-counter/client/react")'], { cwd: appDir });
    expect(hooks.code).not.toBe(0);
    expect(hooks.stderr).toContain("Cannot find package 'react'");
  });

  it("has types for import and for require (TypeScript, module nodenext)", async () => {
    const tsc = require.resolve("typescript/bin/tsc", { paths: [REPO_ROOT] });
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: appDir });
    expect(`${result.stdout}${result.stderr}`).toBe("");
    expect(result.code).toBe(0);
  });

  it("watch() shows the total in a \"type\": \"module\" Node app, and an increment() settles in it", async () => {
    const result = await run(process.execPath, ["node-app.mjs"], { cwd: appDir, env: { ...process.env, APP_CONFIG: JSON.stringify(appConfig()) } });
    const steps = stepsOf(result.stdout);
    expect({ code: result.code, steps, stderr: result.stderr }).toMatchObject({
      code: 0,
      steps: [
        { step: "watched", value: INCREMENTS },
        expect.objectContaining({ step: "incremented" }),
        { step: "settled", value: INCREMENTS + 1 },
      ],
    });
  });

  it("watch() works from CommonJS too (require gets the CommonJS build with the CommonJS SDK)", async () => {
    const total = (await admin.readCounter(counterId))?.total;
    const result = await run(process.execPath, ["node-app.cjs"], { cwd: appDir, env: { ...process.env, APP_CONFIG: JSON.stringify(appConfig()) } });
    expect({ code: result.code, steps: stepsOf(result.stdout) }).toEqual({ code: 0, steps: [{ step: "watched", value: total }] });
  });

  it("bundles for the browser with one copy of the Firestore SDK, and watch() shows the total in Chromium", async () => {
    const metafile = await bundleBrowserApp({ entry: join(appDir, "browser-app.mjs"), outfile: join(appDir, "bundle.js"), absWorkingDir: appDir });
    expect(packageBuildsIn(metafile, "@firebase/firestore")).toEqual(["index.esm.js"]);
    expect(Object.keys(metafile.inputs).filter((input) => input.includes("@firestore-exact-counter/client/lib/esm/"))).not.toEqual([]);

    // Whatever fails (Chromium missing on this machine included), the page's server closes: an open server
    // kept jest running after a failed run ("Jest did not exit one second after the test run has completed").
    const server = await serveStatic(appDir, appConfig());
    try {
      const browser = await launchChromium();
      try {
        const page = await browser.context.newPage();
        await page.goto(server.url);
        await page.waitForFunction(() => {
          const w = globalThis as unknown as { __value?: number | null; __error?: string };
          return w.__value !== undefined || w.__error !== undefined;
        });
        const seen = await page.evaluate(() => {
          const w = globalThis as unknown as { __value?: number | null; __error?: string };
          return { value: w.__value, error: w.__error };
        });
        expect(seen).toEqual({ value: (await admin.readCounter(counterId))?.total, error: undefined });
      } finally {
        await browser.close();
      }
    } finally {
      await server.close();
    }
  });

  it("passes npm publish --dry-run with a README, both builds with their types, and the firebase peer range", async () => {
    // --offline: a dry run needs nothing from the registry, and without it npm waits a minute for one.
    const published = await npm(["publish", "--dry-run", "--offline", "--json"], join(REPO_ROOT, "client"));
    expect({ code: published.code, stderr: published.stderr }).toMatchObject({ code: 0 });
    const report = (JSON.parse(published.stdout) as Record<string, { files: { path: string }[] }>)["@firestore-exact-counter/client"]!;
    const files = report.files.map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining(["README.md", "package.json", "lib/esm/index.js", "lib/esm/index.d.ts", "lib/cjs/index.js", "lib/cjs/index.d.ts", "lib/esm/package.json", "lib/cjs/package.json"]),
    );
    // The React entry: both builds with their types, and react/ for tools that do not read exports.
    expect(files).toEqual(expect.arrayContaining(["lib/esm/react/index.js", "lib/esm/react/index.d.ts", "lib/cjs/react/index.js", "lib/cjs/react/index.d.ts", "react/package.json"]));
    expect(files.filter((f) => f.includes("test"))).toEqual([]);
    expect(CLIENT_PACKAGE.peerDependencies.firebase).toBe(">=10.0.0 <14.0.0");
    expect(CLIENT_PACKAGE.peerDependencies.react).toBe("^18.0.0 || ^19.0.0");
    expect(CLIENT_PACKAGE.peerDependenciesMeta.react).toEqual({ optional: true });
  });

  it("runs docs/app.md's main snippet as written in the fresh app", async () => {
    const counterId = "demo-likes"; // the snippet's, as npm run seed creates it
    await admin.call("createCounter", { counterId, numShards: 10 }).catch((error: unknown) => {
      if ((error as { code?: string }).code !== "functions/already-exists") throw error;
    });
    const before = ((await admin.readCounter(counterId))?.total as number | undefined) ?? 0;
    const snippet = appSnippet()
      .replaceAll('"demo-counter"', JSON.stringify(E2E_PROJECT))
      .replace('"http://127.0.0.1:9099"', JSON.stringify(`http://${hosts.auth}`))
      .replace('"127.0.0.1", 5001', hostArgs(hosts.functions))
      .replace('"127.0.0.1", 8080', hostArgs(hosts.firestore));
    writeFileSync(join(appDir, "snippet.mjs"), snippet);
    // It keeps listening, as an app does: watch its output until it shows the tap, then stop it.
    const seen = await untilPrinted(join(appDir, "snippet.mjs"), `likes: ${before + 1}`);
    expect(seen).toEqual({ found: true, stderr: "", exitCode: null });
    const deadline = Date.now() + 30_000;
    while ((await admin.readCounter(counterId))?.total !== before + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect((await admin.readCounter(counterId))?.total).toBe(before + 1);
  });

  it.each(OTHER_MAJORS)("installs and runs with firebase %i, the newest release of that major (the peer range claims it)", async (major) => {
    const dir = await freshApp(`app-firebase-${major}`, String(major));
    const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
    expect(lock.packages["node_modules/firebase"]?.version).toMatch(new RegExp(`^${major}\\.`));
    const tsc = require.resolve("typescript/bin/tsc", { paths: [REPO_ROOT] });
    const types = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir });
    expect({ code: types.code, output: `${types.stdout}${types.stderr}` }).toEqual({ code: 0, output: "" });
    const result = await run(process.execPath, ["node-app.mjs"], { cwd: dir, env: { ...process.env, APP_CONFIG: JSON.stringify(appConfig()) } });
    expect({ code: result.code, steps: stepsOf(result.stdout).map((s) => s.step), stderr: result.stderr }).toEqual({
      code: 0,
      steps: ["watched", "incremented", "settled"],
      stderr: "",
    });
  });
});

/** The first js block of docs/app.md's "Web and React Native" section: the one an app developer copies. */
function appSnippet(): string {
  const doc = readFileSync(join(REPO_ROOT, "docs", "app.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Web and React Native"));
  const match = /```js\n([^]*?)```/.exec(section);
  if (match === null) throw new Error("docs/app.md has no js block under \"Web and React Native\"");
  return match[1]!;
}

/** "host", port as the snippet's connect…Emulator calls take them. */
function hostArgs(host: string): string {
  const i = host.lastIndexOf(":");
  return `${JSON.stringify(host.slice(0, i))}, ${host.slice(i + 1)}`;
}

/**
 * Runs a Node module until it prints `line` (then stops it) or 60 s pass: whether the line came, what it
 * wrote to stderr, and its exit code if it ended by itself (null when stopped).
 */
function untilPrinted(file: string, line: string): Promise<{ found: boolean; stderr: string; exitCode: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd: join(file, ".."), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let found = false;
    let exitCode: number | null = null;
    const timer = setTimeout(() => child.kill(), 60_000);
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (!found && stdout.split("\n").includes(line)) {
        found = true;
        child.kill();
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("exit", (code) => (exitCode = code));
    child.on("close", () => {
      clearTimeout(timer);
      resolve({ found, stderr, exitCode: found ? null : exitCode });
    });
  });
}
