// Where the local emulators listen, for the scripts that talk to them (seed, make-admin, reconcile, the
// example's page): the variables `firebase emulators:exec` sets (FIREBASE_AUTH_EMULATOR_HOST,
// FIRESTORE_EMULATOR_HOST, FIREBASE_EMULATOR_HUB for the functions emulator), else the ports in
// firebase.json that `npm start` uses. And a quick check that they answer, so a script says "start the
// emulators first" within a couple of seconds instead of hanging in an SDK's retries.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { answers } from "../../cli/src/lib/firestore-emulator";
import { REPO_ROOT } from "./firebase-cli";

export { answers };

/** host:port of each emulator the product uses. */
export interface EmulatorHosts {
  auth: string;
  firestore: string;
  functions: string;
}

export type EmulatorName = keyof EmulatorHosts;

/** What the user is told when an emulator does not answer. */
export const START_EMULATORS_FIRST = "start the emulators first: npm start";

type EmulatorConfig = Partial<Record<EmulatorName, { host?: string; port?: number }>>;

/** The emulators' host:port from a firebase.json (defaults where it names none). */
export function configuredHosts(configFile = join(REPO_ROOT, "firebase.json")): EmulatorHosts {
  const config = JSON.parse(readFileSync(configFile, "utf8")) as { emulators?: EmulatorConfig };
  const at = (name: EmulatorName, port: number) => {
    const entry = config.emulators?.[name];
    return `${entry?.host ?? "127.0.0.1"}:${entry?.port ?? port}`;
  };
  return { auth: at("auth", 9099), firestore: at("firestore", 8080), functions: at("functions", 5001) };
}

/**
 * The hosts to use: the environment's where set (inside `emulators:exec`, or exported by the user),
 * firebase.json's otherwise. The functions emulator is looked up in the emulator hub when one is named.
 */
export async function emulatorHosts(env: NodeJS.ProcessEnv = process.env, configFile?: string): Promise<EmulatorHosts> {
  const configured = configuredHosts(configFile);
  let functions = configured.functions;
  const hub = env.FIREBASE_EMULATOR_HUB;
  if (hub !== undefined && hub !== "") {
    try {
      const response = await fetch(`http://${hub}/emulators`, { signal: AbortSignal.timeout(1500) });
      const listed = (await response.json()) as Partial<Record<string, { host: string; port: number }>>;
      if (listed.functions !== undefined) functions = `${listed.functions.host}:${listed.functions.port}`;
    } catch {
      // No hub answering: keep firebase.json's port; the reachability check reports it if it is wrong.
    }
  }
  return {
    auth: env.FIREBASE_AUTH_EMULATOR_HOST || configured.auth,
    firestore: env.FIRESTORE_EMULATOR_HOST || configured.firestore,
    functions,
  };
}


/** null when every named emulator answers, else the message to print (naming the ones that do not). */
export async function unreachableMessage(hosts: EmulatorHosts, names: EmulatorName[]): Promise<string | null> {
  const checks = await Promise.all(names.map(async (name) => ({ name, ok: await answers(hosts[name]) })));
  const down = checks.filter((c) => !c.ok).map((c) => `${c.name} at ${hosts[c.name]}`);
  if (down.length === 0) return null;
  return `Nothing answers at ${down.join(", ")}: ${START_EMULATORS_FIRST} (in another terminal).`;
}

/** ["127.0.0.1", 8080] from "127.0.0.1:8080" (the SDKs' connect*Emulator calls take them apart). */
export function splitHost(host: string): [string, number] {
  const i = host.lastIndexOf(":");
  return [host.slice(0, i), Number(host.slice(i + 1))];
}
