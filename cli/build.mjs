// Builds the command into lib/: one CommonJS bundle (lib/main.js) of src/ and of what it takes of the
// functions, from their sources: functions/src/model/ (the params, their rules, the patterns) and the admin
// entry (@firestore-exact-counter/functions/admin: reconcile and migrateExtension, which the reconcile and
// migrate-extension commands run). One source, so a rule means the same thing at deploy time and at run
// time, and the command needs no functions package beside it. Also the files
// the command writes into an app (the rules block, the indexes). The packages it runs with stay outside
// the bundle: firebase-functions and firebase-admin (peer dependencies, the app's own copies) and
// firebase-tools (the app's, found at run time). Each command's module runs only when that command does.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
// Into lib/, or the folder given (the CLI's tests run a bundle of their own: cli/test/commands.test.ts).
const lib = process.argv[2] === undefined ? join(here, "lib") : resolve(process.argv[2]);

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
  // The admin entry from its sources, as tsconfig.json's paths name it for the typecheck.
  alias: { "@firestore-exact-counter/functions/admin": join(root, "functions", "src", "admin.ts") },
  sourcemap: false,
  logLevel: "warning",
});
for (const file of ["firestore.rules", "firestore.indexes.json"]) copyFileSync(join(root, file), join(lib, file));
