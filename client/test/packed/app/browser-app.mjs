// A browser app, bundled by esbuild as an app's build would bundle it: shows the counter with watch().
// The page reads its settings from /config.json; the value lands in window.__value, errors in
// window.__error.
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";
import { getFunctions } from "firebase/functions";
import { createCounterClient } from "@firestore-exact-counter/client";

const { projectId, region, emulators, counterId } = await (await fetch("./config.json")).json();
const app = initializeApp({ projectId, apiKey: "demo-api-key", appId: "demo-browser-app" });
const firestore = getFirestore(app);
const at = emulators.firestore.lastIndexOf(":");
connectFirestoreEmulator(firestore, emulators.firestore.slice(0, at), Number(emulators.firestore.slice(at + 1)));
const counters = createCounterClient({ functions: getFunctions(app, region), firestore });
try {
  counters.watch(
    counterId,
    (value) => (window.__value = value),
    (error) => (window.__error = String(error)),
  );
} catch (error) {
  window.__error = String(error);
}
