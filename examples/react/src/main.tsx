// The React example: a feed of posts, each with a like button (useLike), its views today (useCounter
// with the "today" window) and its comments, counted by a document counter. It connects to the emulators /config.json names, signs in anonymously,
// creates the posts' counters that are missing (likes unique, views windowed), and renders the feed in
// strict mode under one CounterClientProvider. Served by `npm start` (scripts/lib/example-react.ts).
import { createCounterClient } from "@firestore-exact-counter/client";
import { CounterClientProvider } from "@firestore-exact-counter/client/react";
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInAnonymously } from "firebase/auth";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";
import { connectFunctionsEmulator, getFunctions } from "firebase/functions";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import type { FeedConfig, Post } from "./config";
import { createMissingCounters } from "./counters";
import { Feed } from "./feed";

function split(host: string): [string, number] {
  const i = host.lastIndexOf(":");
  return [host.slice(0, i), Number(host.slice(i + 1))];
}

/** The posts the URL names (?posts=a,b), else the config's. */
function postsOf(config: FeedConfig): Post[] {
  const ids = new URLSearchParams(location.search).get("posts");
  if (ids === null) return config.posts;
  return ids.split(",").map((id) => ({ id, title: `Post ${id}` }));
}

async function start(): Promise<void> {
  const config = (await (await fetch("./config.json")).json()) as FeedConfig;
  const app = initializeApp({ projectId: config.projectId, apiKey: "demo-api-key", appId: "demo-react" });
  const auth = getAuth(app);
  connectAuthEmulator(auth, `http://${config.emulators.auth}`, { disableWarnings: true });
  const functions = getFunctions(app, config.region);
  connectFunctionsEmulator(functions, ...split(config.emulators.functions));
  const firestore = getFirestore(app);
  connectFirestoreEmulator(firestore, ...split(config.emulators.firestore));
  // One client for the whole app, made once: every hook watching a counter shares its listener.
  const counters = createCounterClient({ functions, firestore });

  await auth.authStateReady(); // a user signed in before (this browser keeps them) is back
  if (auth.currentUser === null) await signInAnonymously(auth);
  const posts = postsOf(config);
  await createMissingCounters(functions, firestore, posts);

  createRoot(document.getElementById("root")!).render(
    <StrictMode>
      <CounterClientProvider client={counters}>
        <Feed posts={posts} auth={auth} firestore={firestore} />
      </CounterClientProvider>
    </StrictMode>,
  );
}

start().catch((error: unknown) => {
  console.error(error);
  document.getElementById("root")!.textContent = `The example could not start: ${error instanceof Error ? error.message : String(error)}. Are the emulators running (npm start)?`;
});
