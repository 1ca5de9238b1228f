// Runs inside `firebase emulators:exec` of the fixture app with the counters added (existing-app.test.ts):
// uses both codebases as the app's users would, with the Firebase JS SDK, and prints what it saw as one
// line `PROBE {json}` for the test to check.
import { doc, getDoc } from "firebase/firestore";
import { signedInClient } from "../../../functions/test/helpers/client";

export interface ProbeResult {
  projectId: string | undefined;
  post: { postId: string; title: unknown; authorIsCaller: boolean };
  counter: { created: unknown; applied: boolean[]; total: unknown; numShards: unknown };
}

const INCREMENTS = 3;
const SETTLE_MS = 60_000;

async function main(): Promise<void> {
  const client = await signedInClient();
  try {
    // The app's own function, from its own codebase ("default").
    const { postId } = await client.call<{ postId: string }>("publishPost", { title: "Hello" });
    const post = await getDoc(doc(client.firestore, "posts", postId));

    // Ours, from codebase "counters", next to it: create, increment, and the total rolled up by the trigger.
    const counterId = `post-${postId}-likes`;
    const created = await client.call("createCounter", { counterId, numShards: 2 });
    const applied: boolean[] = [];
    for (let i = 0; i < INCREMENTS; i++) applied.push((await client.call<{ applied: boolean }>("incrementCounter", { counterId })).applied);
    let parent = await client.readCounter(counterId);
    const deadline = Date.now() + SETTLE_MS;
    while (parent?.total !== INCREMENTS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      parent = await client.readCounter(counterId);
    }

    const result: ProbeResult = {
      projectId: process.env.GCLOUD_PROJECT,
      post: { postId, title: post.get("title"), authorIsCaller: post.get("authorId") === client.user.uid },
      counter: { created, applied, total: parent?.total, numShards: parent?.numShards },
    };
    console.log(`PROBE ${JSON.stringify(result)}`);
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
