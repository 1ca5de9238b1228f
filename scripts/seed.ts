// Seeds the local emulator suite (`npm start` in another terminal) with demo counters, the way an app
// would: the Firebase JS SDK signs in anonymously and calls the callables, then reads the totals.
import { deleteApp, initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInAnonymously } from "firebase/auth";
import { connectFirestoreEmulator, doc, getDoc, getFirestore } from "firebase/firestore";
import { connectFunctionsEmulator, FunctionsError, getFunctions, httpsCallable } from "firebase/functions";
import { randomUUID } from "node:crypto";
import { DEFAULT_PROJECT } from "./lib/firebase-cli";

const HELP = `Usage: npm run seed -- [--increments <n>] [--project <demo-id>]

Creates the counters demo-likes (10 shards), demo-views (50) and demo-favorites (5) if they do not exist,
makes <n> increments (default 50) on each through incrementCounter, and prints each total once the rollup
has caught up. Needs the emulators from \`npm start\` (auth 9099, firestore 8080, functions 5001).`;

const COUNTERS: [string, number][] = [
  ["demo-likes", 10],
  ["demo-views", 50],
  ["demo-favorites", 5],
];

async function main(argv: string[]): Promise<number> {
  let increments = 50;
  let project = DEFAULT_PROJECT;
  for (let i = 0; i < argv.length; i++) {
    const [arg, value] = [argv[i], argv[i + 1]];
    if (arg === "--help" || arg === "-h") {
      console.log(HELP);
      return 0;
    } else if (arg === "--increments" && value !== undefined && /^\d+$/.test(value)) {
      increments = Number(value);
      i++;
    } else if (arg === "--project" && value !== undefined && value.startsWith("demo-")) {
      project = value;
      i++;
    } else {
      console.error(`unknown or invalid option: ${String(arg)}\n\n${HELP}`);
      return 2;
    }
  }

  const app = initializeApp({ projectId: project, apiKey: "demo-api-key", appId: "demo-seed" });
  try {
    const auth = getAuth(app);
    connectAuthEmulator(auth, "http://127.0.0.1:9099", { disableWarnings: true });
    const functions = getFunctions(app, "us-central1");
    connectFunctionsEmulator(functions, "127.0.0.1", 5001);
    const db = getFirestore(app);
    connectFirestoreEmulator(db, "127.0.0.1", 8080);
    await signInAnonymously(auth);

    const create = httpsCallable(functions, "createCounter");
    const increment = httpsCallable(functions, "incrementCounter");
    const expected = new Map<string, number>();
    for (const [counterId, numShards] of COUNTERS) {
      try {
        await create({ counterId, numShards });
        console.log(`created ${counterId} (${numShards} shards)`);
      } catch (error) {
        if (!(error instanceof FunctionsError && error.code === "functions/already-exists")) throw error;
        console.log(`${counterId} exists; adding to it`);
      }
      const before = (await getDoc(doc(db, "counters", counterId))).get("total") as number;
      // Sequential on purpose: the emulator boots a worker per concurrent request (see README).
      for (let i = 0; i < increments; i++) await increment({ counterId, delta: 1, requestId: randomUUID() });
      expected.set(counterId, before + increments);
    }
    for (const [counterId, want] of expected) {
      const deadline = Date.now() + 30_000;
      let total = (await getDoc(doc(db, "counters", counterId))).get("total") as number;
      while (total !== want && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        total = (await getDoc(doc(db, "counters", counterId))).get("total") as number;
      }
      console.log(`${counterId}: total ${total}${total === want ? "" : ` (expected ${want}; rollup still running?)`}`);
    }
    return 0;
  } finally {
    await deleteApp(app);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error && /ECONNREFUSED|fetch failed/.test(String(error.message))
      ? "The emulators are not running: start them with `npm start` in another terminal."
      : error);
    process.exit(1);
  },
);
