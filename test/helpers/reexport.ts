// What the two re-export tests share (cjs-app.app.test.ts, ts-esm-app.app.test.ts): an app whose own
// codebase re-exports @firestore-exact-counter/functions, installed from its tarball as the package's
// README says (the package with firebase-functions and firebase-admin, params.env appended to the
// codebase's .env), then checked where a user would notice: what importing the package does, what a
// deploy would read from the codebase, and the app's emulators serving the app's callable and the
// counters side by side.
import { appendFileSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useFirebaseToolsFrom } from "../../cli/src/lib/firebase-tools-internals";
import { endpointsOf, resolveBuild, discoverBuild } from "../../cli/src/lib/codebases";
import { DEPLOYED_FUNCTIONS } from "../../cli/src/preflight/manifest";
import { parseDocumentCounterRules } from "../../functions/src/model/document-rules";
import { DOCUMENT_TRIGGER_GROUP, documentTriggers } from "../../functions/src/model/document-triggers";
import { mergeRules } from "../../cli/src/init/rules";
import { freshApp, linkFirebaseTools, npmInstall, probeApp, removeApp, userShellEnv, useOwnEmulators, type ProbeRun } from "../helpers/fresh-apps";
import { packedTarballs } from "../helpers/packed";
import { runNode, stopAll, type Run } from "../helpers/run";

const PACKAGE = "@firestore-exact-counter/functions";
/** The app's global options (setGlobalOptions) and its own callable's name. */
const APP_OPTIONS = { maxInstances: 7, region: "europe-west1" };
/** A global option the app sets (with APP_OPTIONS) that our functions do not set themselves, except rollupTotal (ROLLUP_MIN_INSTANCES, 0). */
const APP_MIN_INSTANCES = 1;
const APP_CALLABLE = "sayHello";
/** Ours, from the shipped defaults (params.env): MAX_INSTANCES, REGION. */
const OUR_OPTIONS = { maxInstances: 100, region: "us-central1" };

export interface AppShape {
  fixture: string;
  project: string;
  /** The codebase's build, when it has one (TypeScript): run after the install. */
  build?: (functionsDir: string) => Promise<Run>;
  /** A one-off program run in the codebase folder that imports the package and prints the exports it sees. */
  importer: { file: string; source: string };
  /**
   * Whether the app's setGlobalOptions() reaches our functions where they set nothing themselves: in
   * CommonJS when called before the require, never in an ES module (its imports run first).
   */
  globalOptionsReachOurs: boolean;
}

