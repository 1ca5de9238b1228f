// `firestore-exact-counter firestore-jar` (in this repository: npm run --silent firestore-jar): prints the
// path of a Firestore emulator that firebase-tools can start without downloading one, for running the
// emulators in a project folder on a machine that cannot download the emulator:
//   export FIRESTORE_EMULATOR_BINARY_PATH="$(npx firestore-exact-counter firestore-jar)"
// It is a launcher for the jar of the Debian package google-cloud-cli-firestore-emulator
// (lib/launcher.ts), written to the user's cache folder.
import { EXIT, readArgv, CliError, type Command } from "../lib/cli";
import { cacheDir } from "../lib/firestore-emulator";
import { firestoreEmulatorBinary, INSTALLED_FIRESTORE_JAR } from "../lib/launcher";

const HELP = `Usage: firestore-exact-counter firestore-jar

Prints the path of a Firestore emulator binary for FIRESTORE_EMULATOR_BINARY_PATH, so that firebase-tools
starts the installed emulator instead of downloading one, in any project folder:
  export FIRESTORE_EMULATOR_BINARY_PATH="$(npx firestore-exact-counter firestore-jar)"
It is FIRESTORE_EMULATOR_BINARY_PATH itself when that is set, else a launcher for the jar of the Debian
package google-cloud-cli-firestore-emulator (${INSTALLED_FIRESTORE_JAR}),
written to ${cacheDir()}. firebase-tools 14.27.0 runs it on Java 17 (15.x needs Java 21).

Exit codes: 0 printed; 1 no installed emulator (firebase-tools then downloads its own, which needs the
network); 2 bad arguments.`;

type Args = Record<string, never>;

function parse(argv: string[]): Args | "help" {
  const read = readArgv(argv, {});
  return read === "help" ? read : {};
}

function run(): Promise<number> {
  const binary = firestoreEmulatorBinary(cacheDir());
  if (binary === undefined) {
    throw new CliError(`no installed Firestore emulator at ${INSTALLED_FIRESTORE_JAR}: firebase-tools will download its own (it needs the network)`, EXIT.failed);
  }
  console.log(binary);
  return Promise.resolve(EXIT.ok);
}

export const command: Command<Args> = { name: "firestore-jar", help: HELP, parse, run };
