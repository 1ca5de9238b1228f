// A fresh "type": "module" app for the client's packed tests: a copy of a template folder outside the
// repository, with packages installed by npm as a user would (from npm's cache, which `npm ci` filled).
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { npm } from "./packed";

/** Copies `template` to `dir`, writes its package.json and installs `packages` (tarballs or specs); returns `dir`. */
export async function installFreshApp(dir: string, template: string, packages: string[]): Promise<string> {
  cpSync(template, dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "fresh-esm-app", private: true, type: "module" }, null, 2));
  const installed = await npm(["install", "--prefer-offline", "--no-audit", "--no-fund", ...packages], dir);
  if (installed.code !== 0) throw new Error(`npm install of ${packages.join(" ")} in a fresh app failed:\n${installed.stderr}`);
  return dir;
}
