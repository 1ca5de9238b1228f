// Whether this process runs the counters codebase: the package's main entry (index.ts) was loaded in it, as
// in a codebase that deploys the counters (ours, or an app's own that re-exports them) and in the tests that
// drive its functions. The admin entry used in such a process reads the very environment the functions
// read their params from, so its copy of the params cannot be stale: admin/params-check.ts compares nothing
// there (a maintenance run's own `env` is the caller's business). A flag in this package's own module state: nothing of the app's changes.
let loaded = false;

/** Called once, when the main entry loads. */
export function markCountersCodebase(): void {
  loaded = true;
}

export function countersCodebaseHere(): boolean {
  return loaded;
}
