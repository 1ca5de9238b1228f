// One line in the Firebase emulator's output as it loads the functions (at its start, and again at each
// reload), saying which rollup interval they run with there and which file gave it. The emulator delivers
// Firestore trigger events one at a time, and a busy counter's rollup waits out its interval while it holds
// that queue: the interval decides how fast a local burst of writes settles (docs/existing-app.md, "Try it
// locally"). Printed only by the emulator's discovery of the functions (FUNCTIONS_EMULATOR and
// FUNCTIONS_CONTROL_API both "true"; firebase-tools shows what that process prints): never by a deploy's
// discovery, a function's worker, or an app that imports the package.
import { PARAMS } from "../model/params";
import { paramSourceAtLoad } from "./at-load";

/** The line, or undefined outside the emulator's discovery. */
export function localIntervalLine(env: NodeJS.ProcessEnv = process.env, codebaseDir: string = process.cwd()): string | undefined {
  if (env.FUNCTIONS_EMULATOR !== "true" || env.FUNCTIONS_CONTROL_API !== "true") return undefined;
  const found = paramSourceAtLoad("ROLLUP_INTERVAL_MS", env, codebaseDir);
  const value = found?.value.trim() ?? String(PARAMS.ROLLUP_INTERVAL_MS.default);
  const from = found === undefined ? "the default" : `ROLLUP_INTERVAL_MS in ${found.from}`;
  const prefix = `firestore-exact-counter: the emulator runs rollups every ${value} ms (${from})`;
  return found?.from === ".env.local"
    ? `${prefix}, which only the emulator reads: a local burst of writes settles within seconds`
    : `${prefix}: it runs trigger events one at a time and a busy counter's rollup holds them for up to an interval, so a burst of writes ` +
        "settles slowly here; a shorter ROLLUP_INTERVAL_MS in .env.local, which only the emulator reads, keeps up (firestore-exact-counter init writes one)";
}

/** Prints the line where it applies. */
export function announceLocalInterval(): void {
  const line = localIntervalLine();
  if (line !== undefined) console.log(line);
}
