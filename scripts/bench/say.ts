// How run.ts (inside `firebase emulators:exec`) talks to main.ts (outside it): options arrive as JSON in
// an environment variable, and the lines meant for the user carry a tag, because the script's stdout is
// firebase-tools' stdout, shared with the emulators' own logs.

export const OPTIONS_ENV = "BENCH_OPTIONS";
/** A prefix no emulator log line starts with (ASCII unit separator). */
export const SAY_TAG = "\u001fbench\u001f";

/** Prints one or more lines for the user (main.ts strips the tag; run alone, the tag is invisible). */
export function say(text = ""): void {
  process.stdout.write(text.split("\n").map((line) => `${SAY_TAG}${line}\n`).join(""));
}
