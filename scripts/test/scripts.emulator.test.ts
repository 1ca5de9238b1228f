// The local scripts run as a developer runs them, against the emulators: seed creates its counters through
// the callables, make-admin sets its claim in the Auth emulator, and `bench --help` answers without
// building the functions (a build hot-reloads a running npm start). With the emulators stopped and bad
// arguments: scripts.test.ts.
import { statSync } from "node:fs";
import { join } from "node:path";
import { deleteApp, initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInWithEmailAndPassword } from "firebase/auth";
import { randomUUID } from "node:crypto";
import { REPO_ROOT } from "../lib/firebase-cli";
import { runScript, type Run } from "../../test/helpers/run";
import { authHost, requireEmulators, requireFunctionsEmulator } from "../../test/helpers/emulators";
import { E2E_PROJECT } from "../../test/helpers/client";

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
