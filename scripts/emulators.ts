// Starts the local emulator suite (auth, firestore, functions) or runs a command inside it.
//   tsx scripts/emulators.ts start               serve the backend locally until Ctrl-C
//   tsx scripts/emulators.ts exec -- <command>   start the suite, run <command>, stop, exit with its code
import { DEFAULT_PROJECT, EMULATORS, runFirebase, shellQuote } from "./lib/firebase-cli";
import { exitWith } from "./lib/cli";

const HELP = `Usage:
  tsx scripts/emulators.ts start [--project <id>] [--config <firebase.json>]
  tsx scripts/emulators.ts exec [--project <id>] [--config <firebase.json>] -- <command> [args...]

Runs the pinned firebase-tools with the ${EMULATORS} emulators. Uses the Firestore emulator installed
by the Debian package google-cloud-cli-firestore-emulator when present (see README, Requirements).
Environment: EMULATOR_LOG_VERBOSITY (exec only: DEBUG, INFO, QUIET (default), SILENT),
FIRESTORE_EMULATOR_BINARY_PATH (use this emulator binary), FUNCTIONS_EMULATOR_PARALLEL
(requests the functions emulator runs at once, default 16).`;

async function main(argv: string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === undefined || mode === "--help" || mode === "-h" || (mode !== "start" && mode !== "exec")) {
    console.log(HELP);
    return mode === undefined || mode === "--help" || mode === "-h" ? 0 : 2;
  }
  let project = DEFAULT_PROJECT;
  let configFile: string | undefined;
  const separator = rest.indexOf("--");
  const options = separator === -1 ? rest : rest.slice(0, separator);
  const command = separator === -1 ? [] : rest.slice(separator + 1);
  for (let i = 0; i < options.length; i++) {
    const option = options[i];
    const value = options[i + 1];
    if ((option === "--project" || option === "--config") && value !== undefined) {
      if (option === "--project") project = value;
      else configFile = value;
      i++;
    } else {
      console.error(`unknown option ${String(option)}\n\n${HELP}`);
      return 2;
    }
  }
  const common = ["--project", project, "--only", EMULATORS, ...(configFile ? ["--config", configFile] : [])];
  if (mode === "start") return runFirebase(["emulators:start", ...common], { interactive: true });
  if (command.length === 0) {
    console.error(`exec needs a command after --\n\n${HELP}`);
    return 2;
  }
  // QUIET keeps warnings, errors and function logs but drops a line per function invocation.
  const verbosity = ["--log-verbosity", process.env.EMULATOR_LOG_VERBOSITY ?? "QUIET"];
  return runFirebase(["emulators:exec", ...common, ...verbosity, command.map(shellQuote).join(" ")]);
}

exitWith(() => main(process.argv.slice(2)));
