// Entry point of the benchmark-only "naive" functions codebase (scripts/bench/firebase.bench.json): the
// naive rollup and callable (src/naive.ts), the usual document-counting trigger (src/documents.ts) and a no-op
// trigger (src/noop.ts).
// The triggers are TypeScript (type-checked and linted with the rest of scripts/); tsx compiles them on
// load, so the benchmark needs no build step and leaves no build output in the tree.
// Registered globally, not through tsx's namespaced require: the module must share the process's
// module cache, so that firebase-admin is the one instance the functions emulator sets up.
// Its dependencies resolve from the repository's root node_modules (npm workspaces hoist them there).
require("tsx/cjs/api").register();
module.exports = { ...require("./src/naive.ts"), ...require("./src/documents.ts"), ...require("./src/noop.ts") };
