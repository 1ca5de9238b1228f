// Jest setup for every tier that talks to an emulator: the same param values the emulator loads for the
// local project, functions/.env.demo-counter (if any) over functions/.env (an explicit environment variable still
// wins), and emulator hosts with their defaults from firebase.json when the tests run outside
// `firebase emulators:exec`.
import { repositoryParams } from "./setup-env-params";

for (const [name, value] of Object.entries(repositoryParams())) process.env[name] ??= value;
process.env.FIRESTORE_EMULATOR_HOST ??= "127.0.0.1:8080";
process.env.FIREBASE_AUTH_EMULATOR_HOST ??= "127.0.0.1:9099";
process.env.METADATA_SERVER_DETECTION = "none";

// The functions log every rollup at debug level; keep test output readable unless asked (TEST_LOGS=1).
if (process.env.TEST_LOGS === undefined) {
  console.debug = () => undefined;
  console.info = () => undefined;
}
