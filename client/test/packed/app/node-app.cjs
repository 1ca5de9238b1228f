// The same client from CommonJS: require() gets the package's CommonJS build, which requires the same
// CommonJS Firebase modules the app requires. Prints the first value watch() shows.
const { initializeApp } = require("firebase/app");
const { connectFirestoreEmulator, getFirestore } = require("firebase/firestore");
const { getFunctions } = require("firebase/functions");
const { createCounterClient } = require("@firestore-exact-counter/client");

const { projectId, region, emulators, counterId } = JSON.parse(process.env.APP_CONFIG);
const app = initializeApp({ projectId, apiKey: "demo-api-key", appId: "demo-cjs-app" });
const firestore = getFirestore(app);
const at = emulators.firestore.lastIndexOf(":");
connectFirestoreEmulator(firestore, emulators.firestore.slice(0, at), Number(emulators.firestore.slice(at + 1)));
const counters = createCounterClient({ functions: getFunctions(app, region), firestore });
setTimeout(() => process.exit(1), 60_000).unref();
counters.watch(
  counterId,
  (value) => {
    console.log(JSON.stringify({ step: "watched", value }));
    process.exit(0);
  },
  (error) => {
    console.log(JSON.stringify({ step: "error", message: String(error) }));
    process.exit(1);
  },
);
