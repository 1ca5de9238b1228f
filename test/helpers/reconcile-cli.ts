// Runs `firestore-exact-counter reconcile` as an operator would (a child process with the project's
// Node, from the sources as npm run reconcile runs them), in this repository's project folder, for the
// scripts tier's tests of its output and exit codes.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs reconcile; `onStdout` sees the output so far and may return a signal to send it (once). */
export function runReconcile(
  project: string,
  args: string[],
  onStdout?: (stdout: string) => NodeJS.Signals | undefined,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "cli", "src", "main.ts"), "reconcile", "--project", project, ...args], {
      cwd: REPO_ROOT,
      env: process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let signalled = false;
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
      const signal = signalled ? undefined : onStdout?.(stdout);
      if (signal !== undefined) {
        signalled = true;
        child.kill(signal);
      }
    });
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    child.on("error", reject);
    // close, not exit: the output streams are complete then.
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
