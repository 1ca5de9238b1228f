// A folder's files as a map of path to content, for tests that must show that a command changed nothing,
// byte for byte (node_modules aside: what npm put there is npm's).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (name === "node_modules") continue;
      if (statSync(path).isDirectory()) walk(path);
      else files[relative(dir, path)] = readFileSync(path, "utf8");
    }
  };
  walk(dir);
  return files;
}
