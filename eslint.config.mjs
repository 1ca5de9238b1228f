// ESLint for every TypeScript file: typescript-eslint's type-checked recommended rules, and the house's
// two import rules (below): the tools import only the functions' model, and nothing but tests imports the
// tests' helpers.
import js from "@eslint/js";
import { dirname, relative, resolve } from "node:path";
import tseslint from "typescript-eslint";

const ROOT = import.meta.dirname;

/** What an app imports of ours: the packages' entries. Anything else of the product is the model's to offer. */
const PUBLIC_ENTRIES = ["@firestore-exact-counter/functions", "@firestore-exact-counter/functions/admin", "@firestore-exact-counter/client", "@firestore-exact-counter/client/react"];

/**
 * Imports of the functions beyond functions/src/model/ that a tool still makes: importer -> modules (paths
 * without extension). Each group says why it is not the model yet; the list only shrinks.
 */
const NOT_MODEL_YET = {
  // The benchmark drives the product through the model and the packages' entries (scripts/bench/product.ts),
  // but for one measurement no entry can offer: workload 10's midnight commit, run with its day clock a day
  // ahead (RollupDeps.dayClockMs) on a project of its own. The deployed rollupWindows and rollupTotal run on the
  // real clock (a process clock set ahead breaks the Firestore client's deadlines) and the default app's project.
  "scripts/bench/workloads/midnight.ts": [
    // the rollup's settings (interval, stale claims) as rollupTotal reads them, for the dependencies below;
    "functions/src/config/read",
    // the rollup's Firestore store, on the midnight project's app;
    "functions/src/rollup/firestore-store",
    // the rollup of each counter's one increment there (rollupTotal rolls up the default app's project only);
    "functions/src/rollup/index",
    // commitMidnight itself, with the day clock a day ahead;
    "functions/src/rollup/midnight",
    // RollupDeps, the type of what those take.
    "functions/src/rollup/types",
  ],
};

/** The repository path (no extension) a relative import names, or undefined for a package's. */
function importedPath(filename, source) {
  if (!source.startsWith(".")) return undefined;
  return relative(ROOT, resolve(dirname(filename), source)).replace(/\\/g, "/").replace(/\.(js|ts)$/, "");
}

/** Calls `check(node, source)` for every import, export … from, import() and require() of a file. */
function eachImport(check) {
  const literal = (node, source) => source && source.type === "Literal" && typeof source.value === "string" && check(node, source.value);
  return {
    ImportDeclaration: (node) => literal(node, node.source),
    ExportNamedDeclaration: (node) => literal(node, node.source),
    ExportAllDeclaration: (node) => literal(node, node.source),
    ImportExpression: (node) => literal(node, node.source),
    CallExpression: (node) => node.callee.type === "Identifier" && node.callee.name === "require" && literal(node, node.arguments[0]),
  };
}

const house = {
  rules: {
    "tools-import-the-model": {
      meta: { type: "problem", schema: [], docs: { description: "cli/, scripts/ and examples/ import only functions/src/model/ and the packages' public entries" } },
      create(context) {
        const importer = relative(ROOT, context.filename).replace(/\\/g, "/");
        const allowed = NOT_MODEL_YET[importer] ?? [];
        return eachImport((node, source) => {
          if (source.startsWith("@firestore-exact-counter/") && !PUBLIC_ENTRIES.includes(source)) {
            context.report({ node, message: `${source} is no public entry: import one of ${PUBLIC_ENTRIES.join(", ")}` });
            return;
          }
          const path = importedPath(context.filename, source);
          if (path === undefined || !/^functions\/(src|test)\//.test(path) || path.startsWith("functions/src/model/") || allowed.includes(path)) return;
          context.report({ node, message: `${path} is not the functions' model: a tool imports functions/src/model/ or a package's public entry (see NOT_MODEL_YET in eslint.config.mjs)` });
        });
      },
    },
    "no-test-helpers-outside-tests": {
      meta: { type: "problem", schema: [], docs: { description: "only tests import test/helpers/" } },
      create(context) {
        const importer = relative(ROOT, context.filename).replace(/\\/g, "/");
        const allowed = NOT_MODEL_YET[importer] ?? [];
        return eachImport((node, source) => {
          const path = importedPath(context.filename, source);
          if (path === undefined || !path.startsWith("test/helpers/") || allowed.includes(path)) return;
          context.report({ node, message: `${path} is a test helper: only tests import it` });
        });
      },
    },
  },
};

export default tseslint.config(
  { ignores: ["**/node_modules/**", "functions/lib/**", "client/lib/**", "examples/web/dist/**", "examples/react/dist/**", ".cache/**", "bench-results/**", "test/fixtures/**", "cli/lib/**", "cli/bin/**", "**/*.cjs", "**/*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { house },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": "off",
    },
  },
  { files: ["cli/src/**/*.ts", "scripts/**/*.ts", "examples/**/*.ts", "examples/**/*.tsx"], ignores: ["scripts/test/**", "examples/*/test/**"], rules: { "house/tools-import-the-model": "error" } },
  { files: ["**/*.ts"], ignores: ["**/test/**"], rules: { "house/no-test-helpers-outside-tests": "error" } },
);
