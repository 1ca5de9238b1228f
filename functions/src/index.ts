// The package's main entry (@firestore-exact-counter/functions) and this repository's codebase
// `counters`: exactly the deployed functions, one file each under entry/: the callables, the rollup
// trigger, the rollup's scheduled sweep (which also resumes stranded deletions), the midnight commit of
// windows and the trigger that finishes deleting a counter; and, only while EXTENSION_COUNTERS names
// extension counters, the trigger that folds old clients' writes of the firestore-counter extension
// (docs/from-the-extension.md); only while LEADERBOARDS names leaderboards, the trigger that keeps their
// summaries exact (docs/leaderboards.md); and the group `documentCounters` of the triggers DOCUMENT_COUNTERS names,
// empty while it names none (docs/documents.md). Importing it changes nothing in the app that
// re-exports it: no setGlobalOptions (each function carries its own region and maxInstances: entry/
// options.ts) and no admin app until a function first runs (entry/deps.ts).
import { announceLocalInterval } from "./config/local-interval";
import { documentCountersAtLoad, extensionCountersAtLoad, leaderboardsAtLoad } from "./config/params";
import { documentCounterTriggers } from "./entry/documentCounters";
import * as extension from "./entry/foldExtensionShards";
import * as leaderboards from "./entry/rollupBoard";
import { markCountersCodebase } from "./runs-here";

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

// The document triggers, one per document pattern DOCUMENT_COUNTERS names, in ONE object under a fixed name
// (firebase-tools deploys an exported object's functions as `documentCounters-<name>`). A fixed export is
// what every app's one-line re-export carries alike, a native ES module's `export *` included (Node finds
// `exports.documentCounters` in this CommonJS module), and an empty object deploys nothing.
export const documentCounters = documentCounterTriggers(documentCountersAtLoad());

// With the default params this entry exports exactly the functions above, whatever loads it: a CommonJS
// require, TypeScript's `export *` (CommonJS output) and a native ES module's `export *` alike. The fold
// trigger is added at load, under a computed name, so that Node's static detection of a CommonJS module's
// exports (what a native `export *` re-exports) never lists it: a native ES module app that wants it
// re-exports it by name from the default import (docs/from-the-extension.md), which is undefined, and
// deploys nothing, while the param is empty.
const FOLD_EXPORT: string = "foldExtensionShards";
// The leaderboards' trigger, the same way (a native ES module app re-exports it by name: docs/leaderboards.md).
const BOARD_EXPORT: string = "rollupBoard";
// The admin entry, if the app uses it in this codebase too, shares these functions' environment (runs-here.ts).
markCountersCodebase();
// In the emulator's discovery only: one line naming the rollup interval there (config/local-interval.ts).
announceLocalInterval();
if (extensionCountersAtLoad()) (exports as Record<string, unknown>)[FOLD_EXPORT] = extension.foldExtensionShards;
if (leaderboardsAtLoad()) (exports as Record<string, unknown>)[BOARD_EXPORT] = leaderboards.rollupBoard;
