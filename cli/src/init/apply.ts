// Writing a plan (plan.ts) and installing the codebase's dependencies. Every file is written whole, next
// to its place and then renamed over it: the tarballs first, then the codebase files (package.json, which
// names them, among them), firebase.json last, and only then the tarballs package.json no longer names
// are removed. An interrupted run leaves each file either as it was or as planned, and firebase.json names
// the codebase only once its files are there.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { changed, type Plan } from "./plan";

export function writePlan(plan: Plan): void {
  for (const copy of plan.copies.filter((c) => c.changed)) {
    replace(join(plan.dir, copy.path), (temporary) => copyFileSync(copy.source, temporary));
  }
  const order = (path: string) => (path === "firebase.json" ? 1 : 0);
  for (const file of [...changed(plan)].sort((a, b) => order(a.path) - order(b.path))) {
    replace(join(plan.dir, file.path), (temporary) => writeFileSync(temporary, file.after));
  }
  for (const path of plan.removals) rmSync(join(plan.dir, path), { force: true });
}

/** Writes `path` whole: `write` fills a temporary file next to it, which then replaces it. */
function replace(path: string, write: (temporary: string) => void): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.init-tmp`;
  write(temporary);
  renameSync(temporary, path);
}

/** `npm install` in the codebase folder, its output shown as it runs; resolves with npm's exit code. */
export function npmInstall(folder: string): Promise<number> {
  // npm as the one running this command when it runs under npm (npx, npm exec, npm run), else from PATH.
  const npmCli = process.env.npm_execpath;
  const [command, args] = npmCli !== undefined && npmCli.endsWith(".js") ? [process.execPath, [npmCli, "install"]] : ["npm", ["install"]];
  const env = Object.fromEntries(
    // The settings of an npm that runs this command (npx's own prefix, its package) are not the codebase's.
    Object.entries(process.env).filter(([key]) => !/^npm_(package_|lifecycle_|config_(local_)?prefix$|config_global$)/.test(key) && key !== "INIT_CWD"),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: folder, env, stdio: ["ignore", "inherit", "inherit"], shell: process.platform === "win32" });
    child.on("error", reject);
    child.on("close", (code) => resolve(code ?? 1));
  });
}
