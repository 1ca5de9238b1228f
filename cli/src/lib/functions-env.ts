// The functions' params as firebase-tools gives them to the functions: KEY=VALUE lines of env files in
// functions/, a later file overriding an earlier one (.env, then .env.<projectId>; the emulator also
// .env.local). Plain lines only, which is what this repository's files hold; the preflight reads them with
// firebase-tools' own loader. Shared by the scripts that must start fast (reconcile, the benchmark) and
// the tests' setup. No other import, so the tests' setup stays light.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const FUNCTIONS_DIR = join(__dirname, "..", "..", "functions");

/** The values the env `files` (names in `functionsDir`) set, later files over earlier ones; missing files are skipped. */
export function functionsParams(files: readonly string[], functionsDir = FUNCTIONS_DIR): Record<string, string> {
  const values: Record<string, string> = {};
  for (const file of files) {
    const path = join(functionsDir, file);
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, "utf8").split("\n")) {
      const match = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
      if (match) values[match[1]!] = match[2]!;
    }
  }
  return values;
}

/** One param's value for a deploy to `projectId`: functions/.env, then functions/.env.<projectId>. */
export function functionsParam(name: string, projectId: string, functionsDir = FUNCTIONS_DIR): string | undefined {
  return functionsParams([".env", `.env.${projectId}`], functionsDir)[name];
}
