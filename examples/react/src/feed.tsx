// The feed: the signed-in user, and each post with its like button (useLike), views today (useCounter
// with the "today" window) and comments (comments.tsx). Nothing here knows Firebase beyond Auth's sign-in
// and sign-out: the hooks take the client from the CounterClientProvider in main.tsx.
import { SignInRequiredError } from "@firestore-exact-counter/client";
import { useCounter, useLike } from "@firestore-exact-counter/client/react";
import { signInAnonymously, signOut, type Auth } from "firebase/auth";
import type { Firestore } from "firebase/firestore";
import { useEffect, useState } from "react";
import { Comments } from "./comments";
import { likesOf, viewsOf, type Post } from "./config";
import { useUid } from "./user";

export function Feed({ posts, auth, firestore }: { posts: Post[]; auth: Auth; firestore: Firestore }) {
  return (
    <main>
      <h1>Posts</h1>
      <Account auth={auth} />
      {posts.map((post) => (
        <article key={post.id} className="post" data-post={post.id}>
          <h2>{post.title}</h2>
          <LikeButton counterId={likesOf(post)} />
          <ViewsToday counterId={viewsOf(post)} />
          <Comments post={post} auth={auth} firestore={firestore} />
        </article>
      ))}
    </main>
  );
}

/** Who is signed in, and a button to sign out or in (a new anonymous user): the like buttons follow. */
function Account({ auth }: { auth: Auth }) {
  const uid = useUid(auth);
  const [problem, setProblem] = useState<string>();
  const act = (action: () => Promise<unknown>) => () => {
    setProblem(undefined);
    action().catch((error: unknown) => setProblem(error instanceof Error ? error.message : String(error)));
  };
  return (
    <p className="account">
      {uid === null ? "Signed out. " : `Signed in anonymously as ${uid}. `}
      {uid === null ? (
        <button type="button" className="sign-in" onClick={act(() => signInAnonymously(auth))}>Sign in</button>
      ) : (
        <button type="button" className="sign-out" onClick={act(() => signOut(auth))}>Sign out</button>
      )}
      {problem !== undefined && <span className="error"> {problem}</span>}
    </p>
  );
}

/** The count and "you like this", both at once on a tap; a tap likes or unlikes (the last tap decides). */
function LikeButton({ counterId }: { counterId: string }) {
  const { status, data, error, toggle } = useLike(counterId);
  const [problem, setProblem] = useState<string>();
  const tap = () => {
    setProblem(undefined);
    toggle().catch((failure: unknown) => {
      if (failure instanceof SignInRequiredError) setProblem("Sign in to like.");
      else setProblem(`That tap did not count: ${failure instanceof Error ? failure.message : String(failure)}`);
    });
  };
  return (
    <p className="likes">
      <button type="button" className="like" aria-pressed={data?.liked === true} disabled={status !== "success"} onClick={tap}>
        ♥ <span className="count">{status === "success" ? data.count : "…"}</span>
      </button>
      {data?.liked === true && <span className="liked"> You like this</span>}
      {error !== undefined && <span className="error"> {error.message}</span>}
      {problem !== undefined && <span className="error"> {problem}</span>}
    </p>
  );
}

/** Counters viewed in this page load: one view per post and load, whatever strict mode runs twice. */
const viewed = new Set<string>();

/** "N views today", and this page load's view of the post, counted once. */
function ViewsToday({ counterId }: { counterId: string }) {
  const { status, data, error, increment } = useCounter(counterId, { window: "today" });
  useEffect(() => {
    if (viewed.has(counterId)) return;
    viewed.add(counterId);
    increment().catch((failure: unknown) => console.error(`The view of ${counterId} did not count:`, failure));
  }, [counterId, increment]);
  const text = status === "success" ? `${data.value} views today` : status === "error" ? error.message : "…";
  return <p className={status === "error" ? "views error" : "views"}>{text}</p>;
}
