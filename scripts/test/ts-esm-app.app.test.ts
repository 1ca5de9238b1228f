// A TypeScript ES module app re-exports the packed functions (fixtures/ts-esm-app: `export * from
// "@firestore-exact-counter/functions"`), built with tsc against the package's types under module
// nodenext; ES imports run first, so its initializeApp() and setGlobalOptions() come after the package is
// loaded. The shared steps and checks: reexport.ts.
import { npm } from "../../test/helpers/packed";
import { reexportTests } from "../../test/helpers/reexport";

jest.setTimeout(600_000);

const IMPORTER = `// Loads the package the way the app's codebase does, and prints what it exports and what it changed.
import { getApps } from "firebase-admin/app";
import { __getSpec } from "firebase-functions/v2/options";
const state = () => ({ apps: getApps().map((app) => app.name), globalOptions: __getSpec().globalOptions });
const before = state();
const loaded = await import("@firestore-exact-counter/functions");
// Node's own names for a CommonJS module seen from ESM (its whole exports object; tsc's interop flag), not the package's.
const exported = Object.keys(loaded).filter((name) => !["default", "module.exports", "__esModule"].includes(name)).sort();
console.log(JSON.stringify({ exports: exported, before, after: state() }));
`;

describe("a TypeScript ES module app that re-exports the packed functions, then calls initializeApp() and setGlobalOptions()", () => {
  reexportTests({
    fixture: "ts-esm-app",
    project: "demo-ts-esm-app",
    // The app's own build (tsc, its devDependency): the package's types must resolve under nodenext.
    build: (functionsDir) => npm(["run", "build"], functionsDir),
    importer: { file: "importer.mjs", source: IMPORTER },
    // ES imports run first: the app's setGlobalOptions() comes after ours were defined.
    globalOptionsReachOurs: false,
  });
});
