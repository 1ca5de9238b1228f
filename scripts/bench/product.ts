// The product as an app gets it: the functions package's public entries (its exports map), loaded from the
// built package (functions/lib, which `npm run bench` builds before it starts the emulators), and only
// when first used, so that the options and --help need no build. Loaded by the file the exports map names
// rather than by the specifier: the repository's tsconfig maps the admin entry to its sources for the type
// checker, and tsx follows that mapping from some working directories (the benchmark runs in its results
// folder) and not from others.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type * as AdminEntry from "@firestore-exact-counter/functions/admin";
import { PARAMS } from "../../functions/src/model/params";

/** The package an app installs; "." and "./admin" are its entries (PUBLIC_ENTRIES in eslint.config.mjs). */
export const FUNCTIONS_PACKAGE = "@firestore-exact-counter/functions";

export type Admin = typeof AdminEntry;

const load = createRequire(__filename);

/** Where the package is installed (its package.json's folder). */
export function packageDir(): string {
  return dirname(load.resolve(`${FUNCTIONS_PACKAGE}/package.json`));
}

/** The file the package's exports map names for `entry`: "." (the deployed functions) or "./admin". */
export function entryFile(entry: "." | "./admin"): string {
  const { exports } = JSON.parse(readFileSync(join(packageDir(), "package.json"), "utf8")) as { exports: Record<string, { default?: string } | string> };
  const target = exports[entry];
  const file = typeof target === "string" ? target : target?.default;
  if (file === undefined) throw new Error(`${FUNCTIONS_PACKAGE} exports no ${entry}`);
  return join(packageDir(), file);
}

let admin: Admin | undefined;

/** `@firestore-exact-counter/functions/admin`: the six operations with the callables' validation and answers. */
export function adminEntry(): Admin {
  admin ??= load(entryFile("./admin")) as Admin;
  return admin;
}

/** An instance's size, as Cloud Run bills it: vCPUs and GiB of memory. */
export interface InstanceSize {
  vcpu: number;
  gib: number;
}

/**
 * rollupTotal's size as it deploys by default: its CPU as the main entry declares it to the platform (the
 * function's endpoint, what firebase-tools reads; a literal, not a param), its memory the default of
 * ROLLUP_MEMORY_MB (functions/src/model/params.ts).
 */
export function rollupSize(): InstanceSize {
  const main = load(entryFile(".")) as { rollupTotal?: { __endpoint?: { cpu?: unknown } } };
  const cpu = main.rollupTotal?.__endpoint?.cpu;
  if (typeof cpu !== "number") throw new Error(`${FUNCTIONS_PACKAGE}'s rollupTotal declares no number of CPUs`);
  return { vcpu: cpu, gib: PARAMS.ROLLUP_MEMORY_MB.default / 1024 };
}
