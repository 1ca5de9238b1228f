// A browser app with React (whichever major the fresh app installed), bundled by esbuild as an app's
// build would bundle it, rendering the packed client's hooks in strict mode against the emulators. The
// test drives it through window.__harness: sign in and out, mount and unmount, call what a hook returned
// (its latest render's), and read the client's own count of open listeners. Each component renders
// "status|data|error name" into <span id="<name>">.
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, createUserWithEmailAndPassword, getAuth, signInWithEmailAndPassword, signOut } from "firebase/auth";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";
import { connectFunctionsEmulator, getFunctions } from "firebase/functions";
import { createCounterClient } from "@firestore-exact-counter/client";
import { CounterClientProvider, useCounter, useLike } from "@firestore-exact-counter/client/react";
import { createElement as h, StrictMode, version } from "react";
import { createRoot } from "react-dom/client";

const split = (host) => [host.slice(0, host.lastIndexOf(":")), Number(host.slice(host.lastIndexOf(":") + 1))];
const { projectId, region, emulators } = await (await fetch("./config.json")).json();
const app = initializeApp({ projectId, apiKey: "demo-api-key", appId: "demo-react-app" });
const auth = getAuth(app);
connectAuthEmulator(auth, `http://${emulators.auth}`, { disableWarnings: true });
const functions = getFunctions(app, region);
connectFunctionsEmulator(functions, ...split(emulators.functions));
const firestore = getFirestore(app);
connectFirestoreEmulator(firestore, ...split(emulators.firestore));
const client = createCounterClient({ functions, firestore });

/** What each mounted component's hook returned in its latest render. */
const latest = {};

function Shown({ name, result }) {
  latest[name] = result;
  const text = `${result.status}|${result.data === undefined ? "" : JSON.stringify(result.data)}|${result.error?.name ?? ""}`;
  return h("span", { id: name }, text);
}

function Counter({ name, id, options }) {
  return h(Shown, { name, result: useCounter(id, options) });
}

function Like({ name, id, options }) {
  return h(Shown, { name, result: useLike(id, options) });
}

/** Components inside the provider, and some outside it that are passed the client. */
function App({ likes, views, missing }) {
  return h(
    "div",
    null,
    h(
      CounterClientProvider,
      { client },
      h(Like, { name: "like-a", id: likes }),
      h(Like, { name: "like-b", id: likes }),
      h(Counter, { name: "views", id: views }),
      h(Counter, { name: "views-today", id: views, options: { window: "today" } }),
      h(Counter, { name: "missing", id: missing }),
      h(Counter, { name: "bad-id", id: "posts/42" }),
    ),
    h(Like, { name: "like-outside", id: likes, options: { client } }),
    h(Counter, { name: "views-outside", id: views, options: { client } }),
  );
}

const INTERNALS = Symbol.for("@firestore-exact-counter/client internals");
let root;

window.__harness = {
  react: () => version,
  listening: () => client[INTERNALS].listening(),
  signUp: async (email) => (await createUserWithEmailAndPassword(auth, email, "password-123")).user.uid,
  signIn: async (email) => (await signInWithEmailAndPassword(auth, email, "password-123")).user.uid,
  signOut: () => signOut(auth),
  mount(ids) {
    root = createRoot(document.getElementById("root"));
    root.render(h(StrictMode, null, h(App, ids)));
  },
  unmount() {
    root.unmount();
    root = undefined;
  },
  /** Calls `action` of each named component's latest result, in order, at once; resolves with how each settled. */
  call(calls) {
    const settled = calls.map(([name, action]) =>
      latest[name][action]().then(
        (outcome) => ({ ok: true, changed: outcome.changed }),
        (error) => ({ ok: false, name: error.name, code: error.code, message: error.message }),
      ),
    );
    return Promise.all(settled);
  },
};
window.__ready = true;
