// Checks what the emulator suite needs from the machine before `npm test`, `npm start` and the test scripts
// start anything (scripts/lib/requirements.ts):
//   tsx scripts/requirements.ts              Java 17+, the Firestore emulator (npm start, test:emulators, test:apps)
//   tsx scripts/requirements.ts --chromium   the same and Chromium (npm test: every tier)
import { EXIT, readArgv, runCli } from "../cli/src/lib/cli";
import { checkRequirements, missingLine, probeMachine } from "./lib/requirements";

const HELP = `Usage: tsx scripts/requirements.ts [--chromium]

Checks what the emulator suite needs besides npm's packages, before anything runs: Java 17 or newer
for the Firestore emulator, and with --chromium (npm test) Chromium for the browser tests
(CHROMIUM_PATH, else /usr/bin/chromium). Stops with one line naming what is missing and the command
that installs it. A Firestore emulator that is not installed (the Debian package
google-cloud-cli-firestore-emulator, FIRESTORE_EMULATOR_BINARY_PATH or an earlier download) is said in
one line, not stopped for: firebase-tools downloads it where the machine is online.
Exit codes: 0 everything is there; 1 something is missing; 2 bad arguments.`;

function parse(argv: string[]): { chromium: boolean } | "help" {
  const read = readArgv(argv, { flags: ["--chromium"] });
  return read === "help" ? read : { chromium: read.flags.has("--chromium") };
}

/** What the user ran: the npm script that runs this, as they typed it. */
function ran(env: NodeJS.ProcessEnv = process.env): string {
  const event = env.npm_lifecycle_event;
  if (event === undefined) return "the emulator suite";
  return event === "test" || event === "start" ? `npm ${event}` : `npm run ${event}`;
}

function main(needs: { chromium: boolean }): Promise<number> {
  const { missing, notes } = checkRequirements(probeMachine(), needs);
  for (const note of notes) console.error(`${ran()}: ${note}`);
  if (missing.length === 0) return Promise.resolve(EXIT.ok);
  console.error(missingLine(ran(), missing));
  return Promise.resolve(EXIT.failed);
}

runCli({ name: "requirements", helpCommand: "node --import tsx scripts/requirements.ts --help" }, HELP, parse, main);
