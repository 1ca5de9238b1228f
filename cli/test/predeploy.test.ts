// The preflight as the counters codebase's predeploy step (firebase.json): `firebase deploy --only
// functions:counters` with a param combination the functions would refuse stops there, with the
// preflight's message, before the build and before anything is uploaded: this repository's layout here,
// an app's (made by init, installed from the packed tarballs) in scripts/test/packed/init.app.test.ts.
// The offline deploy: helpers/offline-deploy.ts.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { firebaseBin, REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { run, stopAll, type Run } from "../../scripts/test/helpers/run";
import { breakLimits, expectStoppedAtPredeploy, offlineDeploy } from "./helpers/offline-deploy";

jest.setTimeout(180_000);

const COPIES = join(REPO_ROOT, ".cache", "predeploy");
const PROJECT = "demo-predeploy";

const copies: string[] = [];

afterAll(() => {
  stopAll();
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** This repository as a deploy reads it: firebase.json, the root package (npm run preflight, the CLI's sources), the functions' sources, not built. */
function repositoryCopy(): string {
  mkdirSync(COPIES, { recursive: true });
  const dir = mkdtempSync(join(COPIES, "repo-"));
  copies.push(dir);
  for (const file of ["firebase.json", ".firebaserc", "firestore.rules", "firestore.indexes.json", "package.json"]) cpSync(join(REPO_ROOT, file), join(dir, file));
  symlinkSync(join(REPO_ROOT, "scripts"), join(dir, "scripts"));
  symlinkSync(join(REPO_ROOT, "cli"), join(dir, "cli"));
  mkdirSync(join(dir, "functions"));
  for (const file of ["package.json", ".env", "tsconfig.json", "tsconfig.build.json", "tsconfig.base.json", "src"]) {
    cpSync(join(REPO_ROOT, "functions", file), join(dir, "functions", file), { recursive: true });
  }
  symlinkSync(join(REPO_ROOT, "functions", "node_modules"), join(dir, "functions", "node_modules"));
  return dir;
}

/** The deploy stopped at the preflight, before the next predeploy step: nothing was built. */
function expectStoppedBeforeBuild(deployed: Run, functionsDir: string): void {
  expectStoppedAtPredeploy(deployed);
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
    breakLimits(join(dir, "functions"), PROJECT);
    expectStoppedBeforeBuild(await offlineDeploy(firebaseBin(), dir, PROJECT), join(dir, "functions"));
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
