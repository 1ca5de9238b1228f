// Entry point of the Cloud Functions codebase: initializes the admin SDK, sets the options every
// function shares, and exports the deployed functions, one file each under entry/: the callables, the
// rollup trigger, the rollup's scheduled sweep (which also resumes stranded deletions) and the trigger
// that finishes deleting a counter; and, only while EXTENSION_COUNTERS names extension counters, the trigger
// that folds old clients' writes of the firestore-counter extension (docs/from-the-extension.md).
import { initializeApp } from "firebase-admin/app";
import { setGlobalOptions } from "firebase-functions/v2";
import { extensionCountersAtLoad, maxInstances, region } from "./config/params";
import * as extension from "./entry/foldExtensionShards";

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

// With the default params this entry exports exactly the functions above. The export is a plain assignment
// so that a native ES module's `export *` of this CommonJS file knows the name too (Node's static detection
// of CommonJS exports); it is undefined there unless the param is set, and deploys nothing then.
if (extensionCountersAtLoad()) (exports as Record<string, unknown>).foldExtensionShards = extension.foldExtensionShards;
