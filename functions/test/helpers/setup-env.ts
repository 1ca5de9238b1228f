// Jest setup for every tier that talks to an emulator: the same param values the emulator loads for the
// local project, functions/.env.demo-counter (if any) over functions/.env (an explicit environment variable still
// wins), and emulator hosts with their defaults from firebase.json when the tests run outside
// `firebase emulators:exec`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const functionsDir = join(__dirname, "..", "..");
// The first file that sets a name wins, as the project file wins over .env in firebase-tools.
for (const envFile of [join(functionsDir, ".env.demo-counter"), join(functionsDir, ".env")]) {
  if (!existsSync(envFile)) continue;
  for (const line of readFileSync(envFile, "utf8").split("\n")) {
    const match = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (match && process.env[match[1]!] === undefined) process.env[match[1]!] = match[2]!;
  }
}
process.env.FIRESTORE_EMULATOR_HOST ??= "127.0.0.1:8080";
process.env.FIREBASE_AUTH_EMULATOR_HOST ??= "127.0.0.1:9099";
process.env.METADATA_SERVER_DETECTION = "none";

// The functions log every rollup at debug level; keep test output readable unless asked (TEST_LOGS=1).
if (process.env.TEST_LOGS === undefined) {
  console.debug = () => undefined;
  console.info = () => undefined;
}
