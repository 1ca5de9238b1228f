// The counters codebase publishes, as deployed, the params an app's own code must share with it
// (model/deployed-params.ts), so that the admin entry, wherever it runs (an app's own functions, a script
// with a .env of its own), can refuse a stale copy before its first write (admin/params-check.ts). Never at
// import or load (importing the package changes nothing): a callable's first call in an instance (and a
// call whose params differ from what this instance last published: a test that changes them) reads the
// published document and writes it when it differs; the scheduled sweep checks it again on every run, so
// that within one sweep after a deploy the document holds the new values even if an instance of the earlier
// deploy, started during the rollout, wrote the old ones. The document lives in the counters' database and,
// when DATABASE_ID names another database than "(default)", in "(default)" too (best effort: a project may
// have none), where an admin entry whose DATABASE_ID is wrong looks for it. A failure is logged and never
// fails the function: the admin entry then finds the last values (or none).
import { FieldValue, getFirestore, type Firestore } from "firebase-admin/firestore";
import * as logger from "firebase-functions/logger";
import { defaultApp } from "../default-app";
import { deployedValue } from "../config/params";
import type { RawValue } from "../model/param-rules";
import { paramValues, type ParamValues } from "../model/deployed-params";
import type { CounterParamName } from "../model/params";
import { deployedParamsRef } from "../model/paths";
import { countersDb } from "./deps";

/** The values this instance knows are published (JSON), and the publication under way. */
let published: string | undefined;
let publishing: { key: string; done: Promise<void> } | undefined;

/** The deployed values of the shared params, as this instance runs with them (`read`: as a call's settings hold them). */
export function deployedValues(read: (name: CounterParamName) => RawValue = deployedValue): ParamValues {
  return paramValues(read);
}

/**
 * Makes sure the published document holds this instance's values: does nothing once it did for these values
 * (unless `recheck`: the sweep). Never throws.
 */
export async function publishParams(options: { recheck?: boolean; by?: string; read?: (name: CounterParamName) => RawValue } = {}): Promise<void> {
  let values: ParamValues;
  try {
    values = deployedValues(options.read);
  } catch (error) {
    logger.warn("could not read the params to publish for the admin entry", { error: message(error) });
    return;
  }
  const key = JSON.stringify(values);
  if (options.recheck !== true && key === published) return;
  if (publishing?.key === key) return publishing.done;
  const done = publish(values, options.by ?? functionName()).then(
    () => {
      published = key;
    },
    (error: unknown) => {
      logger.warn("could not publish the params for the admin entry; it compares its copy with the last ones published", { error: message(error) });
    },
  );
  publishing = { key, done };
  try {
    await done;
  } finally {
    if (publishing?.done === done) publishing = undefined;
  }
}

async function publish(values: ParamValues, by: string): Promise<void> {
  await publishIn(countersDb(), values, by);
  if (values.DATABASE_ID !== "(default)") {
    try {
      await publishIn(getFirestore(defaultApp()), values, by);
    } catch (error) {
      logger.debug("the params were not published in the (default) database too (a project may have none)", { error: message(error) });
    }
  }
}

/** Writes the document unless it holds these values already (one read; a write only after a change). */
async function publishIn(db: Firestore, values: ParamValues, by: string): Promise<void> {
  const ref = deployedParamsRef(db);
  const snap = await ref.get();
  const current = snap.get("params") as Record<string, unknown> | undefined;
  if (current !== undefined && Object.keys(values).every((name) => current[name] === values[name as CounterParamName]) && Object.keys(current).length === Object.keys(values).length) return;
  await ref.set({ params: values, publishedAt: FieldValue.serverTimestamp(), publishedBy: by });
}

/** The function running now (Cloud Run's service name, or the emulator's target). */
function functionName(): string {
  return process.env.K_SERVICE ?? process.env.FUNCTION_TARGET ?? "the counters codebase";
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
