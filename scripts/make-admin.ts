// `npm run make-admin -- <email or uid>`: gives a user of the Auth emulator the custom claim
// `admin: true`, so resetCounter, reshardCounter and deleteCounter can be tried locally. It only ever
// talks to the Auth emulator (through its REST API, as the admin SDK would) and refuses any project
// id that is not demo-*: a real project's admins are made with the admin SDK, deliberately.
import { EXIT, runCli, type Parsed } from "./lib/cli";
import { emulatorHosts, unreachableMessage } from "./lib/emulator-hosts";
import { DEFAULT_PROJECT } from "./lib/firebase-cli";

/** The password of a user this script creates (an emulator-only account). */
const CREATED_PASSWORD = "admin-password";

const HELP = `Usage: npm run make-admin -- <email or uid> [--project <demo-id>]

Sets the custom claim admin: true on a user of the Auth emulator (the one \`npm start\` runs), so the
admin callables (resetCounter, reshardCounter, deleteCounter) can be tried locally. Other claims the
user has are kept. An email with no user yet gets a new user with the password "${CREATED_PASSWORD}".
A uid must exist already (the example page shows the uid it signed in with).
Only for the emulators: refuses a project id that does not start with demo-.

Exit codes: 0 done; 1 unexpected error or no user with that uid; 2 bad arguments or a non-demo project;
3 the Auth emulator does not answer (start the emulators first: npm start).`;

interface Args {
  who: string;
  project: string;
}

function parseArgs(argv: string[]): Parsed<Args> {
  let who: string | undefined;
  let project = process.env.GCLOUD_PROJECT ?? DEFAULT_PROJECT;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") return { help: true };
    if (arg === "--project") {
      const value = argv[++i];
      if (value === undefined) return { error: "--project needs a project id" };
      project = value;
    } else if (arg.startsWith("-") || who !== undefined) {
      return { error: `unexpected argument: ${arg}` };
    } else {
      who = arg;
    }
  }
  if (who === undefined) return { error: "name the user: an email or a uid" };
  if (!project.startsWith("demo-")) {
    return { error: `refusing project "${project}": make-admin only works on the Auth emulator with a demo-* project` };
  }
  return { who, project };
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
  if (!response.ok) throw new Error(`Auth emulator ${path}: HTTP ${response.status} ${text}`);
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

runCli(HELP, parseArgs, main);
