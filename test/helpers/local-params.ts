// Setting a param in the running functions emulator: functions/.env.local, which the emulator reads over
// functions/.env, and a reload (the functions emulator reloads the functions, and reads the .env files
// again, when lib/index.js changes). Whatever .env.local held before is kept around the param and restored at the end.
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const FUNCTIONS_DIR = join(__dirname, "..", "..", "functions");
const ENV_LOCAL = join(FUNCTIONS_DIR, ".env.local");
const ENTRY = join(FUNCTIONS_DIR, "lib", "index.js");

export interface LocalParam {
  /** Sets the param (undefined: removes it) in .env.local, keeping the file's other lines, and reloads. */
  set(value: string | undefined): void;
  /** Puts .env.local back as it was when localParam() was called, and reloads. */
  restore(): void;
}

/** Call it before the first set(), e.g. in beforeAll: it remembers .env.local as it is then. */
export function localParam(name: string): LocalParam {
  const params = localParams([name]);
  return { set: (value) => params.set({ [name]: value }), restore: () => params.restore() };
}

/** Several params at once, set together with one reload. */
export interface LocalParams {
  /** Sets each param (undefined: removes it) in .env.local, keeping the file's other lines, and reloads. */
  set(values: Record<string, string | undefined>): void;
  /** Puts .env.local back as it was when localParams() was called, and reloads. */
  restore(): void;
}

/** localParam for several params; call it before the first set(). */
export function localParams(names: readonly string[]): LocalParams {
  const original = existsSync(ENV_LOCAL) ? readFileSync(ENV_LOCAL, "utf8") : undefined;
  const assignments = names.map((name) => new RegExp(`^\\s*${name}\\s*=`));
  return {
    set(values) {
      const kept = (original ?? "").split("\n").filter((line) => line !== "" && !assignments.some((a) => a.test(line)));
      const lines = [...kept, ...Object.entries(values).flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${value}`]))];
      if (lines.length === 0 && original === undefined) rmSync(ENV_LOCAL, { force: true });
      else writeFileSync(ENV_LOCAL, lines.length > 0 ? `${lines.join("\n")}\n` : "");
      reload();
    },
    restore() {
      if (original === undefined) rmSync(ENV_LOCAL, { force: true });
      else writeFileSync(ENV_LOCAL, original);
      reload();
    },
  };
}

function reload(): void {
  const now = new Date();
  utimesSync(ENTRY, now, now);
}
