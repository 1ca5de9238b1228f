// Seeds the local emulator suite (`npm start` in another terminal) with demo counters, the way an app
// would: the Firebase JS SDK signs in anonymously and calls the callables, then reads the totals.
import { randomUUID } from "node:crypto";
import { demoProject, EXIT, integerOption, lastValue, readArgv, runCli } from "../cli/src/lib/cli";
import { emulatorHosts, splitHost, unreachableMessage } from "./lib/emulator-hosts";
import { DEFAULT_PROJECT } from "./lib/firebase-cli";

/** Most increments per counter: seed makes them one by one, about 20 a second against the emulator. */
const MAX_INCREMENTS = 10_000;

const HELP = `Usage: npm run seed -- [--increments <n>] [--project <demo-id>]

Creates the counters demo-likes (10 shards), demo-views (50) and demo-favorites (5) if they do not exist,
makes <n> increments (a whole number from 0 to ${MAX_INCREMENTS}, default 50) on each through incrementCounter, and prints each total once the rollup
has caught up. Needs the emulators from \`npm start\` (the ports in firebase.json, or the hosts in
FIREBASE_AUTH_EMULATOR_HOST / FIRESTORE_EMULATOR_HOST / FIREBASE_EMULATOR_HUB).

--project takes a demo-* project id (default: ${DEFAULT_PROJECT}).

Exit codes: 0 seeded; 1 unexpected error; 2 bad arguments;
3 the emulators do not answer (start the emulators first: npm start).`;

const COUNTERS: [string, number][] = [
  ["demo-likes", 10],
  ["demo-views", 50],
  ["demo-favorites", 5],
];

interface Args {
  increments: number;
  project: string;
}

function parseArgs(argv: string[]): Args | "help" {
  const read = readArgv(argv, {
    values: { "--increments": `a whole number from 0 to ${MAX_INCREMENTS}`, "--project": "a demo-* project id" },
  });
  if (read === "help") return read;
  const project = lastValue(read, "--project");
  return {
    increments: integerOption(read, "--increments", { min: 0, max: MAX_INCREMENTS }, 50),
    project: project === undefined ? DEFAULT_PROJECT : demoProject("--project", project),
  };
}

async function main({ increments, project }: Args): Promise<number> {
  const hosts = await emulatorHosts();
  const down = await unreachableMessage(hosts, ["auth", "functions", "firestore"]);
  if (down !== null) {
    console.error(down);
    return EXIT.emulatorsDown;
  }
  // The JS SDK loads here, not with the script: --help and a mistake answer without it.
  const [{ deleteApp, initializeApp }, { connectAuthEmulator, getAuth, signInAnonymously }, { connectFirestoreEmulator, doc, getDoc, getFirestore }, sdkFunctions] =
    await Promise.all([import("firebase/app"), import("firebase/auth"), import("firebase/firestore"), import("firebase/functions")]);
  const { connectFunctionsEmulator, FunctionsError, getFunctions, httpsCallable } = sdkFunctions;
  const app = initializeApp({ projectId: project, apiKey: "demo-api-key", appId: "demo-seed" });
  try {
    const auth = getAuth(app);
    connectAuthEmulator(auth, `http://${hosts.auth}`, { disableWarnings: true });
    const functions = getFunctions(app, "us-central1");
    connectFunctionsEmulator(functions, ...splitHost(hosts.functions));
    const db = getFirestore(app);
    connectFirestoreEmulator(db, ...splitHost(hosts.firestore));
    await signInAnonymously(auth);

    const create = httpsCallable(functions, "createCounter");
    const increment = httpsCallable(functions, "incrementCounter");
    const totalOf = async (counterId: string) => (await getDoc(doc(db, "counters", counterId))).get("total") as number;
    const expected = new Map<string, number>();
    for (const [counterId, numShards] of COUNTERS) {
      try {
        await create({ counterId, numShards });
        console.log(`created ${counterId} (${numShards} shards)`);
      } catch (error) {
        if (!(error instanceof FunctionsError && error.code === "functions/already-exists")) throw error;
        console.log(`${counterId} exists; adding to it`);
      }
      const before = await totalOf(counterId);
      // Sequential on purpose: the emulator boots a worker per concurrent request (docs/development.md).
      for (let i = 0; i < increments; i++) await increment({ counterId, delta: 1, requestId: randomUUID() });
      expected.set(counterId, before + increments);
    }
    for (const [counterId, want] of expected) {
      const deadline = Date.now() + 30_000;
      let total = await totalOf(counterId);
      while (total !== want && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        total = await totalOf(counterId);
      }
      console.log(`${counterId}: total ${total}${total === want ? "" : ` (expected ${want}; rollup still running?)`}`);
    }
    return EXIT.ok;
  } finally {
    await deleteApp(app);
  }
}

runCli("seed", HELP, parseArgs, main);
