// Runs inside `firebase emulators:exec` of a test app (scripts/test/*.app.test.ts): uses the app's own callable
// and the counters side by side, as the app's users would, with the Firebase JS SDK, and prints what it
// saw as one line `PROBE {json}` for the test to check.
//   PROBE_APP_CALLABLE   the app's own callable, as name@region (called with { title: "Hello" }; a
//                        postId in its answer names a post the probe reads back)
//   PROBE_CREATOR        "admin" (the shipped CREATE_POLICY) or "user": who creates the counter
import { getFunctions, connectFunctionsEmulator, httpsCallable } from "firebase/functions";
import { signedInClient, type Client } from "./client";
import { functionsHost } from "./emulators";

export interface ProbeResult {
  projectId: string | undefined;
  /** What the app's own callable answered. */
  app: Record<string, unknown>;
  /** The post it published, when it answered a postId: its title, and whether the caller is its author. */
  post?: { title: unknown; authorIsCaller: boolean };
  counter: { created: unknown; applied: boolean[]; total: unknown; numShards: unknown };
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
    const result: ProbeResult = {
      projectId: process.env.GCLOUD_PROJECT,
      app,
      ...(post ? { post: { title: post.title, authorIsCaller: post.authorId === user.user.uid } } : {}),
      counter: { created, applied, total: parent?.total, numShards: parent?.numShards },
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
