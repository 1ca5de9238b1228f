// The jest transform of every TypeScript file the tests load (tests, helpers, the packages' sources):
// esbuild strips the types and writes CommonJS, file by file, as ts-jest's isolatedModules did, in a
// fraction of its time (a cold ts-jest loaded the TypeScript compiler in every worker and spent about
// 15 s of a 2-core run transpiling). Types are checked once, by `npm run typecheck` (tsconfig.json's
// isolatedModules holds every file to what a file-by-file transpiler can compile).
const { createHash } = require("node:crypto");
const { readFileSync } = require("node:fs");
const { transformSync, version } = require("esbuild");

// jest's cache keys a file's output by its source and path: this file and esbuild's version go in too.
const SELF = createHash("sha256").update(readFileSync(__filename)).update(version).digest("hex");

// What of tsconfig.base.json changes emitted code: ES2022 class fields are defined (useDefineForClassFields).
const TSCONFIG = { compilerOptions: { target: "ES2022", useDefineForClassFields: true, esModuleInterop: true, jsx: "react-jsx" } };

// Two of esbuild's helpers differ from TypeScript's CommonJS where jest.spyOn replaces an export (the
// model checks' mutation tests swap a decision of the product for a broken one): esbuild defines exports
// as getters that cannot be redefined, and `import * as m` of a module compiled from ES syntax gets a copy
// of it, not the module. Both are made to behave as TypeScript's esModuleInterop does.
const DEF_PROP = "var __defProp = Object.defineProperty;";
const CONFIGURABLE = "var __defProp = (o, k, d) => Object.defineProperty(o, k, { configurable: true, ...d });";
const TO_ESM = "var __toESM = (";
const SAME_MODULE = "var __toESM = (mod, isNodeMode) => !isNodeMode && mod && mod.__esModule ? mod : __toESMCopy(mod, isNodeMode); var __toESMCopy = (";

module.exports = {
  getCacheKey(source, filename) {
    return createHash("sha256").update(SELF).update(filename).update("\0").update(source).digest("hex");
  },
  process(source, filename) {
    const { code, map } = transformSync(source, {
      format: "cjs",
      loader: filename.endsWith(".tsx") ? "tsx" : "ts",
      target: "node20",
      platform: "node",
      sourcefile: filename,
      sourcemap: "external",
      tsconfigRaw: TSCONFIG,
      // import() becomes require(), as it does in TypeScript's CommonJS: jest's module runtime runs a real
      // import() only under --experimental-vm-modules, and the CLI loads what a run needs with import()
      // (cli/src/lib/rules-check.ts), which the preflight's tests run in-process.
      supported: { "dynamic-import": false },
    });
    for (const [helper, text] of [["__defProp(", DEF_PROP], ["__toESM(", TO_ESM]]) {
      if (code.includes(helper) && !code.includes(text)) {
        throw new Error(`test/helpers/ts-transform.cjs: esbuild's output no longer defines "${text}" (${filename}); update the transform`);
      }
    }
    return { code: code.replace(DEF_PROP, CONFIGURABLE).replace(TO_ESM, SAME_MODULE), map };
  },
};
