// Starts the local emulator suite (auth, firestore, functions) or runs a command inside it.
//   tsx scripts/emulators.ts start               serve the backend and the example app locally until Ctrl-C
//   tsx scripts/emulators.ts exec -- <command>   start the suite, run <command>, stop, exit with its code
import { resolve } from "node:path";
import { integerValue, lastValue, readArgv, runCli, UsageError } from "../cli/src/lib/cli";
import { configuredHosts } from "./lib/emulator-hosts";
import { buildReactExample, feedConfig, loadRules, REACT_EXAMPLE_OUT_DIR } from "./lib/example-react";
import { buildExample, EXAMPLE_COUNTER, EXAMPLE_OUT_DIR, exampleConfig, functionsRegion } from "./lib/example-web";
import { DEFAULT_PROJECT, EMULATORS, emulatorEnv, runFirebase, shellQuote } from "./lib/firebase-cli";
import { isDebugLogLine, isReadyLine, nextSteps } from "./lib/start-output";
import { serveStatic, type RunningServer } from "./lib/static-server";

/** Where `npm start` serves the example web app (--web-port changes it). */
const DEFAULT_WEB_PORT = 5050;
/** Where it serves the React example, the feed (--react-port changes it). */
const DEFAULT_REACT_PORT = 5051;

const HELP = `Usage:
  tsx scripts/emulators.ts start [--project <id>] [--config <firebase.json>] [--web-port <n>] [--react-port <n>] [--debug]
  tsx scripts/emulators.ts exec [--project <id>] [--config <firebase.json>] -- <command> [args...]

Runs the pinned firebase-tools with the ${EMULATORS} emulators. Uses the Firestore emulator installed
by the Debian package google-cloud-cli-firestore-emulator when present (docs/development.md).
start also builds the example web app (examples/web) and the React example (examples/react), loads the
React example's rules (examples/rules/feed-comments.rules) into the Firestore emulator, and serves them on 127.0.0.1:<web-port> (default ${DEFAULT_WEB_PORT}) and 127.0.0.1:<react-port> (default ${DEFAULT_REACT_PORT})
once the emulators are ready, then prints the next steps. The functions' debug logs
(one line per rollup and per call) are hidden unless --debug.
Environment: EMULATOR_LOG_VERBOSITY (exec only: DEBUG, INFO, QUIET (default), SILENT),
FIRESTORE_EMULATOR_BINARY_PATH (use this emulator binary), FUNCTIONS_EMULATOR_PARALLEL
(requests the functions emulator runs at once, default 16).
Exit code: exec exits with the command's code (firebase's, non-zero, when the emulators do not start);
start with firebase's when it stops; 2 on bad arguments.`;

interface Options {
  mode: "start" | "exec";
  project: string;
  configFile: string | undefined;
  webPort: number;
  reactPort: number;
  debug: boolean;
  command: string[];
}

function parse(argv: string[]): Options | "help" {
  const [mode, ...rest] = argv;
  if (mode === undefined || mode === "--help" || mode === "-h") return "help";
  if (mode !== "start" && mode !== "exec") throw new UsageError(`unknown mode ${JSON.stringify(mode)}: start or exec`);
  const read = readArgv(rest, {
    flags: mode === "start" ? ["--debug"] : [],
    values: {
      "--project": "a project id (demo-* for the emulators alone)",
      "--config": "a firebase.json file",
      ...(mode === "start" ? { "--web-port": "a port from 1 to 65535", "--react-port": "a port from 1 to 65535" } : {}),
    },
    passThrough: mode === "exec",
  });
  if (read === "help") return read;
  if (mode === "exec" && read.rest.length === 0) throw new UsageError("exec needs a command after --");
  const webPort = lastValue(read, "--web-port");
  const reactPort = lastValue(read, "--react-port");
  return {
    mode,
    project: lastValue(read, "--project") ?? DEFAULT_PROJECT,
    configFile: lastValue(read, "--config"),
    webPort: webPort === undefined ? DEFAULT_WEB_PORT : integerValue("--web-port", webPort, { min: 1, max: 65_535 }),
    reactPort: reactPort === undefined ? DEFAULT_REACT_PORT : integerValue("--react-port", reactPort, { min: 1, max: 65_535 }),
    debug: read.flags.has("--debug"),
    command: read.rest,
  };
}

