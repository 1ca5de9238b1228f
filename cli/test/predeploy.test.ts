// The preflight as the counters codebase's predeploy step (firebase.json): `firebase deploy --only
// functions:counters` with a param combination the functions would refuse stops there, with the
// preflight's message, before the build and before anything is uploaded; in this repository's layout and
// in an app's (docs/existing-app.md).
//
// Offline: firebase-tools wants credentials before it runs anything (requireAuth), then checks IAM
// permissions over the network, where a failure is only logged, then runs the predeploy steps. So the
// deploy runs with a dummy token and every request sent to a closed local port (the proxy variables):
// nothing leaves the machine, and without a real project nothing could be deployed even past predeploy.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { firebaseBin, REPO_ROOT } from "../lib/firebase-cli";
import { COUNTERS_SOURCE, addCounters, copyOfFixtureApp } from "./helpers/existing-app";
import { run, runNode, stopAll, type Run } from "./helpers/run";

jest.setTimeout(180_000);

const COPIES = join(REPO_ROOT, ".cache", "predeploy");
const PROJECT = "demo-predeploy";
/** A bad combination: one deploy lowers MAX_DELTA below a COUNTER_KINDS rule's maxDelta. */
const BAD_KINDS = "post-{id}-views=shards:50;maxDelta:10";
const BAD_MESSAGE = 'COUNTER_KINDS: rule 1 "post-{id}-views=shards:50;maxDelta:10" sets maxDelta to "10": it must be an integer from 1 to 5 (MAX_DELTA)';

const copies: string[] = [];

afterAll(() => {
  stopAll();
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** This repository as a deploy reads it: firebase.json, the root package (npm run preflight), the functions' sources, not built. */
function repositoryCopy(): string {
  mkdirSync(COPIES, { recursive: true });
  const dir = mkdtempSync(join(COPIES, "repo-"));
  copies.push(dir);
  for (const file of ["firebase.json", ".firebaserc", "firestore.rules", "firestore.indexes.json", "package.json"]) cpSync(join(REPO_ROOT, file), join(dir, file));
  symlinkSync(join(REPO_ROOT, "scripts"), join(dir, "scripts"));
  mkdirSync(join(dir, "functions"));
  for (const file of ["package.json", ".env", "tsconfig.json", "tsconfig.build.json", "tsconfig.base.json", "src"]) {
    cpSync(join(REPO_ROOT, "functions", file), join(dir, "functions", file), { recursive: true });
  }
  symlinkSync(join(REPO_ROOT, "functions", "node_modules"), join(dir, "functions", "node_modules"));
  return dir;
}

/** Lowers MAX_DELTA below a kind's maxDelta for the project, as one careless deploy would. */
function breakLimits(functionsDir: string): void {
  writeFileSync(join(functionsDir, `.env.${PROJECT}`), `MAX_DELTA=5\nCOUNTER_KINDS=${BAD_KINDS}\n`);
}

/** `firebase deploy --only functions:counters` in `dir`, offline (see the header). */
function deploy(dir: string): Promise<Run> {
  const closed = "http://127.0.0.1:9";
  const env: NodeJS.ProcessEnv = { ...process.env, FIREBASE_TOKEN: "offline-test-token", NO_PROXY: "", no_proxy: "" };
  for (const name of ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"]) env[name] = closed;
  return runNode([firebaseBin(), "deploy", "--only", "functions:counters", "--project", PROJECT, "--non-interactive"], { cwd: dir, env });
}

function expectStoppedAtPredeploy(deployed: Run, functionsDir: string): void {
  const output = deployed.stdout + deployed.stderr;
  expect(output).toContain("preflight (predeploy)");
  expect(output).toMatch(new RegExp(`FAIL counter kinds +${BAD_MESSAGE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  expect(output).toContain("functions predeploy error");
  expect(output).not.toMatch(/preparing|uploading|Deploy complete/i);
  expect(deployed.code).not.toBe(0);
  // Stopped before the next predeploy step: nothing was built.
  expect(existsSync(join(functionsDir, "lib"))).toBe(false);
}

describe("the preflight as the predeploy step of codebase counters", () => {
  it("runs first in this repository's firebase.json, before the build", () => {
    const json = JSON.parse(readFileSync(join(REPO_ROOT, "firebase.json"), "utf8")) as { functions: { codebase: string; predeploy: string[] }[] };
    const steps = json.functions.find((f) => f.codebase === "counters")!.predeploy;
    expect(steps).toEqual(['npm --prefix "$PROJECT_DIR" run preflight -- --dir "$PROJECT_DIR" --project "$GCLOUD_PROJECT"', 'npm --prefix "$RESOURCE_DIR" run build']);
  });

  it("stops firebase deploy on a param combination the functions would refuse, with the preflight's message (this repository)", async () => {
    const dir = repositoryCopy();
    breakLimits(join(dir, "functions"));
    expectStoppedAtPredeploy(await deploy(dir), join(dir, "functions"));
  });

  it("stops it the same way in an app's project, the preflight run from the checkout (docs/existing-app.md)", async () => {
    const app = copyOfFixtureApp();
    copies.push(app);
    addCounters(app);
    breakLimits(join(app, COUNTERS_SOURCE));
    expectStoppedAtPredeploy(await deploy(app), join(app, COUNTERS_SOURCE));
  });

  it("passes on sound values, offline, with no build and no emulator, as firebase runs the step", async () => {
    const dir = repositoryCopy();
    // What firebase-tools sets for a hook command (deploy/lifecycleHooks.js), and no emulator to lean on.
    const env: NodeJS.ProcessEnv = { ...process.env, PROJECT_DIR: dir, RESOURCE_DIR: join(dir, "functions"), GCLOUD_PROJECT: PROJECT };
    delete env.FIRESTORE_EMULATOR_HOST;
    const step = await run("npm", ["--prefix", dir, "run", "preflight", "--", "--dir", dir, "--project", PROJECT], { cwd: dir, env });
    expect(step.stdout).toContain("preflight (predeploy)");
    // Every check that needs neither the build nor an emulator, in the runner's order ("local node" only
    // says which Node ran the step).
    const checks = [...step.stdout.matchAll(/^ {2}(?:ok {2}|WARN|FAIL) (.+?) {2,}/gm)].map((m) => m[1]).filter((c) => c !== "local node");
    expect(checks).toEqual(["runtime", "functions sdk", "params", "settings", "exposure", "unique counters", "windows", "mirrors", "counter kinds", "indexes", "predeploy"]);
    expect(step.stdout).toMatch(/ok {3}counter kinds +COUNTER_KINDS is empty/);
    expect(step.stdout).toMatch(/ok {3}predeploy +checked before the build; discovery, manifest, placement, codebase, rules need the built functions or an emulator/);
    expect(step.stdout).toContain("preflight: passed");
    expect(step.code).toBe(0);
    expect(existsSync(join(dir, "functions", "lib"))).toBe(false);
  });
});
