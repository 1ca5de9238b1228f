// Finding the running emulators. A test that cannot reach one fails with a message that says how to start
// them (the command that runs just this file inside them); it never skips.
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
export function firestoreHost(): string {
  return process.env.FIRESTORE_EMULATOR_HOST ?? "127.0.0.1:8080";
}

export function authHost(): string {
  return process.env.FIREBASE_AUTH_EMULATOR_HOST ?? "127.0.0.1:9099";
}

/**
 * Whether an emulator answers at `url`. An emulator that is not running refuses the connection at once;
 * one that runs on a busy machine (the whole suite on 2 cores) may take seconds to answer, and is
 * waited for: a short timeout took a busy Auth emulator for a missing one and failed whole test files.
 */
async function reachable(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(60_000) });
    return true;
  } catch {
    return false;
  }
}

/** Throws unless the Firestore and Auth emulators answer. */
export async function requireEmulators(): Promise<void> {
  for (const [name, host] of [
    ["Firestore", firestoreHost()],
    ["Auth", authHost()],
  ] as const) {
    if (!(await reachable(`http://${host}/`))) {
      throw new Error(`The ${name} emulator is not reachable at ${host}. ${howToRun()}`);
    }
  }
}

/** host:port of the functions emulator, from the emulator hub when `emulators:exec` set it. */
export async function functionsHost(): Promise<string> {
  const hub = process.env.FIREBASE_EMULATOR_HUB;
  if (hub !== undefined) {
    const response = await fetch(`http://${hub}/emulators`);
    const emulators = (await response.json()) as Record<string, { host: string; port: number } | undefined>;
    const functions = emulators.functions;
    if (functions === undefined) throw new Error("the emulator hub lists no functions emulator");
    return `${functions.host}:${functions.port}`;
  }
  return "127.0.0.1:5001";
}

/** Throws unless the functions emulator answers. */
export async function requireFunctionsEmulator(): Promise<string> {
  const host = await functionsHost();
  if (!(await reachable(`http://${host}/`))) {
    throw new Error(`The functions emulator is not reachable at ${host}. ${howToRun()}`);
  }
  return host;
}

/** How to run the current test file with the emulators around it (docs/development.md, "Tests"). */
function howToRun(): string {
  const testPath = expect.getState().testPath;
  const file = testPath === undefined ? "<test file>" : relative(process.cwd(), testPath);
  return `Run it with \`npm run test:emulators -- ${file}\`, which builds the packages and starts the emulator suite around it (every test: \`npm test\`).`;
}

/** Throws unless the functions are built (functions/lib), as the functions emulator and a deploy load them. */
export function requireBuiltFunctions(): void {
  const entry = join(__dirname, "..", "..", "functions", "lib", "index.js");
  if (!existsSync(entry)) throw new Error(`The functions are not built (${relative(process.cwd(), entry)} is missing). ${howToRun()}`);
}
