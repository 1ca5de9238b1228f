// The param values this repository's functions emulator loads for the local project (functions/.env, then
// functions/.env.demo-counter over it, as firebase-tools reads them): setup-env.ts gives the emulator tiers
// the same values, and fresh-apps.ts keeps them from an app's own processes.
import { join } from "node:path";
import { functionsParams } from "../../cli/src/lib/functions-env";

export function repositoryParams(): Record<string, string> {
  return functionsParams([".env", ".env.demo-counter"], join(__dirname, "..", "..", "functions"));
}
