// `npm run bench`: starts a private emulator suite (its own ports and project, see firebase.bench.json)
// with two functions codebases, the product and the benchmark-only naive rollup, and runs run.ts inside
// it. The emulators' own output goes to <out>/emulators.log; the benchmark's lines (tagged by say.ts's
// `say`) are printed here, so the table is not buried under function logs.
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";
import { runCli } from "../../cli/src/lib/cli";
import { emulatorEnv, firebaseBin, REPO_ROOT, shellQuote } from "../lib/firebase-cli";
import { BENCH_CONFIG, BENCH_EMULATORS, BENCH_PROJECT } from "./env";
import { DEFAULT_OUT_DIR, helpText, parseOptions, type BenchOptions } from "./options";
import { emulatorLogPath } from "./ops";
import { OPTIONS_ENV, SAY_TAG } from "./say";
import { FLAGS, WORKLOADS } from "./workloads";

async function main(parsed: BenchOptions): Promise<number> {
  // Paths given on the command line are relative to where it was typed; the default folder is the
  // repository's bench-results/ (ignored by git), wherever the command runs from.
  const options: BenchOptions = {
    ...parsed,
    outDir: parsed.outDir === DEFAULT_OUT_DIR ? join(REPO_ROOT, DEFAULT_OUT_DIR) : resolve(parsed.outDir),
  };
  // The build belongs to a run, not to the npm script: --help and bad arguments must not rewrite
  // functions/lib, which would hot-reload a running `npm start`.
  console.log("bench: building the functions");
  if ((await buildFunctions()) !== 0) {
    console.error("bench: the functions do not build (npm run build shows why)");
    return 1;
  }
  mkdirSync(options.outDir, { recursive: true });
  const logPath = emulatorLogPath(options.outDir);
  console.log(`bench: starting the emulator suite (project ${BENCH_PROJECT}); emulator output → ${logPath}`);
  const code = await runInsideEmulators(options, logPath);
  if (code !== 0) {
    console.error(`bench: failed (exit ${code}). Last lines of ${logPath}:`);
    console.error(tail(logPath, 30));
  }
  return code === 0 ? 0 : 1;
}

/** `firebase emulators:exec` around run.ts; resolves with firebase's exit code (the script's, or 1). */
function runInsideEmulators(options: BenchOptions, logPath: string): Promise<number> {
  // run.ts starts in the results folder (see below), so name tsx's loader by URL, not by package name.
  const tsxLoader = pathToFileURL(join(dirname(require.resolve("tsx/package.json", { paths: [REPO_ROOT] })), "dist", "loader.mjs")).href;
  const inner = [process.execPath, "--import", tsxLoader, join(__dirname, "run.ts")].map(shellQuote).join(" ");
  const args = [
    firebaseBin(),
    "emulators:exec",
    "--project",
    BENCH_PROJECT,
    "--config",
    BENCH_CONFIG,
    "--only",
    BENCH_EMULATORS,
    // QUIET keeps warnings, errors and function logs but drops a line per function invocation.
    "--log-verbosity",
    process.env.EMULATOR_LOG_VERBOSITY ?? "QUIET",
    inner,
  ];
  const env = emulatorEnv();
  env[OPTIONS_ENV] = JSON.stringify(options);
  // Run from the results folder: the Firestore emulator and firebase-tools write their debug logs into
  // the working directory, and the repository root's copies belong to `npm start` / `npm test`.
  const child = spawn(process.execPath, args, { cwd: options.outDir, env, stdio: ["ignore", "pipe", "pipe"] });
  const log = createWriteStream(logPath);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => {
      const at = line.indexOf(SAY_TAG);
      if (at === -1) log.write(`${line}\n`);
      else console.log(line.slice(at + SAY_TAG.length));
    });
  }
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on("SIGINT", forward("SIGINT"));
  process.on("SIGTERM", forward("SIGTERM"));
  return new Promise((resolvePromise, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      log.end(() => resolvePromise(code ?? (signal ? 1 : 0)));
    });
  });
}

/** tsc for the functions codebase (the functions half of `npm run build`); resolves with its exit code. */
function buildFunctions(): Promise<number> {
  const tsc = require.resolve("typescript/bin/tsc", { paths: [REPO_ROOT] });
  const child = spawn(process.execPath, [tsc, "-p", join(REPO_ROOT, "functions", "tsconfig.build.json")], { stdio: "inherit" });
  return new Promise((resolvePromise, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolvePromise(code ?? 1));
  });
}

function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

const ids = WORKLOADS.map((w) => w.id);
runCli("bench", helpText(FLAGS, ids), (argv) => parseOptions(argv, FLAGS, ids), main);
