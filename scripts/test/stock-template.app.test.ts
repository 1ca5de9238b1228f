// The package added to a codebase exactly as `firebase init functions` of firebase-tools 14.27.0 writes it
// for TypeScript (test/helpers/firebase-init.ts runs firebase-tools' own setup code and templates): its
// package.json pins firebase-admin ^13.6.0 and firebase-functions-test ^3.4.1 (which accepts admin 13 at
// most), and engines.node "24". The user runs the template's npm install, then `npm install <the
// functions tarball>`, nothing else: no overrides, no other version of anything. The codebase then builds
// with the template's own tsc settings (no skipLibCheck: the package's types against admin 13's), and the
// emulators serve the app's own functions, the counters' functions, and an app callable that creates and
// increments a counter through the admin entry, on the template's runtime: firebase-tools runs on the npm
// registry's `node` of that major (installed beside the app), and the functions emulator runs the
// functions on the Node that runs it ("Using node@24 from host").
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mergeRules } from "../../cli/src/init/rules";
import { firebaseInitFunctions, type InitCodebase } from "../../test/helpers/firebase-init";
import { linkFirebaseTools, npmInstall, probeApp, removeApp, useOwnEmulators, type ProbeRun } from "../../test/helpers/fresh-apps";
import { npm, packedTarballs } from "../../test/helpers/packed";
import { stopAll, type Run } from "../../test/helpers/run";

jest.setTimeout(900_000);

const PACKAGE = "@firestore-exact-counter/functions";
const PROJECT = "demo-stock-app";

/** What the user adds to the template's index file: the helloWorld it ships commented out, our one line, and a function of theirs using the admin entry. */
function withCounters(index: string): string {
  const hello = index.replace(/^\/\/ (export const helloWorld[\s\S]*?^)\/\/ \}\);$/m, (_, body: string) => `${body.replace(/^\/\/ ?/gm, "")}});`);
  if (!hello.includes("\nexport const helloWorld")) throw new Error(`the template's src/index.ts has no commented helloWorld to uncomment:\n${index}`);
  return `${hello}
// The counters' functions, deployed from this codebase.
export * from "${PACKAGE}";

import {initializeApp} from "firebase-admin/app";
import {getFirestore} from "firebase-admin/firestore";
import {HttpsError, onCall} from "firebase-functions/https";
import {createCounter, incrementCounter} from
  "${PACKAGE}/admin";

initializeApp();

// A function of the app's that creates and counts a post's views with the admin entry.
export const publishPost = onCall(async (request) => {
  if (!request.auth) throw new HttpsError("unauthenticated", "sign in first");
  const post = getFirestore().collection("posts").doc();
  await post.set({authorId: request.auth.uid, title: "Hello"});
  const views = await createCounter(\`post-\${post.id}-views\`);
  const viewed = await incrementCounter(\`post-\${post.id}-views\`, 2);
  return {id: post.id, views, viewed, node: process.versions.node};
});
`;
}

let root: string;
let app: string;
let functionsDir: string;
let entry: InitCodebase;
let template: { dependencies: Record<string, string>; devDependencies: Record<string, string>; engines: { node: string } };
let added: Run;
let built: Run;

