// An app's own Cloud Function that publishes a post and creates the post's two counters in its own code,
// with the counters' admin entry: no callable round trip, no service user, and CREATE_POLICY=admin stays
// closed to clients. The counters' shapes come from the params this codebase's environment gives the
// admin entry (docs/admin.md, "From your own functions"): UNIQUE_COUNTERS=post-{id}-likes makes the likes
// counter unique, WINDOWED_COUNTERS=post-{id}-views the views counter windowed, and MIRRORS starts
// posts/{id}.likeCount and .views at 0. Run by functions/test/admin.emulator.test.ts.
import { FieldValue, getFirestore } from "firebase-admin/firestore";
import { HttpsError, onCall } from "firebase-functions/v2/https";
import { createCounter } from "@firestore-exact-counter/functions/admin";

export const publishPost = onCall(async (request) => {
  if (request.auth === undefined) throw new HttpsError("unauthenticated", "sign in to publish");
  const title: unknown = (request.data as { title?: unknown } | null)?.title;
  if (typeof title !== "string" || title === "") throw new HttpsError("invalid-argument", "title must be a non-empty string");

  const post = getFirestore().collection("posts").doc();
  await post.set({ authorId: request.auth.uid, title, createdAt: FieldValue.serverTimestamp() });
  // After the post, so that the mirrors find it; each a transaction of its own (parent and shards).
  await Promise.all([createCounter(`post-${post.id}-likes`), createCounter(`post-${post.id}-views`)]);
  return { postId: post.id };
});
