// Workload 11's comments (documents-load.ts): each written one write at a time, from the snapshot its
// previous write left, so each event's before and after are exactly its write's; each write drawn by the mix
// of documents-measure.ts and recorded with its version as the document trigger observes it.
import type { DocumentReference, DocumentSnapshot, Firestore, Timestamp } from "firebase-admin/firestore";
import { versionAt, versionJustAfter } from "../../../functions/src/model/document-records";
import { microsCeil } from "../../../functions/src/model/time";
import { applyOperation, countOf, nextOperation, type CommentWrite } from "./documents-measure";

export interface Comment {
  ref: DocumentReference;
  counterId: string;
  post: string;
  id: string;
  data(): Record<string, unknown> | undefined;
  /** Runs a write of this comment after its previous one, from the snapshot that one left. */
  next(write: (before: DocumentSnapshot) => Promise<DocumentSnapshot>): Promise<void>;
}

/** The comments of the phase, each read once (none exists yet): the first write's before snapshot. */
export async function readComments(db: Firestore, load: { posts: number; commentsPerPost: number }, postOf: (i: number) => string, ids: readonly string[]): Promise<Comment[]> {
  const refs = Array.from({ length: load.posts * load.commentsPerPost }, (_, n) => {
    const post = Math.floor(n / load.commentsPerPost);
    return { ref: db.doc(`${postOf(post)}/comments/c${n % load.commentsPerPost}`), counterId: ids[post]!, post: postOf(post).split("/")[1]!, id: `c${n % load.commentsPerPost}` };
  });
  const snaps = await db.getAll(...refs.map((r) => r.ref));
  return refs.map((r, i) => {
    let last: DocumentSnapshot = snaps[i]!;
    let queue: Promise<unknown> = Promise.resolve();
    return {
      ...r,
      data: () => (last.exists ? last.data() : undefined),
      next(write) {
        const run = queue.then(async () => {
          last = await write(last);
        });
        queue = run.catch(() => undefined);
        return run;
      },
    };
  });
}

/** One write of `comment` drawn by the mix (documents-measure.ts), with its after snapshot. */
export async function writeComment(comment: Comment, before: DocumentSnapshot, random: () => number, text: string): Promise<{ write: CommentWrite & { time: Timestamp }; after: DocumentSnapshot }> {
  const was = before.exists ? before.data() : undefined;
  const op = nextOperation(was, random);
  const now = applyOperation(was, op, text);
  const result =
    op.kind === "create"
      ? await comment.ref.create(now!)
      : op.kind === "delete"
        ? await comment.ref.delete({ exists: true })
        : await comment.ref.update(op.kind === "toggle" ? { status: op.status } : { text });
  const after = await comment.ref.get();
  if (op.kind === "delete" ? after.exists : after.updateTime?.isEqual(result.writeTime) !== true) {
    throw new Error(`comment ${comment.ref.path} was written by someone else during the benchmark`);
  }
  const write = {
    counterId: comment.counterId,
    path: comment.ref.path,
    delta: countOf(now) - countOf(was),
    version: op.kind === "delete" ? versionJustAfter(before.updateTime!) : versionAt(result.writeTime),
    writtenAtUs: microsCeil(result.writeTime),
    deliveries: 0,
    time: result.writeTime,
  };
  return { write, after };
}
