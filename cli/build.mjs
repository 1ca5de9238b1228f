// Builds the command into lib/: one CommonJS bundle (lib/main.js) of src/ and of the functions' own
// modules it shares, from their sources: functions/src/model/, and the few others that NOT_MODEL_YET in
// eslint.config.mjs lists (the params, the migration, reconcile's commit). One source, so a rule means the
// same thing at deploy time and at run time; the functions package exports none of them. Also the files
// the command writes into an app (the rules block, the indexes). The packages it runs with stay outside
// the bundle: firebase-functions and firebase-admin (peer dependencies, the app's own copies) and
// firebase-tools (the app's, found at run time). Each command's module runs only when that command does.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const lib = join(here, "lib");

rmSync(lib, { recursive: true, force: true });
mkdirSync(lib, { recursive: true });
await build({
  entryPoints: [join(here, "src", "main.ts")],
  outfile: join(lib, "main.js"),
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  external: ["firebase-admin", "firebase-admin/*", "firebase-functions", "firebase-functions/*"],
  sourcemap: false,
  logLevel: "warning",
});
for (const file of ["firestore.rules", "firestore.indexes.json"]) copyFileSync(join(root, file), join(lib, file));
