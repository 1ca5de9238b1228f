// A param's value as the functions get it for a project: functions/.env, then functions/.env.<projectId>
// over it (firebase-tools' order). Plain KEY=VALUE lines only (what this repository's files hold); the
// preflight reads them with firebase-tools' own loader. For scripts that must start fast (reconcile).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./firebase-cli";

export function functionsParam(name: string, projectId: string, functionsDir = join(REPO_ROOT, "functions")): string | undefined {
  let value: string | undefined;
  for (const file of [".env", `.env.${projectId}`]) {
    const path = join(functionsDir, file);
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, "utf8").split("\n")) {
      const match = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
      if (match?.[1] === name) value = match[2]!;
    }
  }
  return value;
}