/** Defines the shape's tests (in a describe of the calling test file). */
export function reexportTests(shape: AppShape): void {
  let app: string;
  let functionsDir: string;
  let firebase: string;
  let build: Run | undefined;

  beforeAll(async () => {
    const tarballs = await packedTarballs();
    app = freshApp(shape.fixture);
    functionsDir = join(app, "functions");
    // The README's install: the package, and its peers, one copy each in the codebase.
    await npmInstall(functionsDir, [tarballs.functions, "firebase-functions@^7.4.0", "firebase-admin@^14.5.1"]);
    if (shape.build) await npmInstall(functionsDir, ["--save-dev", "typescript@~5.9.3"]);
    appendFileSync(join(functionsDir, ".env"), readFileSync(join(functionsDir, "node_modules", ...PACKAGE.split("/"), "params.env"), "utf8"));
    build = shape.build ? await shape.build(functionsDir) : undefined;
    // The app's rules with the counters' block (what init would add), so its users can read totals.
    writeFileSync(join(app, "firestore.rules"), mergeRules(readFileSync(join(app, "firestore.rules"), "utf8"), "firestore.rules"));
    firebase = linkFirebaseTools(app);
    await useOwnEmulators(app);
    useFirebaseToolsFrom(app);
  });

  afterAll(() => {
    stopAll();
    removeApp(app);
  });

  it("installs with one firebase-functions and one firebase-admin in the codebase: the package's are its peers", () => {
    const nested = join(functionsDir, "node_modules", ...PACKAGE.split("/"), "node_modules");
    const own = existsSync(nested) ? readdirSync(nested) : [];
    expect(own.filter((name) => name === "firebase-functions" || name === "firebase-admin")).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(functionsDir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies).sort()).toEqual([PACKAGE, "firebase-admin", "firebase-functions"]);
    if (build !== undefined) expect({ code: build.code, output: `${build.stdout}${build.stderr}`.replace(/^npm warn Unknown .*\n/gm, "") }).toMatchObject({ code: 0 });
  });

  it("exports exactly the deployed functions, and importing them changes neither the app's admin apps nor its global options", async () => {
    writeFileSync(join(functionsDir, shape.importer.file), shape.importer.source);
    // As the app's own node would run it: none of this repository's params (LEADERBOARDS would add rollupBoard).
    const run = await runNode([shape.importer.file], { cwd: functionsDir, env: userShellEnv() });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const seen = JSON.parse(run.stdout) as { exports: string[]; before: unknown; after: unknown };
    // Besides the functions, the group of document triggers: an empty object while DOCUMENT_COUNTERS is empty.
    expect(seen.exports).toEqual([...DEPLOYED_FUNCTIONS, DOCUMENT_TRIGGER_GROUP].sort());
    expect(seen.after).toEqual(seen.before);
  });

  it("keeps the app's global options on its own callable, and ours on ours, as a deploy reads the codebase", async () => {
    const project = { projectId: shape.project, projectDir: app, firebaseConfig: { projectId: shape.project, databaseURL: "", storageBucket: "" } };
    const codebase = { source: "functions", codebase: "default" };
    const endpoints = endpointsOf(await resolveBuild(project, codebase, await discoverBuild(project, codebase)));
    const options = Object.fromEntries(endpoints.map((e) => [e.id, { maxInstances: e.maxInstances, region: e.region }]));
    expect(options).toEqual({
      [APP_CALLABLE]: APP_OPTIONS,
      ...Object.fromEntries(DEPLOYED_FUNCTIONS.map((name) => [name, OUR_OPTIONS])),
    });
    // What docs/existing-app.md says of the module formats: an option ours do not set comes from the app's
    // global options in CommonJS (set before the require), never in an ES module.
    const minInstances = Object.fromEntries(endpoints.map((e) => [e.id, e.minInstances ?? 0]));
    const reached = shape.globalOptionsReachOurs ? APP_MIN_INSTANCES : 0;
    expect(minInstances).toEqual({
      [APP_CALLABLE]: APP_MIN_INSTANCES,
      ...Object.fromEntries(DEPLOYED_FUNCTIONS.map((name) => [name, name === "rollupTotal" ? 0 : reached])),
    });
  });

  it("deploys the document triggers' group as documentCounters-<name> once DOCUMENT_COUNTERS names a pattern, with our options", async () => {
    const rules = "posts/{post}/comments/{comment}=post-{post}-comments";
    const [trigger] = documentTriggers(parseDocumentCounterRules("DOCUMENT_COUNTERS", rules));
    const projectEnv = join(functionsDir, `.env.${shape.project}`);
    writeFileSync(projectEnv, `DOCUMENT_COUNTERS=${rules}\n`);
    try {
      const project = { projectId: shape.project, projectDir: app, firebaseConfig: { projectId: shape.project, databaseURL: "", storageBucket: "" } };
      const codebase = { source: "functions", codebase: "default" };
      const endpoints = endpointsOf(await resolveBuild(project, codebase, await discoverBuild(project, codebase)));
      const document = endpoints.find((e) => e.id === trigger!.id);
      expect(endpoints.map((e) => e.id).sort()).toEqual([APP_CALLABLE, ...DEPLOYED_FUNCTIONS, trigger!.id].sort());
      expect({ region: document?.region, maxInstances: document?.maxInstances, retry: document?.eventTrigger?.retry }).toEqual({ ...OUR_OPTIONS, retry: true });
    } finally {
      rmSync(projectEnv);
    }
  });

  let served: ProbeRun;
  it("serves the app's callable and the counters side by side in the emulators: the app keeps its own admin app, and the counters count", async () => {
    served = await probeApp(app, firebase, shape.project, { PROBE_APP_CALLABLE: `${APP_CALLABLE}@${APP_OPTIONS.region}`, PROBE_CREATOR: "admin" });
    expect(served.probe.projectId).toBe(shape.project);
    expect(served.probe.app).toEqual({ id: expect.any(String) as string, defaultApps: 1 });
    expect(served.probe.counter).toMatchObject({ created: { numShards: 2, unique: false, windowed: false }, applied: [true, true, true], total: 3, numShards: 2 });
  });

  it("never asks for a param in the emulator: params.env gives every one a value", () => {
    expect(served.run.stdout + served.run.stderr).not.toMatch(/Enter a|Please enter|value for [A-Z_]+/);
  });
}
