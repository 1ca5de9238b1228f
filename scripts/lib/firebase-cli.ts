// Runs the pinned firebase-tools (devDependency) with the environment the local emulator suite needs.
import { spawn, type StdioOptions } from "node:child_process";
import { delimiter, dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { firestoreEmulatorBinary } from "../../cli/src/lib/launcher";

export const REPO_ROOT = resolve(__dirname, "..", "..");
export const DEFAULT_PROJECT = "demo-counter";
export const EMULATORS = "auth,firestore,functions";
/**
 * Requests/events the functions emulator runs at once (firebase-tools' FUNCTIONS_EMULATOR_PARALLEL,
 * default 50): the rest queue instead of each booting a worker process of its own, which takes seconds on
 * a small machine (docs/benchmark.md, "Cold starts").
 */
export const DEFAULT_FUNCTIONS_PARALLEL = "16";

export function firebaseBin(): string {
  const pkg = require.resolve("firebase-tools/package.json", { paths: [REPO_ROOT] });
  return join(dirname(pkg), "lib", "bin", "firebase.js");
}

/** The environment for firebase-tools: local Firestore emulator launcher, bounded functions parallelism. */
export function emulatorEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  const binary = firestoreEmulatorBinary(join(REPO_ROOT, ".cache"), base);
  if (binary !== undefined) env.FIRESTORE_EMULATOR_BINARY_PATH = binary;
  env.FUNCTIONS_EMULATOR_PARALLEL ??= DEFAULT_FUNCTIONS_PARALLEL;
  // firebase-tools gives the functions' code 10 s to load when it discovers them (at start, at each reload
  // of a changed .env.local, in the preflight): on 2 busy cores that failed now and then ("User code
  // failed to load ... Timeout after 10000"). A slow load is not a failure here; a broken one still fails.
  env.FUNCTIONS_DISCOVERY_TIMEOUT ??= "60";
  // Each discovery (the start, each reload) otherwise serves the manifest over HTTP and waits out the
  // server's 5 s keep-alive before the child exits; with this the SDK writes it to a file and exits at
  // once (firebase-functions 6.4.0 and later: ours and the package's peer range, ^7.4.0).
  env.FIREBASE_FUNCTIONS_DISCOVERY_OUTPUT_PATH ??= "true";
  // Commands run by emulators:exec find the project's tools (jest, tsx) as under `npm run`.
  env.PATH = [join(REPO_ROOT, "node_modules", ".bin"), base.PATH].filter(Boolean).join(delimiter);
  // No update checks or usage reporting from a machine that may have no internet.
  env.FIREBASE_CLI_DISABLE_UPDATE_CHECK ??= "true";
  env.NO_UPDATE_NOTIFIER ??= "1";
  return env;
}

export interface RunFirebaseOptions {
  /** Keep stdin attached (firebase may prompt); otherwise it is closed. */
  interactive?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Receives each line firebase prints instead of the terminal (which then prints what this prints). */
  onLine?: (line: string, stream: "stdout" | "stderr") => void;
}

/** Runs `firebase <args>` and resolves with its exit code. */
export function runFirebase(args: string[], options: RunFirebaseOptions = {}): Promise<number> {
  const stdin = options.interactive ? "inherit" : "ignore";
  const output = options.onLine ? "pipe" : "inherit";
  const stdio: StdioOptions = [stdin, output, output];
  const child = spawn(process.execPath, [firebaseBin(), ...args], {
    cwd: REPO_ROOT,
    env: options.env ?? emulatorEnv(),
    stdio,
  });
  const onLine = options.onLine;
  if (onLine !== undefined) {
    for (const stream of ["stdout", "stderr"] as const) {
      const readable = child[stream];
      if (readable !== null) createInterface({ input: readable }).on("line", (line) => onLine(line, stream));
    }
  }
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on("SIGINT", forward("SIGINT"));
  process.on("SIGTERM", forward("SIGTERM"));
  return new Promise((resolvePromise, reject) => {
    child.on("error", reject);
    // "close", not "exit": every line of piped output has been read by then.
    child.on("close", (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
  });
}

/** Quotes one argument for the shell command string that `emulators:exec` runs. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