beforeAll(async () => {
  const tarballs = await packedTarballs();
  root = mkdtempSync(join(tmpdir(), "counter-app-stock-"));
  app = join(root, "app");
  mkdirSync(app);
  entry = await firebaseInitFunctions(app);
  functionsDir = join(app, entry.source);
  template = JSON.parse(readFileSync(join(functionsDir, "package.json"), "utf8")) as typeof template;
  // The template's own dependencies (what firebase init's "install dependencies with npm now?" runs), then ours alone.
  await npmInstall(functionsDir);
  added = await npm(["install", "--prefer-offline", "--no-audit", "--no-fund", tarballs.functions], functionsDir);
  appendFileSync(join(functionsDir, ".env"), readFileSync(join(functionsDir, "node_modules", ...PACKAGE.split("/"), "params.env"), "utf8"));
  const index = join(functionsDir, "src", "index.ts");
  writeFileSync(index, withCounters(readFileSync(index, "utf8")));
  built = await npm(["run", "build"], functionsDir);
  // The runtime engines.node names (a deploy runs the functions on it), for firebase-tools to run on.
  mkdirSync(join(root, "runtime"));
  await npmInstall(join(root, "runtime"), [`node@${template.engines.node}`]);
  // The counters' rules block (the rules docs/existing-app.md adds), so the app's users can read totals.
  writeFileSync(join(app, "firestore.rules"), mergeRules(undefined, "firestore.rules"));
  const firebaseJson = JSON.parse(readFileSync(join(app, "firebase.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(join(app, "firebase.json"), JSON.stringify({ ...firebaseJson, firestore: { rules: "firestore.rules" } }, null, 2));
  await useOwnEmulators(app);
});

afterAll(() => {
  stopAll();
  removeApp(app);
});

describe("the package in a codebase as firebase init (firebase-tools 14.27.0, TypeScript) writes it", () => {
  it("starts from the template's versions: firebase-admin 13, and a firebase-functions-test that accepts admin 13 at most", () => {
    expect(template.dependencies["firebase-admin"]).toBe("^13.6.0");
    expect(template.devDependencies["firebase-functions-test"]).toBe("^3.4.1");
    expect(entry).toMatchObject({ source: "functions", codebase: "default" });
  });

  it("installs with npm install <tarball> alone: no ERESOLVE, no overrides, one firebase-admin (the template's 13) for everything", async () => {
    expect({ code: added.code, stderr: added.stderr.split("\n").filter((line) => /ERESOLVE|npm error/.test(line)) }).toEqual({ code: 0, stderr: [] });
    const pkg = JSON.parse(readFileSync(join(functionsDir, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
    expect(pkg.overrides).toBeUndefined();
    expect(Object.keys(pkg.dependencies!).sort()).toEqual([PACKAGE, "firebase-admin", "firebase-functions"]);
    expect(pkg.dependencies!["firebase-admin"]).toBe(template.dependencies["firebase-admin"]);
    const listed = await npm(["ls", "--all", "--json", "firebase-admin"], functionsDir);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: "" });
    const versions = new Set([...listed.stdout.matchAll(/"firebase-admin": \{\s*"version": "([^"]+)"/g)].map((m) => m[1]));
    expect([...versions]).toHaveLength(1);
    expect([...versions][0]).toMatch(/^13\./);
  });

  it("builds with the template's tsc settings (no skipLibCheck): the package's types and the admin entry's against admin 13's", () => {
    expect({ code: built.code, output: built.stdout.replace(/^\n?> .*\n> tsc\n+/, "") + built.stderr }).toEqual({ code: 0, output: "" });
  });

  let served: ProbeRun;
  it("serves the app's functions and the counters in the emulators on the template's Node: the admin entry creates and counts from the app's callable, and the callables count", async () => {
    const firebase = linkFirebaseTools(app);
    const node = join(root, "runtime", "node_modules", "node", "bin", "node");
    served = await probeApp(app, firebase, PROJECT, { PROBE_APP_CALLABLE: "publishPost@us-central1", PROBE_CREATOR: "admin" }, node);
    expect(served.probe.app).toEqual({
      id: expect.any(String) as string,
      node: expect.stringMatching(new RegExp(`^${template.engines.node}\\.`)) as string,
      views: { counterId: expect.stringMatching(/^post-.+-views$/) as string, numShards: 1, unique: false, windowed: false },
      viewed: { counterId: expect.stringMatching(/^post-.+-views$/) as string, shard: 0, applied: true, writeTime: { seconds: expect.any(Number) as number, nanoseconds: expect.any(Number) as number } },
    });
    expect(served.probe.counter).toMatchObject({ created: { numShards: 2 }, applied: [true, true, true], total: 3, numShards: 2 });
  });

  it("never asks for a param in the emulator: params.env gives every one a value", () => {
    const output = served.run.stdout + served.run.stderr;
    expect(output).not.toMatch(/Enter a|Please enter|value for [A-Z_]+/);
  });
});
