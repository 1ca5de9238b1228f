// The package's main entry (@firestore-exact-counter/functions) and this repository's codebase
// `counters`: exactly the deployed functions, one file each under entry/: the callables, the rollup
// trigger, the rollup's scheduled sweep (which also resumes stranded deletions), the midnight commit of
// windows and the trigger that finishes deleting a counter; and, only while EXTENSION_COUNTERS names
// extension counters, the trigger that folds old clients' writes of the firestore-counter extension
// (docs/from-the-extension.md). Importing it changes nothing in the app that
// re-exports it: no setGlobalOptions (each function carries its own region and maxInstances: entry/
// options.ts) and no admin app until a function first runs (entry/deps.ts).
import { extensionCountersAtLoad } from "./config/params";
import * as extension from "./entry/foldExtensionShards";

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
