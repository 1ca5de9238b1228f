// Server rendering of the packed client's hooks in Node, with whichever React the fresh app installed:
// renderToString shows "pending" for each, and opens nothing: no listener of the client (its own count),
// and no Auth instance made for useLike. Prints one JSON line.
import { _getProvider, initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";
import { connectFunctionsEmulator, getFunctions } from "firebase/functions";
import { createCounterClient } from "@firestore-exact-counter/client";
import { CounterClientProvider, useCounter, useLike } from "@firestore-exact-counter/client/react";
import { createElement as h, StrictMode, version } from "react";
import { renderToString } from "react-dom/server";

const split = (host) => [host.slice(0, host.lastIndexOf(":")), Number(host.slice(host.lastIndexOf(":") + 1))];
const { projectId, region, emulators, likes, views } = JSON.parse(process.env.APP_CONFIG);
const app = initializeApp({ projectId, apiKey: "demo-api-key", appId: "demo-ssr-app" });
const functions = getFunctions(app, region);
connectFunctionsEmulator(functions, ...split(emulators.functions));
const firestore = getFirestore(app);
connectFirestoreEmulator(firestore, ...split(emulators.firestore));
const client = createCounterClient({ functions, firestore });

const show = (label, result) => h("p", null, `${label}: ${result.status}${result.data === undefined ? "" : ` ${JSON.stringify(result.data)}`}`);
const Views = () => show("views today", useCounter(views, { window: "today" }));
const Likes = () => show("likes", useLike(likes));
const Outside = () => show("total", useCounter(views, { client }));

const html = renderToString(h(StrictMode, null, h(CounterClientProvider, { client }, h(Views), h(Likes)), h(Outside)));
const INTERNALS = Symbol.for("@firestore-exact-counter/client internals");
await new Promise((resolve) => setTimeout(resolve, 1000));
console.log(JSON.stringify({ react: version, html, listening: client[INTERNALS].listening(), auth: _getProvider(app, "auth").isInitialized() }));
process.exit(0);
