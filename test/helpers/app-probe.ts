// Runs inside `firebase emulators:exec` of a test app (scripts/test/*.app.test.ts): uses the app's own callable
// and the counters side by side, as the app's users would, with the Firebase JS SDK, and prints what it
// saw as one line `PROBE {json}` for the test to check.
//   PROBE_APP_CALLABLE   the app's own callable, as name@region (called with { title: "Hello" }; a
//                        postId in its answer names a post the probe reads back)
//   PROBE_CREATOR        "admin" (the shipped CREATE_POLICY) or "user": who creates the counter
//   PROBE_BURST          "<counters>x<increments>": after that, a burst of increments to that many new
//                        counters at once (4 calls in flight), and how long after its last answer every
//                        total was exact
import { randomUUID } from "node:crypto";
import { getFunctions, connectFunctionsEmulator, httpsCallable } from "firebase/functions";
import { withConcurrency } from "../../scripts/lib/concurrency";
import { signedInClient, type Client } from "./client";
import { functionsHost } from "./emulators";

export interface ProbeResult {
  projectId: string | undefined;
  /** What the app's own callable answered. */
  app: Record<string, unknown>;
  /** The post it published, when it answered a postId: its title, and whether the caller is its author. */
  post?: { title: unknown; authorIsCaller: boolean };
  counter: { created: unknown; applied: boolean[]; total: unknown; numShards: unknown };
  burst?: Burst;
}

export interface Burst {
  counters: number;
  increments: number;
  /** Each counter's total when the probe stopped waiting. */
  totals: unknown[];
  /** From the burst's last answer until every total was exact (or the probe gave up). */
  settledMs: number;
}

const INCREMENTS = 3;
const SETTLE_MS = 60_000;

async function callApp(client: Client, spec: string): Promise<Record<string, unknown>> {
  const [name, region] = spec.split("@") as [string, string];
  const functions = getFunctions(client.app, region);
  const [host, port] = (await functionsHost()).split(":") as [string, string];
  connectFunctionsEmulator(functions, host, Number(port));
  return (await httpsCallable<unknown, Record<string, unknown>>(functions, name)({ title: "Hello" })).data;
}

/** PROBE_BURST's increments to new counters, 4 in flight, then the wait until every total is exact. */
async function burst(spec: string, creator: Client, user: Client): Promise<Burst> {
  const [counters, increments] = spec.split("x").map(Number) as [number, number];
  const ids = Array.from({ length: counters }, () => `burst-${randomUUID().slice(0, 8)}`);
  for (const counterId of ids) await creator.call("createCounter", { counterId });
  const calls = ids.flatMap((counterId) => Array.from({ length: increments }, () => () => user.call("incrementCounter", { counterId, requestId: randomUUID() })));
  // Interleaved: every counter busy at once, as a burst of an app's users is.
  const interleaved = calls.map((_, i) => calls[(i % counters) * increments + Math.floor(i / counters)]!);
  await withConcurrency(4, interleaved);
  const answered = Date.now();
  const read = () => Promise.all(ids.map(async (id) => (await user.readCounter(id))?.total));
  let totals = await read();
  while (totals.some((total) => total !== increments) && Date.now() - answered < SETTLE_MS) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    totals = await read();
  }
  return { counters, increments, totals, settledMs: Date.now() - answered };
}

async function main(): Promise<void> {
  const user = await signedInClient();
  const admin = process.env.PROBE_CREATOR === "admin" ? await signedInClient({ admin: true }) : user;
  try {
    // The app's own function, from its own codebase.
    const app = await callApp(user, process.env.PROBE_APP_CALLABLE ?? "");
    // Ours next to it: create, increment, and the total rolled up by the trigger.
    const answered = app.postId ?? app.id;
    const counterId = `probe-${typeof answered === "string" ? answered : "x"}-likes`;
    const created = await admin.call("createCounter", { counterId, numShards: 2 });
    const applied: boolean[] = [];
    for (let i = 0; i < INCREMENTS; i++) applied.push((await user.call<{ applied: boolean }>("incrementCounter", { counterId })).applied);
    // The user's reads, one request each (scripts/lib/client.ts says why not the full SDK's Listen stream).
    let parent = await user.readCounter(counterId);
    const deadline = Date.now() + SETTLE_MS;
    while (parent?.total !== INCREMENTS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      parent = await user.readCounter(counterId);
    }
    const post = typeof app.postId === "string" ? await user.readDocument(`posts/${app.postId}`) : undefined;
    const burstSpec = process.env.PROBE_BURST;
    const result: ProbeResult = {
      projectId: process.env.GCLOUD_PROJECT,
      app,
      ...(post ? { post: { title: post.title, authorIsCaller: post.authorId === user.user.uid } } : {}),
      counter: { created, applied, total: parent?.total, numShards: parent?.numShards },
      ...(burstSpec ? { burst: await burst(burstSpec, admin, user) } : {}),
    };
    console.log(`PROBE ${JSON.stringify(result)}`);
  } finally {
    await user.close();
    if (admin !== user) await admin.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
