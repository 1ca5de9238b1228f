// The admin entry compares its copy of the params with what the counters codebase published
// (functions/src/entry/publish-params.ts), and the codebase publishes them on a callable's first call after
// a deploy (in production its sweep does it too; the emulator runs no schedule). A test that reloads the
// functions with other params (test/helpers/local-params.ts) and then runs the admin entry waits here until
// the reloaded codebase has published them, as a deploy's first user makes it do: until then the admin
// entry meets the values an earlier test file's call published and refuses its copy as stale.
import type { Firestore } from "firebase-admin/firestore";
import { deployedParamsRef } from "../../functions/src/model/paths";
import { signedInClient } from "./client";

const PUBLISH_MS = 120_000;

/** Calls a callable that counts nothing (a counter that does not exist) until the published params hold `values`. */
export async function untilPublished(db: Firestore, values: Record<string, string>): Promise<void> {
  const user = await signedInClient();
  const started = Date.now();
  try {
    for (let n = 0; ; n++) {
      // not-found, or a reset while the functions reload: either way nothing is written.
      await user.call("incrementCounter", { counterId: `publish-params-probe-${started}-${n}`, delta: 1 }).catch(() => undefined);
      const params = (await deployedParamsRef(db).get()).get("params") as Record<string, unknown> | undefined;
      if (params !== undefined && Object.entries(values).every(([name, value]) => params[name] === value)) return;
      if (Date.now() - started > PUBLISH_MS) throw new Error(`the reloaded functions did not publish ${JSON.stringify(values)}; published: ${JSON.stringify(params)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await user.close();
  }
}
