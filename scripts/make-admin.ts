// `npm run make-admin -- <email or uid>`: gives a user of the Auth emulator the custom claim
// `admin: true`, so resetCounter, reshardCounter and deleteCounter can be tried locally. It only ever
// talks to the Auth emulator (through its REST API, as the admin SDK would) and refuses any project
// id that is not demo-*: a real project's admins are made with the admin SDK, deliberately.
import { CliError, demoProject, EXIT, lastValue, readArgv, runCli, UsageError } from "../cli/src/lib/cli";
import { emulatorHosts, unreachableMessage } from "./lib/emulator-hosts";
import { DEFAULT_PROJECT } from "./lib/firebase-cli";

/** The password of a user this script creates (an emulator-only account). */
const CREATED_PASSWORD = "admin-password";

const HELP = `Usage: npm run make-admin -- <email or uid> [--project <demo-id>]

Sets the custom claim admin: true on a user of the Auth emulator (the one \`npm start\` runs), so the
admin callables (resetCounter, reshardCounter, deleteCounter) can be tried locally. Other claims the
user has are kept. An email with no user yet gets a new user with the password "${CREATED_PASSWORD}".
A uid must exist already (the example page shows the uid it signed in with): 1 to 128 characters.
Only for the emulators: refuses a project id that does not start with demo-.

Exit codes: 0 done; 1 unexpected error or no user with that uid; 2 bad arguments or a non-demo project;
3 the Auth emulator does not answer (start the emulators first: npm start).`;

interface Args {
  who: string;
  project: string;
}

/** An email: name@domain, no spaces, no empty domain label (stricter than the Auth emulator's own check). */
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)*$/;

function parseArgs(argv: string[]): Args | "help" {
  const read = readArgv(argv, {
    values: { "--project": "a demo-* project id" },
    positionals: { min: 1, max: 1, name: "one user: an email or a uid" },
  });
  if (read === "help") return read;
  const who = read.positionals[0]!;
  if (who.includes("@") && !EMAIL.test(who)) throw new UsageError(`${JSON.stringify(who)} is not an email address (name@example.com), nor a uid (uids have no @)`);
  if (who.length > 128) throw new UsageError(`a uid has at most 128 characters; this one has ${who.length}`);
  const project = lastValue(read, "--project") ?? process.env.GCLOUD_PROJECT ?? DEFAULT_PROJECT;
  try {
    return { who, project: demoProject("--project", project) };
  } catch {
    throw new UsageError(`refusing project "${project}": make-admin only works on the Auth emulator with a demo-* project`);
  }
}

interface AuthUser {
  localId: string;
  email?: string;
  customAttributes?: string;
}

/** One call to the Auth emulator's Identity Toolkit API, as the project's owner (emulator only). */
async function identityToolkit<T>(authHost: string, project: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(`http://${authHost}/identitytoolkit.googleapis.com/v1/projects/${project}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer owner" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) {
    // The Auth emulator answers errors as {"error":{"message":"INVALID_EMAIL",...}}: show the reason only.
    let reason = `HTTP ${response.status}`;
    try {
      reason = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? reason;
    } catch {
      // not JSON: keep the status
    }
    throw new CliError(`the Auth emulator refused ${path} (project ${project}): ${reason}`, EXIT.failed);
  }
  return JSON.parse(text) as T;
}

async function main({ who, project }: Args): Promise<number> {
  const hosts = await emulatorHosts();
  const down = await unreachableMessage(hosts, ["auth"]);
  if (down !== null) {
    console.error(down);
    return EXIT.emulatorsDown;
  }
  const isEmail = who.includes("@");
  const lookup = await identityToolkit<{ users?: AuthUser[] }>(hosts.auth, project, "accounts:lookup", isEmail ? { email: [who] } : { localId: [who] });
  let user = lookup.users?.[0];
  let created = false;
  if (user === undefined) {
    if (!isEmail) {
      console.error(`No user with uid ${who} in the Auth emulator (project ${project}). Pass an email to create one.`);
      return EXIT.failed;
    }
    user = await identityToolkit<AuthUser>(hosts.auth, project, "accounts", { email: who, password: CREATED_PASSWORD });
    created = true;
  }
  const claims = { ...(JSON.parse(user.customAttributes || "{}") as Record<string, unknown>), admin: true };
  await identityToolkit(hosts.auth, project, "accounts:update", { localId: user.localId, customAttributes: JSON.stringify(claims) });

  const email = user.email ?? (isEmail ? who : undefined);
  console.log(`${created ? "Created" : "Updated"} user ${user.localId}${email ? ` (${email})` : ""} in the Auth emulator (project ${project}): admin: true.`);
  if (email !== undefined) {
    console.log(`Sign in as them (after connectAuthEmulator):`);
    console.log(`  await signInWithEmailAndPassword(auth, "${email}", ${created ? `"${CREATED_PASSWORD}"` : "<their password>"});`);
  }
  console.log("Already signed in as them (the example page, an anonymous user)? Reload, or refresh the ID token so it");
  console.log("carries the claim: await auth.currentUser.getIdToken(true);");
  return EXIT.ok;
}

runCli("make-admin", HELP, parseArgs, main);
