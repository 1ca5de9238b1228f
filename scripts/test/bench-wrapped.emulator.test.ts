// The benchmark's production-like instances (scripts/bench/delivery/wrapped.ts): each a fresh copy of the
// functions package's code, loaded through its main entry from the built package, so what the package
// keeps in module state (the rollup's memos of claims, leading edges and committed parents, in
// functions/lib/entry/rollupTotal.js; the shape cache) is each instance's own, while the dependencies stay shared. Run
// in a Node process of its own, as the benchmark runs (jest keeps a module registry of its own).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "../lib/firebase-cli";
import { requireBuiltFunctions } from "../../test/helpers/emulators";

// These tests read the built functions (functions/lib), as a deploy does.
beforeAll(requireBuiltFunctions);

/** What a process that made two instances saw (see the script below). */
interface Seen {
  mainIsTheEntry: boolean;
  packageModules: number;
  distinct: Record<string, boolean>;
  cacheUntouched: boolean;
  dependenciesShared: boolean;
}

const SCRIPT = `
const { createRequire } = require("node:module");
const { sep } = require("node:path");
const { freshCopy } = require(${JSON.stringify(join(REPO_ROOT, "scripts", "bench", "delivery", "wrapped.ts"))});
const { entryFile, packageDir } = require(${JSON.stringify(join(REPO_ROOT, "scripts", "bench", "product.ts"))});
const load = createRequire(${JSON.stringify(join(REPO_ROOT, "package.json"))});
const main = entryFile(".");
const own = (path) => path.startsWith(packageDir() + sep) && !path.includes(sep + "node_modules" + sep);
const shared = () => Object.keys(load.cache).filter((p) => /[\\\\/]node_modules[\\\\/](firebase-admin|firebase-functions)[\\\\/]/.test(p)).map((p) => load.cache[p]);
const cached = load(main);
const before = Object.keys(load.cache).filter(own).sort();
const dependencies = shared();
const [a, b] = [freshCopy(main, packageDir()), freshCopy(main, packageDir())];
const names = ["rollupTotal", "createCounter", "incrementCounter", "rollupWindows"];
const after = Object.keys(load.cache).filter(own).sort();
const now = shared();
process.stdout.write(JSON.stringify({
  mainIsTheEntry: main === load.resolve("@firestore-exact-counter/functions"),
  packageModules: before.length,
  distinct: Object.fromEntries(names.map((n) => [n, typeof a[n] === "function" && a[n] !== b[n] && a[n] !== cached[n]])),
  cacheUntouched: JSON.stringify(after) === JSON.stringify(before) && load(main) === cached,
  dependenciesShared: now.length === dependencies.length && now.every((m, i) => m === dependencies[i]),
}));
`;

describe("a production-like instance of the rollup", () => {
  it("is the built package's main entry, evaluated afresh with every module of the package's code, its dependencies shared", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "-e", SCRIPT], { cwd: REPO_ROOT, encoding: "utf8" });
    const seen = JSON.parse(out) as Seen;
    expect(seen.mainIsTheEntry).toBe(true);
    expect(seen.packageModules).toBeGreaterThan(10);
    // Each copy's rollupTotal comes from its own evaluation of functions/lib/entry/rollupTotal.js (its own memos), and so
    // does every other export: no module of the package is shared between two instances.
    expect(seen.distinct).toEqual({ rollupTotal: true, createCounter: true, incrementCounter: true, rollupWindows: true });
    // The process's own copy of the package is left as it was, and firebase-admin and firebase-functions are one each.
    expect(seen.cacheUntouched).toBe(true);
    expect(seen.dependenciesShared).toBe(true);
  });
});
