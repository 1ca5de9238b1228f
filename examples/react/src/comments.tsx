// A post's comments: the users write and delete them in posts/<id>/comments themselves, as any app does
// (examples/rules/feed-comments.rules says who may), and the count under the post is the document counter
// post-<id>-comments (DOCUMENT_COUNTERS): exact, live, and written by the functions, not by this page.
// The list below it is a plain listener on the collection; the count follows it within about a second.
import { useCounter } from "@firestore-exact-counter/client/react";
import type { Auth } from "firebase/auth";
import { addDoc, collection, deleteDoc, doc, onSnapshot, serverTimestamp, type Firestore, type Timestamp } from "firebase/firestore";
import { useEffect, useState, type FormEvent } from "react";
import { commentsOf, type Post } from "./config";
import { useUid } from "./user";

interface Comment {
  id: string;
  author: string;
  text: string;
  /** Milliseconds; a comment not yet written shows last (the server's time is estimated until then). */
  at: number;
}

export function Comments({ post, auth, firestore }: { post: Post; auth: Auth; firestore: Firestore }) {
  const uid = useUid(auth);
  const comments = useComments(firestore, post);
  const [text, setText] = useState("");
  const [problem, setProblem] = useState<string>();
  const act = (action: () => Promise<unknown>) => {
    setProblem(undefined);
    action().catch((error: unknown) => setProblem(error instanceof Error ? error.message : String(error)));
  };
  const add = (event: FormEvent) => {
    event.preventDefault();
    const written = text.trim();
    if (uid === null) setProblem("Sign in to comment.");
    if (uid === null || written === "") return;
    setText("");
    act(() => addDoc(collection(firestore, "posts", post.id, "comments"), { author: uid, text: written, createdAt: serverTimestamp() }));
  };
  return (
    <section className="comments">
      <CommentCount post={post} />
      <ul>
        {comments.map((comment) => (
          <li key={comment.id} className="comment">
            <span className="text">{comment.text}</span>
            {comment.author === uid && (
              <button type="button" className="delete" onClick={() => act(() => deleteDoc(doc(firestore, "posts", post.id, "comments", comment.id)))}>
                Delete
              </button>
            )}
          </li>
        ))}
      </ul>
      <form onSubmit={add}>
        <input className="comment-text" value={text} maxLength={500} placeholder="Add a comment" onChange={(event) => setText(event.target.value)} />
        <button type="submit" className="add-comment">Comment</button>
      </form>
      {problem !== undefined && <span className="error"> {problem}</span>}
    </section>
  );
}

/**
 * "N comments": the document counter, 0 until the post's first comment creates it (autoCreated). No
 * increment from here: only the comments move it (the callables refuse it, naming DOCUMENT_COUNTERS).
 */
function CommentCount({ post }: { post: Post }) {
  const { status, data, error } = useCounter(commentsOf(post), { autoCreated: true });
  const text = status === "success" ? `${data.value} ${data.value === 1 ? "comment" : "comments"}` : status === "error" ? error.message : "…";
  return <p className={status === "error" ? "comment-count error" : "comment-count"}>{text}</p>;
}

/** The post's comments as they are now, oldest first. */
function useComments(firestore: Firestore, post: Post): Comment[] {
  const [comments, setComments] = useState<Comment[]>([]);
  useEffect(
    () =>
      onSnapshot(
        collection(firestore, "posts", post.id, "comments"),
        (snap) => {
          const listed = snap.docs.map((d) => {
            const data = d.data({ serverTimestamps: "estimate" }) as { author: string; text: string; createdAt: Timestamp | null };
            return { id: d.id, author: data.author, text: data.text, at: data.createdAt?.toMillis() ?? Number.MAX_SAFE_INTEGER };
          });
          setComments(listed.sort((a, b) => a.at - b.at || a.id.localeCompare(b.id)));
        },
        (error) => console.error(`The comments of post ${post.id} could not be listened to:`, error),
      ),
    [firestore, post.id],
  );
  return comments;
}
