// A param's value when the module loads, for the one kind of decision that cannot wait for a function to
// run: which functions the codebase exports (the deploy manifest). At run time firebase-tools gives the
// functions their codebase's params as environment variables (deployed, and in the emulator's workers).
// When it loads the code to read the manifest (`firebase deploy`, the emulator's discovery and reloads), it
// does not: firebase-tools 14 starts that process with its own variables only (FUNCTIONS_CONTROL_API=true,
// the working directory the codebase's folder; deploy/functions/runtimes/node/index.js), and reads the
// codebase's .env files itself afterwards. So there, and only there, this reads them from that folder as
// firebase-tools does: .env, then .env.<projectId>, then (in the emulator) .env.local, a later file over an
// earlier one. A project alias's file (.env.<alias>) is not read: name the param in .env or .env.<projectId>.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One `NAME=value` line as firebase-tools reads it: optional `export`, a quoted value, or a bare one up to a `#`. */
const LINE = /^\s*(?:export\s+)?([\w./]+)\s*=[ \f\t\v]*("(?:\\"|[^"])*"|'(?:\\'|[^'])*'|[^#\r\n]*)/;

function valueIn(file: string, name: string): string | undefined {
  if (!existsSync(file)) return undefined;
  let found: string | undefined;
  for (const line of readFileSync(file, "utf8").split(/\r?\n/)) {
    const match = LINE.exec(line);
    if (match === null || match[1] !== name) continue;
    const raw = match[2]!.trim();
    const quoted = /^(["'])(.*)\1$/s.exec(raw);
    found = quoted === null ? raw : quoted[1] === '"' ? quoted[2]!.replace(/\\(["'\\])/g, "$1").replace(/\\n/g, "\n") : quoted[2]!;
  }
  return found;
}

/**
 * `name`'s value as the codebase is being loaded: the environment's, or, while firebase-tools reads the
 * manifest, the codebase's .env files' (above); undefined when neither has one.
 */
export function paramAtLoad(name: string, env: NodeJS.ProcessEnv = process.env, codebaseDir: string = process.cwd()): string | undefined {
  return paramSourceAtLoad(name, env, codebaseDir)?.value;
}

/** paramAtLoad's value, and where it came from: "the environment" or the .env file that gave it. */
export function paramSourceAtLoad(name: string, env: NodeJS.ProcessEnv = process.env, codebaseDir: string = process.cwd()): { value: string; from: string } | undefined {
  if (env[name] !== undefined) return { value: env[name], from: "the environment" };
  if (env.FUNCTIONS_CONTROL_API !== "true") return undefined;
  const files = [".env", env.GCLOUD_PROJECT ? `.env.${env.GCLOUD_PROJECT}` : undefined, env.FUNCTIONS_EMULATOR === "true" ? ".env.local" : undefined];
  let found: { value: string; from: string } | undefined;
  for (const file of files) {
    if (file === undefined) continue;
    const value = valueIn(join(codebaseDir, file), name);
    if (value !== undefined) found = { value, from: file };
  }
  return found;
}
