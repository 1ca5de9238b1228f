// Builds the package twice from src/: ESM into lib/esm (what `import` loads: apps, bundlers) and
// CommonJS into lib/cjs (what `require` loads), each with its .d.ts files. A package.json in each folder
// tells Node and TypeScript which module format the folder holds. Both builds import `firebase/*` by
// name, so the client always shares the app's copy of the SDK in whichever format the app loads it.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

rmSync(join(here, "lib"), { recursive: true, force: true });
for (const [config, folder, type] of [
  ["tsconfig.esm.json", "esm", "module"],
  ["tsconfig.cjs.json", "cjs", "commonjs"],
]) {
  execFileSync(process.execPath, [tsc, "-p", join(here, config)], { stdio: "inherit" });
  writeFileSync(join(here, "lib", folder, "package.json"), `${JSON.stringify({ type })}\n`);
}
