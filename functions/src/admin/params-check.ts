// The admin entry's copy of the params, compared with the counters codebase's as deployed before its first
// write (docs/admin.md, "Where the admin entry's rules come from"): the counters codebase publishes them
// (entry/publish-params.ts, model/deployed-params.ts), and a copy that differs (an app's codebase deployed
// alone with an old .env, a script run with a stale one) is refused with failed-precondition, naming each
// param, both values and where each comes from, before anything is written: no likes counter made plain,
// no write to the wrong database.
//
// Cost: one read of the published document per process, database and 5 minutes (a cache), and one more
// before refusing (a deploy may have just published new values); while nothing is published, one per call.
// Where nothing is published, there is nothing to compare with: a fresh project or the emulator before any
// function of the counters codebase ran (they publish on their first call, and the sweep on every run). The
// call then goes ahead (logged at debug level once per process); the deploy's preflight still compares the
// codebases' .env files. A process that runs the counters codebase itself (runs-here.ts: an app's codebase
// that re-exports the functions and uses the admin entry too, the tests that drive both) compares nothing:
// its functions read their params from its own environment, the one its admin entry reads.
import type { App } from "firebase-admin/app";
import { getFirestore, type Firestore, type Timestamp } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { CounterError } from "../model/errors";
import { paramDifferences, paramValues, staleParamsMessage, type ParamValues } from "../model/deployed-params";
import { deployedParamsRef } from "../model/paths";
import type { Settings } from "../model/settings";
import { countersCodebaseHere } from "../runs-here";

/** How long a read of the published params stands for them (a redeploy is seen within this). */
const CACHE_MS = 5 * 60_000;

interface Published {
  params: Record<string, unknown>;
  /** Where it was read, who published it and when: for the message. */
  where: string;
}

const cache = new Map<string, { atMs: number; published: Published }>();
const toldNothingPublished = new Set<string>();

/**
 * Refuses (failed-precondition, nothing written) when the params this copy holds (`settings`, read from its
 * environment) differ from the ones the counters codebase published in the database this copy names (or,
 * when nothing is published there and it is not "(default)", in "(default)": a copy whose DATABASE_ID is
 * wrong finds the codebase's there). `here` says where the copy comes from.
 */
export async function checkDeployedParams(app: App, databaseId: string, settings: Settings, here: string): Promise<void> {
  // The counters codebase runs in this process: its functions read their params from this environment.
  if (countersCodebaseHere()) return;
  const values = paramValues((name) => settings.paramValue(name));
  const first = await published(app, databaseId, false);
  if (first === null) return;
  if (paramDifferences(values, first.params).length === 0) return;
  // A deploy may have published new values since the cached read: refuse only what they still refuse.
  const fresh = await published(app, databaseId, true);
  if (fresh === null) return;
  refuseStale(values, fresh, here);
}

function refuseStale(values: ParamValues, deployed: Published, here: string): void {
  const differences = paramDifferences(values, deployed.params);
  if (differences.length > 0) throw new CounterError("failed-precondition", staleParamsMessage(differences, { here, deployed: deployed.where }));
}

async function published(app: App, databaseId: string, fresh: boolean): Promise<Published | null> {
  const key = `${app.name}\u0000${databaseId}`;
  const cached = cache.get(key);
  if (!fresh && cached !== undefined && Date.now() - cached.atMs < CACHE_MS) return cached.published;
  let found = await read(getFirestore(app, databaseId), databaseId);
  if (found === null && databaseId !== "(default)") found = await read(getFirestore(app), "(default)");
  // Nothing published is not kept: the next call looks again (the counters codebase may publish any moment).
  if (found !== null) cache.set(key, { atMs: Date.now(), published: found });
  else cache.delete(key);
  if (found === null && !toldNothingPublished.has(key)) {
    toldNothingPublished.add(key);
    logger.debug("the counters codebase has published no params yet: the admin entry's copy is not compared (a fresh project, or the emulator before any of its functions ran)", { databaseId });
  }
  return found;
}

async function read(db: Firestore, databaseId: string): Promise<Published | null> {
  let snap;
  try {
    snap = await deployedParamsRef(db).get();
  } catch (error) {
    // A database that does not exist (the "(default)" fallback in a project without one) publishes nothing.
    if (databaseId !== "(default)") throw error;
    return null;
  }
  const params = snap.get("params") as unknown;
  if (!snap.exists || typeof params !== "object" || params === null) return null;
  const at = snap.get("publishedAt") as Timestamp | undefined;
  const by = snap.get("publishedBy") as unknown;
  const when = at !== undefined && typeof at.toDate === "function" ? ` at ${at.toDate().toISOString()}` : "";
  return { params: params as Record<string, unknown>, where: `published by ${typeof by === "string" ? by : "the counters codebase"}${when} in ${snap.ref.path} of database ${databaseId}` };
}
