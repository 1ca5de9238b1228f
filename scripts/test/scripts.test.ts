// The local scripts run as a developer runs them, with no emulator: seed and make-admin with the emulators
// stopped (a quick "start the emulators first: npm start" and exit code 3, not a 45 s hang and a stack), and
// every script's bad arguments (cli/src/lib/cli.ts): one line naming the mistake and pointing to --help, exit
// 2, no stack. Against the emulators (seed, make-admin, bench --help without a build):
// scripts.emulator.test.ts. The CLI's commands (preflight, check-rules, reconcile, …): cli/test/commands.test.ts.
import { freePort } from "../../cli/src/lib/firestore-emulator";
import { runScript, type Run } from "../../test/helpers/run";

jest.setTimeout(120_000);

/** A script run as `npm run` runs it, and how long it took. */
async function script(name: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run & { ms: number }> {
  const started = Date.now();
  const result = await runScript(name, args, { env });
  return { ...result, ms: Date.now() - started };
}

describe("with the emulators stopped", () => {
  let stopped: NodeJS.ProcessEnv;
  beforeAll(async () => {
    // Free ports: bound, then released, so nothing listens on them.
    const [auth, firestore] = await Promise.all([freePort(), freePort()]);
    // No hub: the scripts then take the functions emulator's port from firebase.json; seed checks every
    // emulator, so auth and firestore being down is enough for it to stop.
    stopped = { ...process.env, FIREBASE_AUTH_EMULATOR_HOST: `127.0.0.1:${auth}`, FIRESTORE_EMULATOR_HOST: `127.0.0.1:${firestore}`, FIREBASE_EMULATOR_HUB: "" };
  });

  it.each<[string, string[]]>([
    ["seed", []],
    ["make-admin", ["someone@example.com"]],
  ])("%s says to start the emulators first, within seconds, with exit code 3", async (name, args) => {
    const run = await script(name, args, stopped);
    expect(run.stderr).toContain("start the emulators first: npm start");
    expect(run.code).toBe(3);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(run.ms).toBeLessThan(15_000); // it used to hang for about 45 s; the check itself takes under 2 s
  });

  it.each(["seed", "make-admin"])("%s --help lists its exit codes, 3 among them", async (name) => {
    const run = await script(name, ["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Exit codes: 0 [^]*3 the [^]* do(es)? not answer \(start the emulators first: npm start\)/);
  });
});

/** A user's mistake as the convention answers it: exit 2, one line on stderr (the mistake, a pointer to --help), nothing else. */
function expectUsageError(run: Run, script: string, message: RegExp): void {
  const lines = run.stderr.trimEnd().split("\n");
  expect({ code: run.code, stdout: run.stdout, lines: lines.length }).toEqual({ code: 2, stdout: "", lines: 1 });
  expect(lines[0]).toMatch(message);
  expect(lines[0]).toMatch(new RegExp(`^${script}: .* \\(see (npm run ${script} -- --help|node --import tsx scripts/${script}\\.ts --help)\\)$`));
  expect(run.stderr).not.toMatch(/\n\s+at |Usage:/); // no stack trace, no whole help
}

describe("bad arguments", () => {
  it.each<[string, string[], RegExp]>([
    ["seed", ["--increments", "abc"], /--increments takes a whole number from 0 to 10000, not "abc"/],
    ["seed", ["--increments"], /--increments needs a value: a whole number from 0 to 10000/],
    ["seed", ["--project", "my-real-project"], /--project takes a demo-\* project id .*"my-real-project"/],
    ["seed", ["--frob"], /unknown option --frob \(options: --increments, --project\)/],
    ["make-admin", ["not-an-email@"], /"not-an-email@" is not an email address/],
    ["make-admin", [], /missing argument: one user: an email or a uid/],
    ["make-admin", ["a@example.com", "b@example.com"], /unexpected argument b@example.com/],
    ["make-admin", ["a@example.com", "--project", "my-real-project"], /refusing project "my-real-project"/],
    ["bench/main", ["--sustained-rate", "fast"], /--sustained-rate takes a whole number from 1 up, not "fast"/],
    ["bench/main", ["--no-such-option", "1"], /unknown option --no-such-option/],
    ["emulators", ["begin"], /unknown mode "begin": start or exec/],
    ["emulators", ["exec"], /exec needs a command after --/],
    ["emulators", ["start", "--web-port", "70000"], /--web-port takes a whole number from 1 to 65535, not "70000"/],
    ["emulators", ["start", "--react-port", "0"], /--react-port takes a whole number from 1 to 65535, not "0"/],
  ])("%s %j: exit 2, one line naming the mistake and --help, no stack trace", async (name, args, message) => {
    const run = await script(name, args);
    expectUsageError(run, name === "bench/main" ? "bench" : name, message);
  });
});