/** emulators:start with the examples served next to it, the next steps once ready, debug logs filtered. */
async function start({ project, configFile, webPort, reactPort, debug }: Options): Promise<number> {
  await Promise.all([buildExample(), buildReactExample()]);
  const hosts = configuredHosts(configFile);
  const servers: RunningServer[] = [];
  let stopped = false;
  /** Serves one example: its URL, or why not. */
  const serve = async (root: string, config: unknown, port: number, flag: string): Promise<{ url: string } | { error: string }> => {
    try {
      const server = await serveStatic(root, config, port);
      servers.push(server);
      if (stopped) await server.close();
      return { url: server.url };
    } catch (error) {
      return { error: `${String(error)} (choose another port: npm start -- ${flag} <n>)` };
    }
  };
  const onReady = async () => {
    // The feed's users write their own comments: its rules replace firestore.rules (which lets clients write nothing).
    const feedRules = loadRules(hosts.firestore, project).then(
      () => ({}),
      (error: unknown) => ({ error: `its comments are refused: ${String(error)}` }),
    );
    const [example, reactExample, rules] = await Promise.all([
      serve(EXAMPLE_OUT_DIR, exampleConfig(project, hosts), webPort, "--web-port"),
      serve(REACT_EXAMPLE_OUT_DIR, feedConfig(project, hosts), reactPort, "--react-port"),
      feedRules,
    ]);
    if ("error" in rules) console.error(`The React example's rules did not load: ${rules.error}`);
    console.log(nextSteps({ project, region: functionsRegion(), hosts, example, reactExample, counterId: EXAMPLE_COUNTER, debug }));
  };
  // QUIET drops the two lines per function invocation ("Beginning execution", "Finished"); --debug keeps them.
  const verbosity = ["--log-verbosity", debug ? "INFO" : "QUIET"];
  const config = configFile ? ["--config", configFile] : [];
  const code = await runFirebase(["emulators:start", "--project", project, "--only", EMULATORS, ...config, ...verbosity], {
    interactive: true,
    // Its output goes through this process now: keep firebase's colours when this one prints to a terminal.
    env: { ...emulatorEnv(), ...(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}) },
    onLine: (line, stream) => {
      if (!debug && isDebugLogLine(line)) return;
      (stream === "stdout" ? process.stdout : process.stderr).write(`${line}\n`);
      if (isReadyLine(line)) void onReady();
    },
  });
  stopped = true;
  await Promise.all(servers.map((server) => server.close()));
  return code;
}

async function main(options: Options): Promise<number> {
  if (options.mode === "start") return start(options);
  const common = ["--project", options.project, "--only", EMULATORS, ...(options.configFile ? ["--config", options.configFile] : [])];
  // QUIET keeps warnings, errors and function logs but drops a line per function invocation.
  const verbosity = ["--log-verbosity", process.env.EMULATOR_LOG_VERBOSITY ?? "QUIET"];
  // The command learns which config the suite runs with, so what it starts next to it (the existing-app
  // test's second emulator run) can keep clear of that config's ports.
  const env = { ...emulatorEnv(), ...(options.configFile ? { COUNTERS_EMULATOR_CONFIG: resolve(options.configFile) } : {}) };
  return runFirebase(["emulators:exec", ...common, ...verbosity, options.command.map(shellQuote).join(" ")], { env });
}

runCli({ name: "emulators", helpCommand: "node --import tsx scripts/emulators.ts --help" }, HELP, parse, main);
