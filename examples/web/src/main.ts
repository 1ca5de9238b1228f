// The example page: signs in anonymously (Auth emulator), creates its counter as a unique, windowed counter
// (one like per user, and "N today") if it does not exist (and only then: a create of an existing counter is a 409 in the
// browser's console on every reload), and shows it with the client's watchMember(): the count and "you
// like this" together; a tap likes or unlikes with setMember(). A plain counter (?counter=demo-likes after
// `npm run seed`) is shown with watch() and a tap adds one with increment(); the text under the button
// says which kind the page shows. A windowed counter also shows "N today" with watch()'s today window
// (docs/windows.md). A ?counter= that is no counter id is named as such. Served by
// `npm start` with the emulator hosts in /config.json (scripts/lib/example-web.ts).
import { createCounterClient, IncrementError, SetMemberError } from "@firestore-exact-counter/client";
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInAnonymously } from "firebase/auth";
import { connectFirestoreEmulator, doc, getDoc, getFirestore, type Firestore } from "firebase/firestore";
import { connectFunctionsEmulator, FunctionsError, getFunctions, httpsCallable, type Functions } from "firebase/functions";
import type { ExampleConfig } from "./config.js";
import { mountLikeButton, type LikeButton } from "./like-button.js";

function split(host: string): [string, number] {
  const i = host.lastIndexOf(":");
  return [host.slice(0, i), Number(host.slice(i + 1))];
}

/** counterId as the callables accept it (docs/api.md). */
const COUNTER_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** What the text under the button says for each kind of counter. */
const ABOUT = {
  unique:
    "A tap likes, the next one unlikes: both show at once. This is a unique counter, so a like counts once per user " +
    "on the server whatever the double taps, retries or devices, and the number never jumps back when the rollup catches up.",
  plain:
    "This is a plain counter: every tap adds one, shown at once and retried with the same key until the server has it, " +
    "so each tap counts exactly once, and the number never jumps back when the rollup catches up. " +
    "(The page's own counter, without ?counter=, is a unique counter: one like per user.)",
};

/** What kind of counter the page shows. */
interface Kind {
  unique: boolean;
  windowed: boolean;
}

function kindOf(snap: { get(field: string): unknown }): Kind {
  return { unique: snap.get("unique") === true, windowed: snap.get("windowed") === true };
}

/**
 * Whether the counter is unique and windowed, creating it as a unique, windowed counter (a like counts once
 * per user; likes today) if it does not exist. Reads it first: creating an existing counter is refused
 * (already-exists, HTTP 409), which the browser logs as an error on every reload. Null when it cannot be
 * created (said on the page).
 */
async function openCounter(functions: Functions, firestore: Firestore, counterId: string, ui: LikeButton): Promise<Kind | null> {
  const existing = await getDoc(doc(firestore, "counters", counterId));
  if (existing.exists()) return kindOf(existing);
  try {
    await httpsCallable(functions, "createCounter")({ counterId, unique: true, windowed: true });
    return { unique: true, windowed: true };
  } catch (error) {
    // Created meanwhile (another tab): read what it is.
    if (error instanceof FunctionsError && error.code === "functions/already-exists") {
      return kindOf(await getDoc(doc(firestore, "counters", counterId)));
    }
    if (error instanceof FunctionsError && error.code === "functions/permission-denied") {
      ui.say(`This user may not create ${counterId}: create it with npm run seed, or make the user an admin.`, "error");
      return null;
    }
    if (error instanceof FunctionsError && error.code === "functions/invalid-argument") {
      ui.say(`Cannot use the counter "${counterId}": ${error.message.replace(/ \[\d{3}\]$/, "")}`, "error");
      return null;
    }
    throw error;
  }
}

async function start(): Promise<void> {
  const config = (await (await fetch("./config.json")).json()) as ExampleConfig;
  const counterId = new URLSearchParams(location.search).get("counter") ?? config.counterId;
  document.getElementById("counter-id")!.textContent = counterId;
  if (!COUNTER_ID.test(counterId)) {
    say(`"${counterId}" is not a counter id: ?counter= takes 1-128 characters of A-Z, a-z, 0-9, _ or -.`);
    return;
  }

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
        ui.say(error instanceof SetMemberError ? `The ${error.member ? "like" : "unlike"} did not count: ${error.message}` : String(error), "error");
      });
      return;
    }
    // Shown at once by watch(); retried with the same request id; taken back if it finally fails.
    counters.increment(counterId).catch((error: unknown) => {
      ui.say(error instanceof IncrementError ? `The like did not count: ${error.message}` : String(error), "error");
    });
  });
  const { user } = await signInAnonymously(auth);
  document.getElementById("who")!.textContent =
    `Signed in anonymously as ${user.uid}. To try the admin callables as this user: npm run make-admin -- ${user.uid}`;
  const kind = await openCounter(functions, firestore, counterId, ui);
  if (kind === null) return;
  unique = kind.unique;
  document.getElementById("about")!.textContent = unique ? ABOUT.unique : ABOUT.plain;
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
  if (kind.windowed) {
    // "N today": the counter's today window (UTC), with this page's own taps not in it yet.
    const today = document.getElementById("today")!;
    counters.watch(counterId, (count) => (today.textContent = count === null ? "" : `${count} today`), cannotRead, { window: "today" });
  }
}

/** A line in the status paragraph, as an error (before the button is mounted, or instead of it). */
function say(message: string): void {
  const status = document.getElementById("status");
  if (status === null) return;
  status.textContent = message;
  status.className = "error";
}

/** Failures that mean the emulators do not answer: the SDK reports an unreachable server so. */
const UNREACHABLE = new Set(["functions/internal", "functions/unavailable", "functions/deadline-exceeded", "auth/network-request-failed", "unavailable"]);

start().catch((error: unknown) => {
  console.error(error);
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  const unreachable = error instanceof TypeError || (typeof code === "string" && UNREACHABLE.has(code));
  say(`The example could not start: ${error instanceof Error ? error.message : String(error)}${unreachable ? ". Are the emulators running (npm start)?" : ""}`);
});
