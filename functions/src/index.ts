// Entry point of the Cloud Functions codebase: initializes the admin SDK, sets the options every
// function shares, and exports the deployed functions, one file each under entry/: the callables, the
// rollup trigger, the rollup's scheduled sweep (which also resumes stranded deletions) and the trigger
// that finishes deleting a counter.
import { initializeApp } from "firebase-admin/app";
import { setGlobalOptions } from "firebase-functions/v2";
import { maxInstances, region } from "./config/params";

initializeApp();
setGlobalOptions({ region, maxInstances });

export { createCounter } from "./entry/createCounter";
export { incrementCounter } from "./entry/incrementCounter";
export { setMember } from "./entry/setMember";
export { resetCounter } from "./entry/resetCounter";
export { reshardCounter } from "./entry/reshardCounter";
export { deleteCounter } from "./entry/deleteCounter";
export { rollupTotal } from "./entry/rollupTotal";
export { rollupSweep } from "./entry/rollupSweep";
export { rollupWindows } from "./entry/rollupWindows";
export { cleanupDeletedCounter } from "./entry/cleanupDeletedCounter";
