// What this command ships with: its own version (the three packages are versioned together, so it is
// also the functions package an init installs by default), the firebase-functions and firebase-admin ranges
// a codebase it makes installs, and the files it merges into an app (the repository's firestore.rules and firestore.indexes.json,
// copied next to the built command by build.mjs). The JSON is read at build time: the bundle carries it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import cliPackage from "../../package.json";
import functionsPackage from "../../../functions/package.json";

export const CLI_NAME = "firestore-exact-counter";
export const CLI_PACKAGE = cliPackage.name;
export const VERSION = cliPackage.version;
export const FUNCTIONS_PACKAGE = functionsPackage.name;
/**
 * The ranges of firebase-functions and firebase-admin a codebase that init makes installs: the ones the
 * functions are built and tested with (their devDependencies), within their peer ranges (which also take
 * the firebase-admin 13 of a codebase `firebase init` made).
 */
export const FUNCTIONS_TESTED = functionsPackage.devDependencies;
/** The Node major the functions run on (their engines.node: firebase-tools reads it as the runtime). */
export const FUNCTIONS_NODE = functionsPackage.engines.node;

/**
 * A file the command ships: next to the bundle (lib/, where build.mjs copies it) when built, else the
 * repository's own (the sources run by the repository's npm scripts and tests).
 */
export function shippedFile(name: "firestore.rules" | "firestore.indexes.json"): string {
  const bundled = join(__dirname, name);
  return readFileSync(existsSync(bundled) ? bundled : join(__dirname, "..", "..", "..", name), "utf8");
}
