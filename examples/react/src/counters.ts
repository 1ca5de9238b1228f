// The posts' counters, created when missing: likes as a unique counter (one like per user), views as a
// windowed one ("views today"). Each is read first: creating one that exists is refused (already-exists,
// HTTP 409), which the browser would log as an error on every load. (An app with the server's AUTO_CREATE
// needs none of this: docs/app.md.)
import { doc, getDoc, type Firestore } from "firebase/firestore";
import { FunctionsError, httpsCallable, type Functions } from "firebase/functions";
import { likesOf, viewsOf, type Post } from "./config";

export async function createMissingCounters(functions: Functions, firestore: Firestore, posts: Post[]): Promise<void> {
  const createCounter = httpsCallable(functions, "createCounter");
  const wanted = posts.flatMap((post) => [
    { counterId: likesOf(post), unique: true },
    { counterId: viewsOf(post), windowed: true },
  ]);
  // One at a time: a page that opens asks for a few counters, and a small emulator boots a worker per call in flight.
  for (const counter of wanted) {
    if ((await getDoc(doc(firestore, "counters", counter.counterId))).exists()) continue;
    try {
      await createCounter(counter);
    } catch (error) {
      // Created meanwhile, by another user opening the feed.
      if (!(error instanceof FunctionsError && error.code === "functions/already-exists")) throw error;
    }
  }
}
