// Runs a command to its end (stdin closed) and collects what it printed, for tests that run the
// project's CLIs and test apps as a user would.
import { spawn } from "node:child_process";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to close. */
  ms: number;
}

export function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr, ms: Date.now() - started }));
  });
}
