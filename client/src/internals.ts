// What the React hooks (react/) and the tests read of a client beyond its public methods: the Firebase
// instances it was made with (useLike follows the user signed in to their app) and its registries' own
// count of open listeners. Kept on the client object under a global symbol, not in a module's state, so
// that it is found whichever copy or build of this package made the client; not part of the public API.
import type { Firestore } from "firebase/firestore";
import type { Functions } from "firebase/functions";
import type { Listening } from "./registry.js";

const INTERNALS = Symbol.for("@firestore-exact-counter/client internals");

export interface ClientInternals {
  firestore: Firestore;
  functions: Functions;
  /** Open now: the counters `watch` listens to, and those `watchMember` listens to, with their watchers. */
  listening: () => { watch: Listening; watchMember: Listening };
  /** Open now: the counters `watchRank` listens to (each with its board's summary), with their watchers. */
  listeningRanks: () => Listening;
}

/** Attaches the internals to a client object (not enumerable, not writable). */
export function attachInternals<T extends object>(client: T, internals: ClientInternals): T {
  Object.defineProperty(client, INTERNALS, { value: internals });
  return client;
}

/** The internals of a client made by createCounterClient, or undefined for anything else. */
export function internalsOf(client: unknown): ClientInternals | undefined {
  if (typeof client !== "object" || client === null) return undefined;
  return (client as { [INTERNALS]?: ClientInternals })[INTERNALS];
}
