// Workload 11's backfill: comments that existed before their rule, counted by the admin entry's
// backfillDocuments (the command line's `backfill` runs the same), timed, on BACKFILL_PROJECT (no trigger
// runs there, so the backfill alone counts them). The rule is over one collection, so its counters are kept by
// recount and the backfill of each is one count committed to its total (docs/documents.md): the counts are
// checked against the documents on the parents' totals (a counter kept by records: its shards' sum, since
// nothing rolls those up on that project), and the backfill runs again, which must count nothing.
import { initializeApp } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import { readCount } from "../../../functions/src/model/shards";
import { counterRef, shardsRef } from "../../../functions/src/model/paths";
import { withConcurrency } from "../../lib/concurrency";
import { BACKFILL_PROJECT } from "../env";
import { adminEntry } from "../product";
import { counterIdFor, phasePrefixOf, type BenchContext } from "./context";
import { driftOf, PUBLISHED, type Drift } from "./documents-measure";

const POSTS = "benchBackfillPosts";
/** Documents per batch when writing them (Firestore's limit is 500). */
const BATCH = 400;

export interface BackfillRun {
  seen: number;
  counted: number;
  takenOut: number;
  seconds: number;
}

export interface BackfillResult {
  documents: number;
  posts: number;
  /** Documents that match the rule (published): the counts it must reach. */
  published: number;
  rule: string;
  first: BackfillRun;
  /** Documents per second the first run saw. */
  documentsPerSecond: number;
  /** How the counters are kept (the parents' `kept`: "recount" expected), one entry per distinct value. */
  kept: string[];
  /** Each counter's total (kept by records: Σ shards) against its published documents, after the first run. */
  drift: Drift;
  /** Right after: must count and take out nothing. */
  second: BackfillRun;
}

export async function backfillThroughput(ctx: BenchContext, documents: number, posts: number): Promise<BackfillResult> {
  const app = initializeApp({ projectId: BACKFILL_PROJECT }, `backfill-${ctx.runId}`);
  const db = getFirestore(app);
  const ids = Array.from({ length: posts }, (_, i) => counterIdFor(ctx, "documents-backfill", "ours", i));
  const rule = `${POSTS}/{post}/comments/{comment}[status==published]=${phasePrefixOf(ids[0]!)}{post}`;
  // Three comments in four published, spread evenly over the posts.
  const truth = new Map<string, number>();
  const batches = Array.from({ length: Math.ceil(documents / BATCH) }, (_, b) => () => {
    const batch = db.batch();
    for (let n = b * BATCH; n < Math.min(documents, (b + 1) * BATCH); n++) {
      const post = n % posts;
      const published = n % 4 !== 3;
      if (published) truth.set(ids[post]!, (truth.get(ids[post]!) ?? 0) + 1);
      batch.set(db.doc(`${POSTS}/${post}/comments/c${n}`), { status: published ? PUBLISHED : "draft", text: `comment ${n}` });
    }
    return batch.commit();
  });
  await withConcurrency(4, batches);

  const env = { ...process.env, DOCUMENT_COUNTERS: rule };
  const run = async (): Promise<BackfillRun> => {
    const started = performance.now();
    const report = await adminEntry().backfillDocuments({ app, env });
    return { seen: report.seen, counted: report.counted, takenOut: report.takenOut, seconds: (performance.now() - started) / 1000 };
  };
  const first = await run();
  const sums = new Map<string, number>();
  const kept = new Set<string>();
  for (const id of ids) {
    const parent = await counterRef(db, id).get();
    const how = parent.get("kept") as unknown;
    kept.add(typeof how === "string" ? how : "none");
    const total = parent.get("total") as unknown;
    if (how === "recount" && typeof total === "number") sums.set(id, total);
    else sums.set(id, (await shardsRef(db, id).get()).docs.reduce((sum, doc) => sum + readCount(doc.data()).value, 0));
  }
  const second = await run();
  return {
    documents,
    posts,
    published: [...truth.values()].reduce((a, b) => a + b, 0),
    rule,
    first,
    documentsPerSecond: first.seen / first.seconds,
    kept: [...kept].sort(),
    drift: driftOf(sums, truth),
    second,
  };
}
