// The local scripts run as a developer runs them: seed and make-admin against the emulators; seed and
// make-admin with the emulators stopped (a quick "start the emulators first: npm start" and exit code 3,
// not a 45 s hang and a stack); `bench --help` without a build; and every script's bad arguments
// (cli/src/lib/cli.ts): one line naming the mistake and pointing to --help, exit 2, no stack. The CLI's
// commands (preflight, check-rules, reconcile, …): cli/test/commands.test.ts.
import { statSync } from "node:fs";
import { join } from "node:path";
import { deleteApp, initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInWithEmailAndPassword } from "firebase/auth";
import { randomUUID } from "node:crypto";
import { REPO_ROOT } from "../lib/firebase-cli";
import { freePort } from "../../cli/src/lib/firestore-emulator";
import { runScript, type Run } from "./helpers/run";
import { authHost, requireEmulators, requireFunctionsEmulator } from "../../functions/test/helpers/emulators";
import { E2E_PROJECT } from "../../functions/test/helpers/client";

jest.setTimeout(120_000);

/** A script run as `npm run` runs it, and how long it took. */
async function script(name: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run & { ms: number }> {
  const started = Date.now();
  const result = await runScript(name, args, { env });
  return { ...result, ms: Date.now() - started };
}

/** The signed-in user's custom claims, after signing in with email and password against the Auth emulator. */
async function claimsOf(email: string, password: string): Promise<Record<string, unknown>> {
  const app = initializeApp({ projectId: E2E_PROJECT, apiKey: "demo-api-key" }, randomUUID());
  try {
    const auth = getAuth(app);
    connectAuthEmulator(auth, `http://${authHost()}`, { disableWarnings: true });
    const { user } = await signInWithEmailAndPassword(auth, email, password);
    return (await user.getIdTokenResult()).claims;
  } finally {
    await deleteApp(app);
  }
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

describe("make-admin", () => {
  beforeAll(() => requireEmulators());

  it("creates a user for a new email with the claim admin: true, and says how to sign in as them", async () => {
    const email = `admin-${randomUUID().slice(0, 8)}@example.com`;
    const run = await script("make-admin", [email]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`await signInWithEmailAndPassword(auth, "${email}", "admin-password");`);
    expect(await claimsOf(email, "admin-password")).toMatchObject({ admin: true });
  });

  it("adds the claim to an existing user by uid and keeps their other claims", async () => {
    const email = `member-${randomUUID().slice(0, 8)}@example.com`;
    const signUp = await fetch(`http://${authHost()}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=demo-api-key`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "password-123", returnSecureToken: true }),
    });
    const { localId } = (await signUp.json()) as { localId: string };
    await fetch(`http://${authHost()}/identitytoolkit.googleapis.com/v1/projects/${E2E_PROJECT}/accounts:update`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer owner" },
      body: JSON.stringify({ localId, customAttributes: JSON.stringify({ plan: "pro" }) }),
    });
    const run = await script("make-admin", [localId]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Updated user ${localId} (${email})`);
    expect(await claimsOf(email, "password-123")).toMatchObject({ admin: true, plan: "pro" });
  });

  it("refuses a project that is not demo-* with exit code 2, and an unknown uid with exit code 1", async () => {
    const real = await script("make-admin", ["someone@example.com", "--project", "my-real-project"]);
    expect(real.code).toBe(2);
    expect(real.stderr).toContain('refusing project "my-real-project"');
    const unknown = await script("make-admin", [`no-such-uid-${randomUUID().slice(0, 8)}`]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("No user with uid");
  });
});

describe("seed", () => {
  beforeAll(async () => {
    await requireEmulators();
    await requireFunctionsEmulator();
  });

  it("creates the demo counters through the callables and prints their totals once rolled up", async () => {
    const run = await script("seed", ["--increments", "2"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    for (const counterId of ["demo-likes", "demo-views", "demo-favorites"]) {
      expect(run.stdout).toMatch(new RegExp(`^${counterId}: total \\d+$`, "m"));
    }
  });
});

describe("bench", () => {
  it("answers --help and a bad option without building the functions (a build hot-reloads a running npm start)", async () => {
    const entry = join(REPO_ROOT, "functions", "lib", "index.js");
    const before = statSync(entry).mtimeMs;
    const help = await script("bench/main", ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: npm run bench");
    const bad = await script("bench/main", ["--no-such-option", "1"]);
    expect(bad.code).toBe(2);
    expect(statSync(entry).mtimeMs).toBe(before);
    expect(`${help.stdout}${bad.stdout}`).not.toContain("building the functions");
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
