// The example page: signs in anonymously (Auth emulator), creates its counter as a unique counter (one
// like per user) if it does not exist, and shows it with the client's watchMember(): the count and "you
// like this" together; a tap likes or unlikes with setMember(). A plain counter (?counter=demo-likes after
// `npm run seed`) is shown with watch() and a tap adds one with increment(). Served by `npm start` with
// the emulator hosts in /config.json (scripts/lib/example-web.ts).
import { createCounterClient, IncrementError, SetMemberError } from "@firestore-exact-counter/client";
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInAnonymously } from "firebase/auth";
import { connectFirestoreEmulator, doc, getDoc, getFirestore } from "firebase/firestore";
import { connectFunctionsEmulator, FunctionsError, getFunctions, httpsCallable, type Functions } from "firebase/functions";
import type { ExampleConfig } from "./config.js";
import { mountLikeButton, type LikeButton } from "./like-button.js";

function split(host: string): [string, number] {
  const i = host.lastIndexOf(":");
  return [host.slice(0, i), Number(host.slice(i + 1))];
}

/** createCounter (unique: a like counts once per user), unless the counter exists. Refused: say what to do. */
async function ensureCounter(functions: Functions, counterId: string, ui: LikeButton): Promise<void> {
  try {
    await httpsCallable(functions, "createCounter")({ counterId, unique: true });
  } catch (error) {
    if (error instanceof FunctionsError && error.code === "functions/already-exists") return;
    if (error instanceof FunctionsError && error.code === "functions/permission-denied") {
      ui.say(`This user may not create ${counterId}: create it with npm run seed, or make the user an admin.`, "error");
      return;
    }
    throw error;
  }
}

async function start(): Promise<void> {
  const config = (await (await fetch("./config.json")).json()) as ExampleConfig;
  const counterId = new URLSearchParams(location.search).get("counter") ?? config.counterId;
  document.getElementById("counter-id")!.textContent = counterId;

  const app = initializeApp({ projectId: config.projectId, apiKey: "demo-api-key", appId: "demo-web" });
  const auth = getAuth(app);
  connectAuthEmulator(auth, `http://${config.emulators.auth}`, { disableWarnings: true });
  const functions = getFunctions(app, config.region);
  connectFunctionsEmulator(functions, ...split(config.emulators.functions));
  const firestore = getFirestore(app);
  connectFirestoreEmulator(firestore, ...split(config.emulators.firestore));
  const counters = createCounterClient({ functions, firestore });

  let unique = false;
  let liked = false; // the membership shown last: a tap asks for the other one
  const ui = mountLikeButton(document, () => {
    if (unique) {
      // Liked or unliked at once by watchMember(); taps go out one at a time, so the last one decides.
      counters.setMember(counterId, !liked).catch((error: unknown) => {
        ui.say(error instanceof SetMemberError ? `The ${error.member ? "like" : "unlike"} did not count: ${error.code}` : String(error), "error");
      });
      return;
    }
    // Shown at once by watch(); retried with the same request id; taken back if it finally fails.
    counters.increment(counterId).catch((error: unknown) => {
      ui.say(error instanceof IncrementError ? `The like did not count: ${error.code}` : String(error), "error");
    });
  });
  const { user } = await signInAnonymously(auth);
  document.getElementById("who")!.textContent =
    `Signed in anonymously as ${user.uid}. To try the admin callables as this user: npm run make-admin -- ${user.uid}`;
  await ensureCounter(functions, counterId, ui);
  unique = (await getDoc(doc(firestore, "counters", counterId))).get("unique") === true;
  const cannotRead = (error: Error) => ui.say(`Cannot read ${counterId}: ${error.message}`, "error");
  if (unique) {
    counters.watchMember(
      counterId,
      user.uid,
      (count, view) => {
        liked = view.member;
        ui.render({ count, pending: view.pending, liked: view.member });
      },
      cannotRead,
    );
  } else {
    counters.watch(counterId, (count, view) => ui.render({ count, pending: view.pending, liked: null }), cannotRead);
  }
}

start().catch((error: unknown) => {
  console.error(error);
  const status = document.getElementById("status");
  if (status) status.textContent = `The example could not start: ${String(error)}. Are the emulators running (npm start)?`;
});
