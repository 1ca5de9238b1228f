// Workload 11's comments (documents-load.ts): each written one write at a time, from the snapshot its
// previous write left, so each event's before and after are exactly its write's; each write drawn by the mix
// of documents-measure.ts and recorded with its version as the document trigger observes it. A phase may seed
// its posts first with comments that existed before it (no event of theirs is delivered).
import type { DocumentReference, DocumentSnapshot, Firestore, Timestamp } from "firebase-admin/firestore";
import { versionAt, versionJustAfter } from "../../../functions/src/model/time";
import { microsCeil } from "../../../functions/src/model/time";
import { withConcurrency } from "../../lib/concurrency";
import { applyOperation, countOf, nextOperation, PUBLISHED, type CommentWrite } from "./documents-measure";

/** Documents per batch when seeding (Firestore's limit is 500). */
const BATCH = 400;

/**
 * Writes the first `seeded` comments of each post (three in four published), before any event is delivered, and
 * answers each counter's count of them: what its total must start from.
 */
export async function seedComments(db: Firestore, load: { posts: number; seeded: number }, postOf: (i: number) => string, ids: readonly string[]): Promise<Map<string, number>> {
  const base = new Map<string, number>(ids.map((id) => [id, 0]));
  const all = Array.from({ length: load.posts * load.seeded }, (_, n) => ({ post: Math.floor(n / load.seeded), id: n % load.seeded }));
  const batches = Array.from({ length: Math.ceil(all.length / BATCH) }, (_, b) => () => {
    const batch = db.batch();
    for (const { post, id } of all.slice(b * BATCH, (b + 1) * BATCH)) {
      const published = id % 4 !== 3;
      if (published) base.set(ids[post]!, base.get(ids[post]!)! + 1);
      batch.set(db.doc(`${postOf(post)}/comments/c${id}`), { status: published ? PUBLISHED : "draft", text: `seeded ${id}` });
    }
    return batch.commit();
  });
  await withConcurrency(4, batches);
  return base;
}

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
