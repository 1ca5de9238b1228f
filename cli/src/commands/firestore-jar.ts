// `npm run --silent firestore-jar`: prints the path of a Firestore emulator that firebase-tools can start
// without downloading one, for running the emulators in another project folder (an app's, with the
// counters added: docs/existing-app.md) on a machine that cannot download the emulator:
//   export FIRESTORE_EMULATOR_BINARY_PATH="$(npm run --silent firestore-jar)"
// It is the launcher jar this repository's own scripts use (scripts/lib/launcher.ts), in .cache/.
import { EXIT, readArgv, runCli, CliError } from "./lib/cli";
import { REPO_ROOT } from "./lib/firebase-cli";
import { firestoreEmulatorBinary, INSTALLED_FIRESTORE_JAR } from "./lib/launcher";
import { join } from "node:path";

const HELP = `Usage: npm run --silent firestore-jar

Prints the path of a Firestore emulator binary for FIRESTORE_EMULATOR_BINARY_PATH, so that firebase-tools
starts the installed emulator instead of downloading one, in any project folder:
  export FIRESTORE_EMULATOR_BINARY_PATH="$(npm run --silent firestore-jar)"
It is FIRESTORE_EMULATOR_BINARY_PATH itself when that is set, else a launcher for the jar of the Debian
package google-cloud-cli-firestore-emulator (${INSTALLED_FIRESTORE_JAR}),
written to this repository's .cache/.

Exit codes: 0 printed; 1 no installed emulator (firebase-tools then downloads its own, which needs the
network); 2 bad arguments.`;

function parseArgs(argv: string[]): Record<string, never> | "help" {
  const read = readArgv(argv, {});
  return read === "help" ? read : {};
}

async function main(): Promise<number> {
  const binary = firestoreEmulatorBinary(join(REPO_ROOT, ".cache"));
  if (binary === undefined) {
    throw new CliError(`no installed Firestore emulator at ${INSTALLED_FIRESTORE_JAR}: firebase-tools will download its own (it needs the network)`, EXIT.failed);
  }
  console.log(binary);
  return Promise.resolve(EXIT.ok);
}

runCli("firestore-jar", HELP, parseArgs, main);
