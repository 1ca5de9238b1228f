// Runs inside `firebase emulators:exec` of a test app (scripts/test/packed): uses the app's own callable
// and the counters side by side, as the app's users would, with the Firebase JS SDK, and prints what it
// saw as one line `PROBE {json}` for the test to check.
//   PROBE_APP_CALLABLE   the app's own callable, as name@region (called with { title: "Hello" }; a
//                        postId in its answer names a post the probe reads back)
//   PROBE_CREATOR        "admin" (the shipped CREATE_POLICY) or "user": who creates the counter
import { connectFirestoreEmulator, doc, getDoc, getFirestore, terminate, type Firestore } from "firebase/firestore";
import { getFunctions, connectFunctionsEmulator, httpsCallable } from "firebase/functions";
import { signedInClient, type Client } from "../../../functions/test/helpers/client";
import { firestoreHost, functionsHost } from "../../../functions/test/helpers/emulators";

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

/**
 * The user's reads, on a new connection after the Firestore emulator broke the JS SDK's Listen stream. Seen
 * on this machine a few times in a hundred probes: RESOURCE_EXHAUSTED "Received message larger than max",
 * with a length read from inside a document (the stream out of step), after which the SDK waits its
 * longest backoff and getDoc() answers "unavailable" (offline). It is the emulator's and the SDK's
 * (firebase-tools issue 8654, open, reports RESOURCE_EXHAUSTED on listeners under Node 22), not the
 * counters': the same user on a new connection, as after a reload, reads what the emulator holds. Once;
 * anything else, or a second break, fails the probe.
 */
class Reads {
  private firestore: Firestore;
  private reconnected = false;

  constructor(private readonly client: Client) {
    this.firestore = client.firestore;
  }

  async counter(counterId: string): Promise<Record<string, unknown> | undefined> {
    const snap = await this.doc("counters", counterId);
    return snap.exists() ? snap.data() : undefined;
  }

  async doc(collection: string, id: string) {
    try {
      return await getDoc(doc(this.firestore, collection, id));
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (this.reconnected || (code !== "unavailable" && code !== "resource-exhausted")) throw error;
      console.error(`probe: reading ${collection}/${id} failed (${String(code)}): once more on a new connection`);
      this.reconnected = true;
      await terminate(this.firestore);
      this.firestore = getFirestore(this.client.app);
      const at = firestoreHost();
      connectFirestoreEmulator(this.firestore, at.slice(0, at.lastIndexOf(":")), Number(at.slice(at.lastIndexOf(":") + 1)));
      return await getDoc(doc(this.firestore, collection, id));
    }
  }
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
    const reads = new Reads(user);
    let parent = await reads.counter(counterId);
    const deadline = Date.now() + SETTLE_MS;
    while (parent?.total !== INCREMENTS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      parent = await reads.counter(counterId);
    }
    const post = typeof app.postId === "string" ? await reads.doc("posts", app.postId) : undefined;
    const result: ProbeResult = {
      projectId: process.env.GCLOUD_PROJECT,
      app,
      ...(post ? { post: { title: post.get("title") as unknown, authorIsCaller: post.get("authorId") === user.user.uid } } : {}),
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
