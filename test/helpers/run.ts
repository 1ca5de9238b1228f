// Runs a command line (a repository script, a command of the CLI, firebase-tools) as a user runs it: a child process with its
// output collected and its exit code. Each runs in a process group of its own, so a test that ends early
// stops it and everything it started (emulators included) with stopAll().
import { spawn, type ChildProcess } from "node:child_process";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();

interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Default: the repository. */
  cwd?: string;
}

/** `command <args>`, found on PATH. */
export function run(command: string, args: string[], options: RunOptions = {}): Promise<Run> {
  return start(command, args, options).done;
}

/** A command that runs on while the test goes on: its output so far, and its end. */
export interface Started {
  output(): string;
  /** Sends `signal` to it and everything it started (its process group). */
  signal(signal: NodeJS.Signals): void;
  done: Promise<Run>;
}

/** `command <args>` started, not awaited (a server the test talks to, then stops). */
export function start(command: string, args: string[], options: RunOptions = {}): Started {
  const child = spawn(command, args, {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const done = new Promise<Run>((resolve, reject) => {
    child.on("error", (error) => {
      running.delete(child);
      reject(error);
    });
    child.on("close", (code, signal) => {
      running.delete(child);
      resolve({ code: code ?? (signal ? 1 : 0), stdout, stderr });
    });
  });
  return {
    output: () => stdout + stderr,
    signal: (signal) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    },
    done,
  };
}

/** `node <args>` with the Node that runs the tests (the project's Node 22 under npm test). */
export function runNode(args: string[], options: RunOptions = {}): Promise<Run> {
  return run(process.execPath, args, options);
}

/** `npm run <script> -- <args>` without npm: node --import tsx scripts/<script>.ts <args>. */
export function runScript(script: string, args: string[], options: RunOptions = {}): Promise<Run> {
  return runNode(["--import", "tsx", `${REPO_ROOT}/scripts/${script}.ts`, ...args], options);
}

/** `firestore-exact-counter <command> <args>` from the CLI's sources, as the repository's npm scripts run it. */
export function runCommand(command: string, args: string[], options: RunOptions = {}): Promise<Run> {
  return runNode(["--import", "tsx", `${REPO_ROOT}/cli/src/main.ts`, command, ...args], options);
}

/** Stops every child still running, with its whole process group. */
export function stopAll(): void {
  for (const child of running) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  running.clear();
}
