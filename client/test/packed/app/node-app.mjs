// A fresh "type": "module" Node app, as an app developer writes one: it imports the Firebase SDK and the
// packed client by name. Reads its settings from APP_CONFIG; prints one JSON line per step; exits 0
// once watch() has shown the counter's total and an increment() settled in it.
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInAnonymously } from "firebase/auth";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";
import { connectFunctionsEmulator, getFunctions } from "firebase/functions";
import { createCounterClient } from "@firestore-exact-counter/client";

const { projectId, region, emulators, counterId } = JSON.parse(process.env.APP_CONFIG);
const split = (host) => [host.slice(0, host.lastIndexOf(":")), Number(host.slice(host.lastIndexOf(":") + 1))];
const say = (line) => console.log(JSON.stringify(line));
setTimeout(() => {
  say({ step: "timeout" });
  process.exit(1);
}, 60_000).unref();

const app = initializeApp({ projectId, apiKey: "demo-api-key", appId: "demo-esm-app" });
const auth = getAuth(app);
connectAuthEmulator(auth, `http://${emulators.auth}`, { disableWarnings: true });
const functions = getFunctions(app, region);
connectFunctionsEmulator(functions, ...split(emulators.functions));
const firestore = getFirestore(app);
connectFirestoreEmulator(firestore, ...split(emulators.firestore));
await signInAnonymously(auth);

const counters = createCounterClient({ functions, firestore });
let first;
const settled = new Promise((resolve, reject) => {
  counters.watch(
    counterId,
    (value, view) => {
      if (first === undefined) {
        first = value;
        say({ step: "watched", value });
        counters.increment(counterId).then((outcome) => say({ step: "incremented", attempts: outcome.attempts }), reject);
      } else if (value === first + 1 && view.total === value) {
        say({ step: "settled", value });
        resolve();
      }
    },
    reject,
  );
});
try {
  await settled;
  counters.dispose();
  process.exit(0);
} catch (error) {
  say({ step: "error", message: String(error) });
  process.exit(1);
}
