// Type-checked (never run) by the packed test: the package's types as an ESM TypeScript app sees them.
import { initializeApp } from "firebase/app";
import { getFirestore } from "firebase/firestore";
import { getFunctions } from "firebase/functions";
import { createCounterClient, IncrementError, type CounterView } from "@firestore-exact-counter/client";

const app = initializeApp({ projectId: "demo-types" });
const counters = createCounterClient({ functions: getFunctions(app), firestore: getFirestore(app) });
const stop: () => void = counters.watch("c", (value: number | null, view: CounterView) => void [value, view.pending]);
counters.increment("c").catch((error: unknown) => error instanceof IncrementError && error.maybeApplied);
stop();
