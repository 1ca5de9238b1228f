// `firebase deploy --only functions:counters` run offline, to see the codebase's predeploy preflight stop
// a deploy whose params the functions would refuse (this repository's layout in predeploy.test.ts, an app
// made by init in scripts/test/init.app.test.ts).
//
// Offline: firebase-tools wants credentials before it runs anything (requireAuth), then checks IAM
// permissions over the network, where a failure is only logged, then runs the predeploy steps. So the
// deploy runs with a dummy token and every request sent to a closed local port (the proxy variables):
// nothing leaves the machine, and without a real project nothing could be deployed even past predeploy.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runNode, type Run } from "./run";

/** A bad combination: one deploy lowers MAX_DELTA below a COUNTER_KINDS rule's maxDelta. */
const BAD_KINDS = "post-{id}-views=shards:50;maxDelta:10";
const BAD_MESSAGE = 'COUNTER_KINDS: rule 1 "post-{id}-views=shards:50;maxDelta:10" sets maxDelta to "10": it must be an integer from 1 to 5 (MAX_DELTA)';

/** Lowers MAX_DELTA below a kind's maxDelta for the project, as one careless deploy would. */
export function breakLimits(codebaseDir: string, project: string): void {
  writeFileSync(join(codebaseDir, `.env.${project}`), `MAX_DELTA=5\nCOUNTER_KINDS=${BAD_KINDS}\n`);
}

/** `<firebase> deploy --only <only>` (functions:counters unless told) in `dir`, offline (see the header); `firebase` is firebase-tools' bin. */
export function offlineDeploy(firebase: string, dir: string, project: string, env: NodeJS.ProcessEnv = process.env, only = "functions:counters"): Promise<Run> {
  return runNode([firebase, "deploy", "--only", only, "--project", project, "--non-interactive"], { cwd: dir, env: offlineEnv(env) });
}

/** `env` with a dummy token and every request of firebase-tools sent to a closed local port (see the header). */
export function offlineEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const closed = "http://127.0.0.1:9";
  const offline: NodeJS.ProcessEnv = { ...env, FIREBASE_TOKEN: "offline-test-token", NO_PROXY: "", no_proxy: "" };
  for (const name of ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"]) offline[name] = closed;
  return offline;
}

/** The deploy stopped at the preflight, with its message, before anything else ran or was uploaded. */
export function expectStoppedAtPredeploy(deployed: Run): void {
  const output = deployed.stdout + deployed.stderr;
  expect(output).toContain("preflight (predeploy)");
  expect(output).toMatch(new RegExp(`FAIL counter kinds +${BAD_MESSAGE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  expect(output).toContain("functions predeploy error");
  expect(output).not.toMatch(/preparing|uploading|Deploy complete/i);
  expect(deployed.code).not.toBe(0);
}
