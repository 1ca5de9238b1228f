// A CommonJS app re-exports the packed functions (fixtures/cjs-app): its codebase initializes its admin
// app and calls setGlobalOptions({ maxInstances: 7, region: "europe-west1", minInstances: 1 }) before it
// requires the package (so its minInstances reaches ours), and defines its own callable after. The shared
// steps and checks: reexport.ts.
import { reexportTests } from "../../test/helpers/reexport";

jest.setTimeout(600_000);

const IMPORTER = `// Loads the package the way the app's codebase does, and prints what it exports and what it changed.
const { getApps } = require("firebase-admin/app");
const { __getSpec } = require("firebase-functions/v2/options");
const state = () => ({ apps: getApps().map((app) => app.name), globalOptions: __getSpec().globalOptions });
const before = state();
const loaded = require("@firestore-exact-counter/functions");
console.log(JSON.stringify({ exports: Object.keys(loaded).sort(), before, after: state() }));
`;

describe("a CommonJS app that re-exports the packed functions after its own initializeApp() and setGlobalOptions()", () => {
  reexportTests({ fixture: "cjs-app", project: "demo-cjs-app", importer: { file: "importer.cjs", source: IMPORTER }, globalOptionsReachOurs: true });
});
