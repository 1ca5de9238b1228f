// Entry point of the Cloud Functions codebase: initializes the admin SDK and exports the functions: the
// callables, the rollup trigger, the rollup's scheduled sweep (which also resumes stranded deletions) and
// the trigger that finishes deleting a counter.
// The total of a counter is computed in counters/rollup/sum.ts (sumShards), run by counters/rollup/index.ts.
import { initializeApp } from "firebase-admin/app";
import { setGlobalOptions } from "firebase-functions/v2";
import { maxInstances, region } from "./params";

initializeApp();
setGlobalOptions({ region, maxInstances });

export { createCounter, deleteCounter, incrementCounter, reshardCounter, resetCounter, setMember } from "./callables";
export { rollupTotal } from "./triggers";
export { rollupSweep } from "./sweep";
export { cleanupDeletedCounter } from "./cleanup";
