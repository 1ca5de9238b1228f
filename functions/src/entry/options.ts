// The options every deployed function carries itself, from the params (config/params.ts): its region and
// its instance cap. They are set per function, never with setGlobalOptions, which is module state of the
// app's copy of firebase-functions: an app that re-exports these functions keeps its own global options
// for its own functions, and ours deploy where REGION says whatever the app sets (docs/existing-app.md).
// Options not named here or in an entry file follow the platform's defaults, or the app's global options
// when the app sets them before it imports the package.
import { maxInstances, region } from "../config/params";

export const EVERY_FUNCTION = { region, maxInstances };
