// Starts a bare Firestore emulator (no firebase-tools around it) on a free loopback port, for a command
// that needs one for a moment: the preflight compiles the rules with it, check-rules and init evaluate
// them. The binary is the one the emulator suite uses: FIRESTORE_EMULATOR_BINARY_PATH, the launcher for the
// Debian-installed jar (in this user's cache folder), or firebase-tools' own download. Also: whether
// anything answers at an emulator's address.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { downloadableEmulators } from "./firebase-tools-internals";
import { firestoreEmulatorBinary } from "./launcher";

/** Where the command keeps the emulator launcher it writes: the user's cache folder (XDG), never the project. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "firestore-exact-counter");
}

/** Whether anything answers HTTP at host:port within `timeoutMs` (a refused connection fails at once). */
export async function answers(host: string, timeoutMs = 1500): Promise<boolean> {
  try {
    await fetch(`http://${host}/`, { signal: AbortSignal.timeout(timeoutMs) });
    return true;
  } catch {
    return false;
  }
}

export interface RunningEmulator {
  host: string;
  stop(): void;
}

/** A loopback port that was free a moment ago (bound, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolvePort(address.port) : reject(new Error("no port"))));
    });
  });
}

async function binary(): Promise<string> {
  const local = firestoreEmulatorBinary(cacheDir());
  if (local !== undefined) return local;
  await downloadableEmulators.downloadIfNecessary("firestore");
  return downloadableEmulators.getDownloadDetails("firestore").downloadPath;
}

export async function startFirestoreEmulator(timeoutMs = 60_000): Promise<RunningEmulator> {
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const child = spawn("java", ["-jar", await binary(), "--host=127.0.0.1", `--port=${port}`], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2000)));
  const exited = new Promise<never>((_, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the Firestore emulator exited (code ${code}): ${stderr.trim()}`)));
  });
  const stop = () => void child.kill("SIGTERM");
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const up = await Promise.race([
        fetch(`http://${host}/`).then(() => true, () => false),
        exited,
      ]);
      if (up) return { host, stop };
      if (Date.now() > deadline) throw new Error(`the Firestore emulator did not answer on ${host} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (error) {
    stop();
    throw error;
  }
}

/** Runs `use` with the emulator at FIRESTORE_EMULATOR_HOST when set, else with one started for it. */
export async function withFirestoreEmulator<T>(use: (host: string) => Promise<T>): Promise<T> {
  const running = process.env.FIRESTORE_EMULATOR_HOST;
  if (running !== undefined) return use(running);
  const emulator = await startFirestoreEmulator();
  try {
    return await use(emulator.host);
  } finally {
    emulator.stop();
  }
}
