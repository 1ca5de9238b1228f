// Test tiers (see README, "Tests"): unit = pure logic, no emulator; emulator = functions wrapped with
// firebase-functions-test against the real Firestore and Auth emulators; rules = firestore.rules with
// @firebase/rules-unit-testing; e2e = the Firebase JS SDK against the functions emulator.
// scripts = the CLI's commands (preflight, check-rules, reconcile, init) and the repository's scripts (seed,
// make-admin, bench) run as a user runs them. client = the
// app-side client package (client/): its pure coverage rule, and the client with the real JS SDK against
// the emulators. app = what an app developer gets: the packed client installed in fresh apps (Node ESM,
// CommonJS, a browser bundle), the packed functions and CLI in fresh apps served by their own emulators
// (scripts/test/packed), and the example like button (examples/web), in headless Chromium.
// `npm test` runs all of them inside `firebase emulators:exec`.
// Packages the functions' dependencies require() although they ship ES modules only (see esm-to-cjs.cjs).
const ESM_ONLY = ["jose"];

const tier = (name, match, extra = {}) => ({
  displayName: name,
  preset: "ts-jest",
  testEnvironment: "node",
  rootDir: __dirname,
  testMatch: [match.startsWith("<rootDir>") ? match : `<rootDir>/functions/test/${match}`],
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "<rootDir>/tsconfig.json" }],
    [`/node_modules/(${ESM_ONLY.join("|")})/.+\\.js$`]: "<rootDir>/functions/test/helpers/esm-to-cjs.cjs",
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join("|")})/)`],
  ...extra,
});

module.exports = {
  // Most tests talk to the emulators, which share the machine's cores with the functions they run: a test
  // that waits for a rollup or a listener may take seconds where a quiet machine takes milliseconds. A
  // test fails on its own assertion or deadline, and jest's default 5 s only when it truly hangs. Tests
  // whose deadlines are longer set their own (jest.setTimeout).
  testTimeout: 60_000,
  projects: [
    tier("unit", "unit/**/*.test.ts"),
    // wrapped.ts sets the wrapped tests' project before any test file can import the functions (whose
    // first run initializes the default admin app from it), whatever order a file's imports end up in.
    tier("emulator", "emulator/**/*.emulator.test.ts", {
      setupFiles: ["<rootDir>/functions/test/helpers/setup-env.ts", "<rootDir>/functions/test/helpers/wrapped.ts"],
      // The admin entry as an app imports it (examples/functions), from the sources.
      moduleNameMapper: { "^@firestore-exact-counter/functions/admin$": "<rootDir>/functions/src/admin.ts" },
    }),
    tier("rules", "rules/**/*.rules.test.ts", { setupFiles: ["<rootDir>/functions/test/helpers/setup-env.ts"] }),
    // Some run the client's sources (an app's watch of counters AUTO_CREATE makes), which import "./x.js".
    tier("e2e", "e2e/**/*.e2e.test.ts", {
      setupFiles: ["<rootDir>/functions/test/helpers/setup-env.ts"],
      moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
    }),
    // scripts = the CLI's commands (deploy preflight, reconcile at scale, init) and the scripts against the emulators.
    // Some run the client's sources (npm start's lines for an app), which import "./x.js" like the client tier.
    tier("scripts", "<rootDir>/scripts/test/*.test.ts", {
      testMatch: ["<rootDir>/scripts/test/*.test.ts", "<rootDir>/cli/test/*.test.ts"],
      setupFiles: ["<rootDir>/functions/test/helpers/setup-env.ts"],
      // The CLI's commands import the admin entry as the CLI's bundle takes it, from the sources.
      moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1", "^@firestore-exact-counter/functions/admin$": "<rootDir>/functions/src/admin.ts" },
    }),
    // The client's sources import "./x.js" (what its ESM build needs); jest loads the .ts files.
    tier("client", "<rootDir>/client/test/*.test.ts", {
      setupFiles: ["<rootDir>/functions/test/helpers/setup-env.ts"],
      moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
    }),
    tier("app", "<rootDir>/client/test/packed/**/*.test.ts", {
      testMatch: ["<rootDir>/client/test/packed/**/*.test.ts", "<rootDir>/scripts/test/packed/*.test.ts", "<rootDir>/examples/web/test/**/*.test.ts", "<rootDir>/examples/react/test/**/*.test.ts"],
      setupFiles: ["<rootDir>/functions/test/helpers/setup-env.ts"],
    }),
  ],
};
