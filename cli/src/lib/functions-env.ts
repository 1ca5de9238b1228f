// A codebase's params as firebase-tools gives them to the functions: KEY=VALUE lines of env files in the
// codebase folder, a later file overriding an earlier one (.env, then .env.<projectId>; the emulator also
// .env.local). Plain lines only, which is what these files hold (init writes them so); the preflight
// reads them with firebase-tools' own loader. Shared by the commands that must start fast (reconcile),
// the benchmark and the tests' setup. No other import, so the tests' setup stays light.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The values the env `files` (names in `folder`) set, later files over earlier ones; missing files are skipped. */
export function functionsParams(files: readonly string[], folder: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const file of files) {
    const path = join(folder, file);
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, "utf8").split("\n")) {
      const match = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
      if (match) values[match[1]!] = match[2]!;
    }
  }
  return values;
}
