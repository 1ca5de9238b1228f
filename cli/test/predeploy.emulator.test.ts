// The preflight as the counters codebase's predeploy step (firebase.json): `firebase deploy --only
// functions:counters` with a param combination the functions would refuse stops there, with the
// preflight's message, before the build and before anything is uploaded: this repository's layout here,
// an app's (made by init, installed from the packed tarballs) in scripts/test/init.app.test.ts.
// The offline deploy: test/helpers/offline-deploy.ts.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { firebaseBin, REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { run, stopAll, type Run } from "../../test/helpers/run";
import { withCatchAll } from "../../test/helpers/existing-app";
import { breakLimits, expectStoppedAtPredeploy, offlineDeploy } from "../../test/helpers/offline-deploy";
import { requireBuiltFunctions } from "../../test/helpers/emulators";

// These tests read the built functions (functions/lib), as a deploy does.
beforeAll(requireBuiltFunctions);

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
    expect(checks).toEqual([
      "runtime",
      "functions sdk",
      "params",
      "settings",
      "exposure",
      "unique counters",
      "windows",
      "mirrors",
      "counter kinds",
      "auto create",
      "extension",
      "document counters",
      "leaderboards",
      "id patterns",
      "admin settings",
      "indexes",
      "predeploy",
    ]);
    expect(step.stdout).toMatch(/ok {3}counter kinds +COUNTER_KINDS is empty/);
    expect(step.stdout).toMatch(/ok {3}predeploy +checked before the build; discovery, manifest, placement, codebase need the built functions/);
    expect(step.stdout).toContain("the rules and their guarantees are the firestore predeploy step (npm run preflight -- --rules)");
    expect(step.stdout).toContain("preflight: passed");
    expect(step.code).toBe(0);
    expect(existsSync(join(dir, "functions", "lib"))).toBe(false);
  });
});

describe("the rules checks as the predeploy step of firebase.json's firestore section", () => {
  it("runs whenever a deploy includes Firestore: this repository's firestore section has it", () => {
    const json = JSON.parse(readFileSync(join(REPO_ROOT, "firebase.json"), "utf8")) as { firestore: { predeploy: string[] } };
    expect(json.firestore.predeploy).toEqual(['npm --prefix "$PROJECT_DIR" run preflight -- --rules --dir "$PROJECT_DIR" --project "$GCLOUD_PROJECT"']);
  });

  it("stops firebase deploy --only firestore:rules on a catch-all rule, naming the guarantees it breaks, before anything is uploaded", async () => {
    const dir = repositoryCopy();
    writeFileSync(join(dir, "firestore.rules"), withCatchAll(readFileSync(join(dir, "firestore.rules"), "utf8")));
    const deployed = await offlineDeploy(firebaseBin(), dir, PROJECT, process.env, "firestore:rules");
    const output = deployed.stdout + deployed.stderr;
    expect(output).toContain("preflight (rules)");
    expect(output).toMatch(/FAIL rules guarantees +firestore\.rules: 17 of 22 guarantees broken: signed-in users can list or query counters; /);
    expect(output).toContain("preflight: 1 check(s) failed");
    expect(output).toContain("firestore predeploy error");
    expect(output).not.toMatch(/uploading rules|released rules|Deploy complete/i);
    expect(deployed.code).not.toBe(0);
  });

  it("passes on this repository's rules, offline, starting an emulator of its own", async () => {
    const dir = repositoryCopy();
    const env: NodeJS.ProcessEnv = { ...process.env, PROJECT_DIR: dir, RESOURCE_DIR: dir, GCLOUD_PROJECT: PROJECT };
    delete env.FIRESTORE_EMULATOR_HOST;
    const step = await run("npm", ["--prefix", dir, "run", "preflight", "--", "--rules", "--dir", dir, "--project", PROJECT], { cwd: dir, env });
    const checks = [...step.stdout.matchAll(/^ {2}(?:ok {2}|WARN|FAIL) (.+?) {2,}/gm)].map((m) => m[1]).filter((c) => c !== "local node");
    expect(checks).toEqual(["rules", "rules guarantees", "mirrored fields"]);
    expect(step.stdout).toContain("firestore.rules keeps all 22 guarantees of check-rules");
    expect(step.stdout).toContain("preflight: passed");
    expect(step.code).toBe(0);
  });
});
