// Type-checked (never run) by the packed test: the package's types as a CommonJS TypeScript app sees them.
import { initializeApp } from "firebase/app";
import { getFirestore } from "firebase/firestore";
import { getFunctions } from "firebase/functions";
import { createCounterClient, type IncrementOutcome } from "@firestore-exact-counter/client";

const app = initializeApp({ projectId: "demo-types" });
const counters = createCounterClient({ functions: getFunctions(app), firestore: getFirestore(app) });
export const outcome: Promise<IncrementOutcome> = counters.increment("c", 2);
