// The CLI as a user runs it (bundled as npm pack bundles it, by cli/build.mjs, into a folder of the
// repository's .cache so that it finds the repository's packages): the command table
// (--help, --version, no command, an unknown one), every command's --help, and every command's bad
// arguments: one line naming the mistake and the command's --help, exit 2, no stack trace. Plus reconcile
// with the emulators stopped (exit 3 within seconds); with a --counter that does not exist (exit 2):
// reconcile-scale.emulator.test.ts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../src/lib/firestore-emulator";
import { runNode, type Run } from "../../test/helpers/run";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";

jest.setTimeout(120_000);

const COMMANDS = ["init", "preflight", "check-rules", "reconcile", "backfill", "migrate-extension", "firestore-jar"];
// One bundle for the file: each run then costs a plain node start, not tsx compiling the sources again.
let bundle: string;
beforeAll(async () => {
  mkdirSync(join(REPO_ROOT, ".cache"), { recursive: true });
  bundle = mkdtempSync(join(REPO_ROOT, ".cache", "cli-bundle-"));
  const built = await runNode([join(REPO_ROOT, "cli", "build.mjs"), bundle]);
  if (built.code !== 0) throw new Error(`cli/build.mjs failed: ${built.stderr}`);
});
afterAll(() => rmSync(bundle, { recursive: true, force: true }));

const main = (args: string[], env?: NodeJS.ProcessEnv): Promise<Run> => runNode([join(bundle, "main.js"), ...args], env ? { env } : {});
const runCommand = (command: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<Run> => main([command, ...args], options.env);

/** A user's mistake as the convention answers it: exit 2, one line on stderr (the mistake, the command's --help), nothing else. */
function expectUsageError(run: Run, command: string, message: RegExp): void {
  const lines = run.stderr.trimEnd().split("\n");
  expect({ code: run.code, stdout: run.stdout, lines: lines.length }).toEqual({ code: 2, stdout: "", lines: 1 });
  expect(lines[0]).toMatch(message);
  expect(lines[0]).toMatch(new RegExp(`^${command}: .* \\(see firestore-exact-counter ${command} --help\\)$`));
  expect(run.stderr).not.toMatch(/\n\s+at |Usage:/); // no stack trace, no whole help
}

describe("the command table", () => {
  it("lists every command with --help, and exits 0", async () => {
    const run = await main(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage: firestore-exact-counter <command> [options]");
    for (const command of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^  ${command} +\\S`, "m"));
  });

  it("prints its version with --version", async () => {
    const run = await main(["--version"]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "0.2.0\n" });
  });

  it("prints the usage on stderr and exits 2 without a command", async () => {
    const run = await main([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Usage: firestore-exact-counter <command>");
  });

  it("names an unknown command and the commands there are, in one line, with exit 2", async () => {
    const run = await main(["deploy"]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: "" });
    expect(run.stderr).toBe(`firestore-exact-counter: unknown command "deploy" (commands: ${COMMANDS.join(", ")}) (see firestore-exact-counter --help)\n`);
  });

  it.each(COMMANDS)("%s --help prints its usage and exit codes, and exits 0", async (command) => {
    const run = await runCommand(command, ["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Usage: firestore-exact-counter ${command}\\b`));
    expect(run.stdout).toMatch(/Exit codes?: /);
  });
});

describe("bad arguments", () => {
  const dir = mkdtempSync(join(tmpdir(), "cli-args-"));
  const empty = join(dir, "empty.rules");
  writeFileSync(empty, "  \n");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each<[string, string[], RegExp]>([
    ["init", ["--dir", dir, "--codebase", "Counters"], /--codebase takes a codebase name of lowercase letters, digits, _ and - \(at most 63\), not "Counters"/],
    ["init", ["--codebase", "default"], /--codebase default: the counters never go into codebase "default"/],
    ["init", ["--functions-package"], /--functions-package needs a value/],
    ["init", ["--force"], /unknown option --force \(options: --dry-run, --no-install, --dir, --codebase, --functions-package, --cli-package\)/],
    ["preflight", ["--dir", "/nonexistent"], /--dir \/nonexistent: no such folder/],
    ["preflight", ["--dir", dir], /no firebase.json in /],
    ["preflight", ["--now", "someday"], /--now takes a date such as 2027-03-01, not "someday"/],
    ["preflight", ["--project", "My Project"], /--project takes a project id \(lowercase letters, digits, hyphens\)/],
    ["check-rules", ["nosuch.rules"], /nosuch.rules: no such file/],
    ["check-rules", [empty], /empty.rules is empty: it holds no rules to check/],
    ["check-rules", [dir], /is a folder: name the rules file in it/],
    ["check-rules", [], /missing argument: one rules file/],
    ["check-rules", ["a.rules", "b.rules"], /unexpected argument b.rules/],
    ["check-rules", ["--fix", "a.rules"], /unknown option --fix \(options: --dir\)/],
    ["reconcile", ["--concurrency", "0"], /--concurrency takes a whole number from 1 to 500, not "0"/],
    ["reconcile", ["--stuck-after", "soon"], /--stuck-after takes a whole number from 1 up, not "soon"/],
    ["reconcile", ["--counter"], /--counter needs a value: a counter id/],
    ["reconcile", ["--dir", dir], /--dir .*: no firebase.json in /],
    ["backfill", ["--concurrency", "0"], /--concurrency takes a whole number from 1 to 100, not "0"/],
    ["backfill", ["--counter"], /--counter needs a value: a counter id/],
    ["backfill", ["--start-after", "here"], /--start-after here: not a position a backfill printed/],
    ["backfill", ["--dir", dir], /--dir .*: no firebase.json in /],
    ["firestore-jar", ["--out", "x"], /unknown option --out \(this script takes no options\)/],
  ])("%s %j: exit 2, one line naming the mistake and --help, no stack trace", async (command, args, message) => {
    expectUsageError(await runCommand(command, args), command, message);
  });

  it("points to the npm script's --help when the repository's npm script ran it", async () => {
    const run = await runCommand("preflight", ["--now", "someday"], { env: { ...process.env, npm_lifecycle_event: "preflight", npm_package_name: "firestore-exact-counter" } });
    expect(run.stderr).toBe('preflight: --now takes a date such as 2027-03-01, not "someday" (see npm run preflight -- --help)\n');
  });
});

describe("reconcile", () => {
  it("says to start the emulators first, within seconds, with exit code 3, when the Firestore emulator does not answer", async () => {
    const stopped = { ...process.env, FIRESTORE_EMULATOR_HOST: `127.0.0.1:${await freePort()}` };
    const started = Date.now();
    const run = await runCommand("reconcile", [], { env: stopped });
    expect(run.stderr).toContain("start the emulators first (firebase emulators:start; in the firestore-exact-counter repository: npm start)");
    expect(run.code).toBe(3);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(Date.now() - started).toBeLessThan(15_000); // the admin SDK alone would retry for about 45 s
  });
});
