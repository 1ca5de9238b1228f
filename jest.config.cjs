// Test tiers: a test's tier is its file's suffix, in every package (docs/development.md, "Tests"):
//   *.test.ts           pure: no emulator, no build, no network           npm run test:fast
//   *.emulator.test.ts  the emulator suite (auth, firestore, functions),
//                       and the built packages it serves                  npm run test:emulators -- <pattern>
//   *.browser.test.ts   headless Chromium against the emulators           npm run test:emulators -- <pattern>
//   *.app.test.ts       the packed tarballs in fresh apps, each app with
//                       emulators of its own                              npm run test:apps -- <pattern>
// Tests live in each package's test/ folder (functions/, client/, cli/, scripts/, examples/*/); every
// helper they share in test/helpers/, the apps they install in test/fixtures/. `npm test` runs every tier.
// Packages the functions' dependencies require() although they ship ES modules only (see esm-to-cjs.cjs).
const ESM_ONLY = ["jose"];
const HELPERS = "<rootDir>/test/helpers";
const TIERS = { pure: "test", emulator: "emulator.test", browser: "browser.test", app: "app.test" };
const FOLDERS = "<rootDir>/{functions,client,cli,scripts,examples/*}/test";

const tier = (name) => ({
  displayName: name,
  testEnvironment: "node",
  rootDir: __dirname,
  // What jest reads of the tree: the packages and the tests, not .cache/ (the copies of apps that tests make
  // and remove while another run may be reading the tree) nor the apps' own node_modules.
  roots: ["functions", "client", "cli", "scripts", "examples", "test"].map((dir) => `<rootDir>/${dir}`),
  testMatch: [`${FOLDERS}/*.${TIERS[name]}.ts`],
  // A pure test is any *.test.ts that no other tier's suffix claims.
  testPathIgnorePatterns: ["/node_modules/", ...(name === "pure" ? ["\\.(emulator|browser|app)\\.test\\.ts$"] : [])],
  transform: {
    // Transpiled file by file by esbuild (ts-transform.cjs): `npm run typecheck` checks the types once.
    "^.+\\.tsx?$": `${HELPERS}/ts-transform.cjs`,
    [`/node_modules/(${ESM_ONLY.join("|")})/.+\\.js$`]: `${HELPERS}/esm-to-cjs.cjs`,
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join("|")})/)`],
  moduleNameMapper: {
    // The client's and the CLI's sources import their own files with a ".js" ending (what their ES module builds
    // need); jest loads the .ts files.
    "^(\\.{1,2}/.*)\\.js$": "$1",
    // The admin entry as an app imports it (examples/functions, the CLI's bundle), from the sources.
    "^@firestore-exact-counter/functions/admin$": "<rootDir>/functions/src/admin.ts",
  },
  // The emulators' hosts and the params the functions emulator loads; a pure test needs neither.
  setupFiles: name === "pure" ? [] : [`${HELPERS}/setup-env.ts`],
});

module.exports = {
  // Most tests talk to the emulators, which share the machine's cores with the functions they run: a test
  // that waits for a rollup or a listener may take seconds where a quiet machine takes milliseconds. A
  // test fails on its own assertion or deadline, and jest's default 5 s only when it truly hangs. Tests
  // whose deadlines are longer set their own (jest.setTimeout).
  testTimeout: 60_000,
  projects: Object.keys(TIERS).map(tier),
};
