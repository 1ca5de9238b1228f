// Where the rollup trigger runs: a Firestore trigger must run in its database's location, and listen
// to the database that firebase.json deploys the rules and indexes to.
import { endpointsOf } from "../lib/codebases";
import { errorMessage, type Backend } from "../lib/firebase-tools-internals";
import { envFiles, firestoreConfig } from "./context";
import { TRIGGER } from "./manifest";
import type { CheckResult, Context, FirestoreConfig } from "./types";

/** Multi-region Firestore locations and the one region their triggers run in. */
const MULTI_REGION_TRIGGER_REGION: Record<string, string> = { nam5: "us-central1", eur3: "europe-west1" };

/** The region a Firestore trigger must use for a database in `location`. */
function triggerRegionFor(location: string): string {
  return MULTI_REGION_TRIGGER_REGION[location] ?? location;
}

export function checkPlacement(ctx: Context, backend: Backend): CheckResult[] {
  const check = "placement";
  let firestore: FirestoreConfig;
  try {
    firestore = firestoreConfig(ctx);
  } catch (error) {
    return [{ check, status: "fail", message: errorMessage(error) }];
  }
  const trigger = endpointsOf(backend).find((e) => e.id === TRIGGER);
  if (trigger === undefined) return [];
  const results: CheckResult[] = [];
  const env = envFiles(ctx);
  const location = firestore.location;
  const expected = location === undefined ? undefined : triggerRegionFor(location);
  if (location === undefined) {
    // An existing database keeps the location it was created in, which nothing offline can read: do not
    // guess (a deploy only creates a missing database in nam5).
    results.push({
      check,
      status: "warn",
      message:
        `unknown: firebase.json names no firestore.location, so whether ${TRIGGER} in ${trigger.region} runs in its database's location cannot be checked ` +
        `(nam5 → us-central1, eur3 → europe-west1, a regional database → that region). Add "location": "<your database's location>" to the firestore section of firebase.json ` +
        `(the Firebase console shows it), and set REGION in ${env.project} to match`,
    });
  } else if (trigger.region !== expected) {
    results.push({
      check,
      status: "fail",
      message: `${TRIGGER} would deploy to ${trigger.region}, but a Firestore trigger must run in its database's location (${location} → ${expected}); set REGION=${expected} in ${env.project}, or correct firestore.location in firebase.json`,
    });
  } else {
    results.push({ check, status: "ok", message: `${TRIGGER} in ${trigger.region} matches the database location ${location}` });
  }
  const database = firestore.database ?? "(default)";
  const triggerDatabase = trigger.eventTrigger?.eventFilters?.database ?? "(default)";
  if (triggerDatabase !== database) {
    results.push({
      check: "database",
      status: "fail",
      message: `${TRIGGER} listens to database "${triggerDatabase}" (DATABASE_ID) but firebase.json deploys rules and indexes to "${database}" (firestore.database); make them the same (DATABASE_ID in ${env.project}, or firestore.database in firebase.json)`,
    });
  }
  return results;
}
