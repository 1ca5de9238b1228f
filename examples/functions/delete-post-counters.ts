// An app's own trigger that deletes a post's counters when the post is deleted, with the counters' admin
// entry (docs/admin.md, "Counters that go with their document"): after it, a like or a view of the deleted
// post answers not-found, and AUTO_CREATE makes no new counter for it (the post is gone). The event is
// delivered at least once and retried on failure: a counter already deleted (by an earlier delivery, or
// never created) answers not-found, which is nothing to do; any other error is thrown, so the platform
// retries. Run by functions/test/delete-post.emulator.test.ts.
import { onDocumentDeleted } from "firebase-functions/v2/firestore";
import { deleteCounter } from "@firestore-exact-counter/functions/admin";

export const deletePostCounters = onDocumentDeleted({ document: "posts/{postId}", retry: true }, async (event) => {
  const { postId } = event.params;
  const gone = (error: unknown) => {
    if ((error as { code?: unknown }).code !== "not-found") throw error;
  };
  await Promise.all([`post-${postId}-likes`, `post-${postId}-views`].map((id) => deleteCounter(id).catch(gone)));
});
