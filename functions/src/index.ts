// The package's main entry (@firestore-exact-counter/functions) and this repository's codebase
// `counters`: exactly the deployed functions, one file each under entry/: the callables, the rollup
// trigger, the rollup's scheduled sweep (which also resumes stranded deletions), the midnight commit of
// windows and the trigger that finishes deleting a counter. Importing it changes nothing in the app that
// re-exports it: no setGlobalOptions (each function carries its own region and maxInstances: entry/
// options.ts) and no admin app until a function first runs (entry/deps.ts).
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
