// Workload 11: document counters (DOCUMENT_COUNTERS, docs/documents.md) against the usual ±1 trigger. Comments
// are created, published, unpublished, edited and deleted under posts, and every write's event is delivered
// production-like (delayed, reordered, some twice) to ours (the product's document trigger) and, on other posts,
// to the usual trigger (documents-load.ts). Our rules are over one collection, so their counters are kept by
// recount (the trigger counts and commits the parent itself); a variant over several collections ("records")
// is kept by records (the trigger's record and shard write, then rollupTotal). Five loads: the workload as it
// always was, its records variant (ours only), a calm counter (each post written in turn, at most once a
// second, up to 1,000 comments each), a viral post (tens of counted changes a second on 10,000 comments), and
// the move (a counter past a small RECOUNT_LIMIT moves to records: documents-move.ts). Measured against the
// documents themselves (documents-measure.ts): drift, every recounted version exact at its read time, lag
// from the comment's write to the total that holds it, parent writes, and the cost per counted change, all in.
// Then the backfill's throughput on existing comments (documents-backfill.ts). The run fails if our drift is
// not 0, a recounted version was not the count at its read time, the move did not end, or the backfill is not exact.
import { allInRows, type AllInRow } from "../allin";
import { outcomeLines } from "../costs";
import type { CallableOps } from "../callable";
import { ROLLUPS, type Rollup } from "../counters";
import { dollars, fixed, int, markdownTable, ms } from "../format";
import { sharedSizes, sizes } from "../options";
import { lagBoundMs, parentWriteBudgets, type Target } from "../targets";
import { step, type BenchContext } from "./context";
import { backfillThroughput, type BackfillResult } from "./documents-backfill";
import { documentPhase, DOCUMENTS_WORKLOAD, type DocumentLoad, type DocumentPhase, type DocumentPhaseSpec } from "./documents-load";
import { driveMove, MOVE_MAY_START_MS, newMoveResult, type MoveResult } from "./documents-move";
import { wrappedOf, type Workload } from "./workload";
import type { WrappedFunctions } from "../delivery/wrapped";

/** Seeds of the phases' delivery, one per phase and rollup. */
const SEED = 20261128;
/** The issue's targets (docs/documents.md): a counted change at most this many times the usual trigger's cost, all in. */
const COST_RATIO = 2;
const CALM_COST_RATIO = 1.5;
const VIRAL_COST_RATIO = 1;
/** The calm counter's lag p99: at most the usual trigger's and this (ms). */
const CALM_LAG_MARGIN_MS = 250;

/** The workloads' labels (the all-in table's rows, each ours and the usual trigger's). */
export const CALM_WORKLOAD = `${DOCUMENTS_WORKLOAD}, calm`;
export const VIRAL_WORKLOAD = `${DOCUMENTS_WORKLOAD}, viral`;
export const RECORDS_WORKLOAD = `${DOCUMENTS_WORKLOAD}, records`;
/** Not "11 documents, …": no row of the usual trigger is its like (allin.ts, naiveRowOf). */
export const MOVE_WORKLOAD = `${DOCUMENTS_WORKLOAD} moving to records`;

export interface DocumentsResult {
  phases: DocumentPhase[];
  /** The move's phase: its RECOUNT_LIMIT and what the move did (null: not run). */
  move: (MoveResult & { limit: number }) | null;
  backfill: BackfillResult;
}

const FLAGS = [
  { key: "documentsPosts", flag: "--documents-posts", full: 20, quick: 4, min: 1, help: "workload 11: posts (a counter each), ours and the usual trigger alike" },
  { key: "documentsComments", flag: "--documents-comments", full: 10, quick: 5, min: 1, help: "workload 11: comment ids per post, written again and again" },
  { key: "documentsRate", flag: "--documents-rate", full: 50, quick: 20, min: 1, help: "workload 11: writes of comments per second over all posts" },
  { key: "documentsSeconds", flag: "--documents-seconds", full: 20, quick: 2, min: 1, help: "workload 11: duration" },
  { key: "calmPosts", flag: "--calm-posts", full: 10, quick: 4, min: 1, help: "workload 11, calm: posts, written in turn" },
  { key: "calmComments", flag: "--calm-comments", full: 1000, quick: 40, min: 1, help: "workload 11, calm: comments per post, all there before the load" },
  { key: "calmRate", flag: "--calm-rate", full: 5, quick: 2, min: 1, help: "workload 11, calm: writes per second over all posts (each post every posts/rate s: at most 1 a second keeps it calm)" },
  { key: "calmSeconds", flag: "--calm-seconds", full: 30, quick: 6, min: 1, help: "workload 11, calm: duration" },
  { key: "viralComments", flag: "--viral-comments", full: 10000, quick: 300, min: 1, help: "workload 11, viral: comments of the one post, all there before the load" },
  { key: "viralRate", flag: "--viral-rate", full: 90, quick: 30, min: 1, help: "workload 11, viral: writes per second (about 0.56 of them counted changes)" },
  { key: "viralSeconds", flag: "--viral-seconds", full: 20, quick: 5, min: 1, help: "workload 11, viral: duration" },
  { key: "moveLimit", flag: "--move-limit", full: 200, quick: 20, min: 1, help: "workload 11, move: RECOUNT_LIMIT for its phase (its post starts with that many comments, of 3 × as many ids)" },
  { key: "moveRate", flag: "--move-rate", full: 20, quick: 10, min: 1, help: "workload 11, move: writes per second" },
  { key: "moveSeconds", flag: "--move-seconds", full: 45, quick: 32, min: 25, help: "workload 11, move: duration (the move may start 20 s after it began)" },
  { key: "backfillDocuments", flag: "--backfill-documents", full: 5000, quick: 200, min: 1, help: "workload 11: existing comments the backfill counts" },
  { key: "backfillPosts", flag: "--backfill-posts", full: 50, quick: 4, min: 1, help: "workload 11: posts (counters) they are spread over" },
] as const;

type Sizes = Record<(typeof FLAGS)[number]["key"], number>;

/** One load of the workload: its phase for each rollup it runs (the move and the records variant: ours only). */
interface Load {
  spec: DocumentPhaseSpec;
  load: Omit<DocumentLoad, "instances" | "model" | "seed">;
  rollups: readonly Rollup[];
  title: string;
}

function loadsOf(s: Sizes, move: MoveResult & { limit: number }): Load[] {
  const w11 = { posts: s.documentsPosts, commentsPerPost: s.documentsComments, seeded: 0, roundRobin: false, rate: s.documentsRate, seconds: s.documentsSeconds };
  const during = `${s.documentsRate} writes/s for ${s.documentsSeconds} s over ${s.documentsPosts} posts' comments`;
  return [
    { spec: { key: "documents-prod", workload: DOCUMENTS_WORKLOAD, collection: "benchDocPosts", kept: "recount" }, load: w11, rollups: ROLLUPS, title: `workload 11, document counters: ${during}` },
    { spec: { key: "documents-records", workload: RECORDS_WORKLOAD, collection: "benchDocGroups", kept: "records" }, load: w11, rollups: ["ours"], title: `workload 11, records (a rule over several collections): ${during}` },
    {
      spec: { key: "documents-calm", workload: CALM_WORKLOAD, collection: "benchDocCalmPosts", kept: "recount" },
      load: { posts: s.calmPosts, commentsPerPost: s.calmComments, seeded: s.calmComments, roundRobin: true, rate: s.calmRate, seconds: s.calmSeconds },
      rollups: ROLLUPS,
      title: `workload 11, calm: ${s.calmRate} writes/s for ${s.calmSeconds} s, each of ${s.calmPosts} posts of ${s.calmComments} comments in turn`,
    },
    {
      spec: { key: "documents-viral", workload: VIRAL_WORKLOAD, collection: "benchDocViralPosts", kept: "recount" },
      load: { posts: 1, commentsPerPost: s.viralComments, seeded: s.viralComments, roundRobin: false, rate: s.viralRate, seconds: s.viralSeconds },
      rollups: ROLLUPS,
      title: `workload 11, viral: ${s.viralRate} writes/s for ${s.viralSeconds} s on one post of ${s.viralComments} comments`,
    },
    {
      spec: {
        key: "documents-move",
        workload: MOVE_WORKLOAD,
        collection: "benchDocMovePosts",
        kept: "recount",
        env: { RECOUNT_LIMIT: String(s.moveLimit) },
        beside: (counters, loadEndedMs) => driveMove(counters[0]!, move, loadEndedMs),
        recountUntilUs: () => move.recordsAtUs,
      },
      load: { posts: 1, commentsPerPost: 3 * s.moveLimit, seeded: s.moveLimit, roundRobin: false, rate: s.moveRate, seconds: s.moveSeconds },
      rollups: ["ours"],
      title: `workload 11, the move: RECOUNT_LIMIT ${s.moveLimit}, one post of ${s.moveLimit} comments, ${s.moveRate} writes/s for ${s.moveSeconds} s`,
    },
  ];
}

async function runLoads(ctx: BenchContext, wrapped: WrappedFunctions, s: Sizes): Promise<DocumentsResult> {
  const o = sharedSizes(ctx.options);
  const model = { maxDelayMs: o.deliveryDelayMs, duplicateFraction: o.deliveryDuplicatesPercent / 100, concurrency: o.deliveryConcurrency };
  const move = { ...newMoveResult(), limit: s.moveLimit };
  const phases: DocumentPhase[] = [];
  for (const [n, { spec, load, rollups, title }] of loadsOf(s, move).entries()) {
    for (const [i, rollup] of rollups.entries()) {
      const label = rollup === "naive" ? "the usual ±1 trigger" : `ours (the document trigger${spec.kept === "records" ? ", then rollupTotal" : ""})`;
      phases.push(await step(`${title}, ${label}`, () => documentPhase(ctx, wrapped, rollup, spec, { ...load, instances: o.deliveryInstances, model, seed: SEED + 100 * n + 10 * i })));
    }
  }
  const backfill = await step(`workload 11, backfill: ${s.backfillDocuments} existing comments over ${s.backfillPosts} posts`, () => backfillThroughput(ctx, s.backfillDocuments, s.backfillPosts));
  return { phases, move, backfill };
}

export const documents: Workload<DocumentsResult> = {
  id: "documents",
  flags: FLAGS,
  stages: ["production-like"],
  // Drift and lag run against the documents, not the shards (documents-measure.ts): its own targets judge them.
  judged: "none",
  run: (ctx, on) => runLoads(ctx, wrappedOf(on), sizes(ctx.options, FLAGS)),
  phases: (r) => r.phases.map((p) => p.phase),
  // The calls are the app's own writes of comments, the same for both: nothing on that side (the all-in table's rows need it counted).
  callables: (r) => new Map<string, CallableOps>(r.phases.map((p) => [p.phase.opsPrefix, { calls: p.counted, reads: 0, writes: 0 }])),
  section: (r) => [
    `Workload 11, document counters against the usual ±1 trigger, production-like delivery of every comment's write; ours by recount (rule ${r.phases.find((p) => p.kept === "recount")?.rule ?? "–"}) unless the row says records (rule ${r.phases.find((p) => p.kept === "records")?.rule ?? "–"}); drift is each counter's total against its published comments at the end; parent writes per second over the load and its settling:`,
    "",
    documentsTable(r),
    "",
    ...r.phases.flatMap((p) => {
      const lines = [versionsLine(p), recordsLine(p)].filter((line) => line !== "");
      return lines.length === 0 ? [] : [`${p.phase.workload}: ${lines.join(" ")}`, ""];
    }),
    ...moveLines(r),
    backfillLine(r.backfill),
  ],
  targets(r, { intervalMs }) {
    const out: Target[] = [];
    for (const p of r.phases.filter((q) => q.kept !== null)) {
      out.push({
        target: `${p.phase.workload}: drift, ours = 0 on every document counter (total = its published comments)`,
        measured: `${int(p.drift.absolute)} over ${int(p.phase.counters)} counters, ${int(p.duplicatedCounted)} counted changes delivered twice`,
        met: p.drift.absolute === 0,
      });
      if (p.versions !== null) {
        out.push({
          target: `${p.phase.workload}: every parent version of ours${p.phase.workload === MOVE_WORKLOAD ? " until the move ended" : ""} holds the count of its documents at its rollup.readTime`,
          measured: `${int(p.versions.off)} of ${int(p.versions.states)} versions off`,
          met: p.versions.off === 0,
        });
      }
    }
    for (const p of r.phases.filter((q) => q.kept === null)) {
      out.push({
        target: `${p.phase.workload}: drift, the usual trigger = its duplicated counted changes (net per counter)`,
        measured: `drift ${int(p.drift.absolute)}; ${int(p.duplicatedCounted)} counted changes delivered twice, net ${int(p.expectedNaiveDrift)}`,
        met: p.driftAsDuplicated,
      });
    }
    const ours = phaseOf(r, DOCUMENTS_WORKLOAD, "ours");
    if (ours !== undefined) {
      const lag = ours.phase.lagMs;
      out.push({
        target: `${DOCUMENTS_WORKLOAD}: lag p99 from a comment's write to the total, ours ≤ interval + 1 s = ${int(lagBoundMs(intervalMs))} ms`,
        measured: `p50 ${ms(lag.p50)} ms, p99 ${ms(lag.p99)} ms${lag.uncovered > 0 ? ` (${lag.uncovered} never in the total)` : ""}`,
        met: lag.uncovered === 0 && lag.p99 !== null && lag.p99 <= lagBoundMs(intervalMs),
      });
    }
    const calm = phaseOf(r, CALM_WORKLOAD, "ours");
    const calmNaive = phaseOf(r, CALM_WORKLOAD, "naive");
    if (calm !== undefined && calmNaive !== undefined) {
      const bound = calmNaive.phase.lagMs.p99 === null ? null : calmNaive.phase.lagMs.p99 + CALM_LAG_MARGIN_MS;
      out.push({
        target: `${CALM_WORKLOAD}: lag p99, ours ≤ the usual trigger's p99 + ${CALM_LAG_MARGIN_MS} ms`,
        measured: `ours p50 ${ms(calm.phase.lagMs.p50)} ms, p99 ${ms(calm.phase.lagMs.p99)} ms${calm.phase.lagMs.uncovered > 0 ? ` (${calm.phase.lagMs.uncovered} never in the total)` : ""}; the usual trigger p50 ${ms(calmNaive.phase.lagMs.p50)} ms, p99 ${ms(calmNaive.phase.lagMs.p99)} ms: bound ${ms(bound)} ms`,
        met: bound !== null && calm.phase.lagMs.uncovered === 0 && calm.phase.lagMs.p99 !== null && calm.phase.lagMs.p99 <= bound,
      });
    }
    const viral = phaseOf(r, VIRAL_WORKLOAD, "ours");
    if (viral !== undefined) {
      const naive = phaseOf(r, VIRAL_WORKLOAD, "naive");
      out.push(
        ...parentWriteBudgets([viral.phase], intervalMs).map((t) => ({
          ...t,
          measured: `${t.measured}; ${fixed(perSecond(viral), 1)} parent writes/s over ${fixed(viral.counted / viral.phase.loadSeconds, 1)} counted changes/s${naive === undefined ? "" : ` (the usual trigger: ${fixed(perSecond(naive), 1)}/s)`}`,
        })),
      );
    }
    if (r.move !== null && phaseOf(r, MOVE_WORKLOAD, "ours") !== undefined) {
      const m = r.move;
      out.push({
        target: `${MOVE_WORKLOAD}: a counter past RECOUNT_LIMIT (${int(m.limit)}) moves to records by the product's sweep, its total exact throughout`,
        measured:
          m.movingAtUs === null
            ? "it never passed the limit: no move"
            : m.recordsAtUs === null
              ? "it began to move and did not end"
              : `moved in ${fixed((m.recordsAtUs - m.movingAtUs) / 1e6, 1)} s (of it ${fixed(MOVE_MAY_START_MS / 1000, 0)} s waiting, as the product does, before it may start), the sweep's ${m.steps} run(s) ${fixed(m.runningMs / 1000, 1)} s: ${int(m.reads)} reads, ${int(m.writes)} writes`,
        met: m.recordsAtUs !== null,
      });
    }
    out.push({
      target: `workload 11: the backfill counts every existing comment exactly (kept ${r.backfill.kept.join(", ")}), and a second run changes nothing`,
      measured: `${int(r.backfill.first.seen)} seen, drift ${int(r.backfill.drift.absolute)}; again: ${int(r.backfill.second.counted)} counted, ${int(r.backfill.second.takenOut)} taken out`,
      met: r.backfill.drift.absolute === 0 && r.backfill.second.counted === 0 && r.backfill.second.takenOut === 0,
    });
    return out;
  },
  costTargets(rows) {
    return [
      costTarget(rows, DOCUMENTS_WORKLOAD, COST_RATIO),
      costTarget(rows, CALM_WORKLOAD, CALM_COST_RATIO),
      costTarget(rows, VIRAL_WORKLOAD, VIRAL_COST_RATIO),
    ].flat();
  },
  afterCosts: (_r, results) => {
    const rows = allInRows(results.costs);
    const row = oursRow(rows, DOCUMENTS_WORKLOAD);
    if (row === undefined || row.vsNaive === null) return [];
    const ratios = [CALM_WORKLOAD, VIRAL_WORKLOAD, RECORDS_WORKLOAD, MOVE_WORKLOAD].flatMap((w) => {
      const other = oursRow(rows, w);
      return other === undefined ? [] : [`"${w}" ${dollars(other.allIn)}${other.vsNaive === null ? "" : ` (${fixed(other.vsNaive, 2)}× its usual trigger)`}`];
    });
    return [
      ...outcomeLines(results.costs.find((c) => c.workload === DOCUMENTS_WORKLOAD && c.rollup === "ours")),
      ...outcomeLines(results.costs.find((c) => c.workload === RECORDS_WORKLOAD && c.rollup === "ours")),
      `Workload 11, per 1,000,000 counted changes (a comment created, deleted, published or unpublished; its rows of the tables above count those as increments), all in: ours ${dollars(row.allIn)} (the document trigger's invocations, reads, writes and counts, with its instance time), the usual ±1 trigger ${dollars(row.allIn / row.vsNaive)}: ${fixed(row.vsNaive, 2)}×${ratios.length === 0 ? "" : `; ${ratios.join(", ")}`}. ` +
        `Every write of a comment invokes the trigger, counted or not; the comment's own write is the app's, the same for both, and left out. ` +
        `Kept by recount, the document trigger's invocations are the outcomes "document trigger: recount (its rollup's line)" (what it did is the "document trigger's rollup: …" outcome of the same invocation: a count() billed a read per 1,000 index entries, in "aggregations", and the parent's commit; or a write an earlier count covered; or the wait for the slot's commit) and "document trigger: unchanged" (the write changed no count: nothing read or written). ` +
        `Kept by records ("${RECORDS_WORKLOAD}", and the move while it moves): "document trigger: counted" wrote the record and a shard, "covered" read and found it applied; the outcomes "document trigger's rollup: …" are the rollup it then ran on its own shard write, inside the same invocation; the rest are rollupTotal's. The move's row has the product's sweep runs as "the sweep's run (the move)".`,
      "",
    ];
  },
  failures(r) {
    const out: string[] = [];
    for (const p of r.phases.filter((q) => q.kept !== null)) {
      if (p.drift.absolute !== 0) out.push(`${p.phase.workload}: ${p.drift.counters} document counter(s) differ from their documents by ${p.drift.absolute} in all`);
      if (p.versions !== null && p.versions.off !== 0) out.push(`${p.phase.workload}: ${p.versions.off} parent version(s) were not the count of their documents at their read time`);
    }
    if (r.move !== null && phaseOf(r, MOVE_WORKLOAD, "ours") !== undefined && r.move.recordsAtUs === null) out.push(`${MOVE_WORKLOAD}: the counter did not move to records`);
    if (r.backfill.drift.absolute !== 0) out.push(`workload 11: the backfill left ${r.backfill.drift.counters} counter(s) off their documents by ${r.backfill.drift.absolute}`);
    if (r.backfill.second.counted !== 0 || r.backfill.second.takenOut !== 0) out.push("workload 11: a second backfill changed counts");
    return out;
  },
};

function phaseOf(r: DocumentsResult, workload: string, rollup: Rollup): DocumentPhase | undefined {
  return r.phases.find((p) => p.phase.workload === workload && p.phase.rollup === rollup);
}

function oursRow(rows: readonly AllInRow[], workload: string): AllInRow | undefined {
  return rows.find((row) => row.workload === workload && row.rollup === "ours");
}

function costTarget(rows: readonly AllInRow[], workload: string, limit: number): Target[] {
  const row = oursRow(rows, workload);
  if (row === undefined) return [];
  return [
    {
      target: `${workload}: a counted change, ours all in ≤ ${limit}× the usual ±1 trigger all in`,
      measured: row.vsNaive === null ? "no row of the usual trigger to compare with" : `${fixed(row.vsNaive, 2)}×: ${dollars(row.allIn)} against ${dollars(row.allIn / row.vsNaive)} per 1,000,000 counted changes`,
      met: row.vsNaive !== null && row.vsNaive <= limit,
    },
  ];
}

/** Parent writes per second of a phase, over its load and its settling. */
function perSecond(p: DocumentPhase): number {
  return p.phase.parentWrites / (p.phase.loadSeconds + (p.phase.settleMs ?? 0) / 1000);
}

function documentsTable(r: DocumentsResult): string {
  return markdownTable(
    ["workload", "trigger", "posts", "comments before", "comment writes", "counted changes", "deliveries (duplicates)", "counted changes delivered twice", "drift", "lag p50 ms", "lag p99 ms", "lag max ms", "parent writes", "per s"],
    r.phases.map((p) => [
      p.phase.workload,
      p.kept === null ? "the usual ±1 trigger" : p.kept === "recount" ? (p.phase.workload === MOVE_WORKLOAD ? "ours, recount → records" : "ours, recount") : "ours, records (+ rollupTotal)",
      int(p.phase.counters),
      int(p.seeded * p.phase.counters),
      int(p.writes),
      int(p.counted),
      `${int(p.phase.deliveries?.deliveries ?? 0)} (${int(p.phase.deliveries?.duplicates ?? 0)})`,
      int(p.duplicatedCounted),
      int(p.drift.absolute),
      ms(p.phase.lagMs.p50),
      ms(p.phase.lagMs.p99),
      ms(p.phase.lagMs.max),
      int(p.phase.parentWrites),
      fixed(perSecond(p), 1),
    ]),
    2,
  );
}

function versionsLine(p: DocumentPhase): string {
  if (p.versions === null) return "";
  return `${int(p.versions.states)} parent versions${p.phase.workload === MOVE_WORKLOAD ? " before the move ended" : ""}, ${int(p.versions.off)} of them not the count of the documents at their rollup.readTime.`;
}

function recordsLine(p: DocumentPhase): string {
  const parts: string[] = [];
  if (p.rollupDeliveries !== null && p.rollupDeliveries.deliveries > 0) {
    parts.push(
      `rollupTotal got ${int(p.rollupDeliveries.deliveries)} deliveries (${int(p.rollupDeliveries.duplicates)} duplicates, ${int(p.rollupDeliveries.retries)} retried) of the shard writes the document trigger made; ${p.shardWritesMerged === 0 ? "the shard listeners saw every shard write as its own state" : `the shard listeners merged ${int(p.shardWritesMerged)} shard write(s) into a later state (one rollup event fewer each)`}.`,
    );
  }
  if (p.hops !== null) {
    const { toShard, shardToTotal } = p.hops;
    parts.push(
      `Where the lag went: from the comment's write to the shard write that applied it (the document trigger's delivery and work) p50 ${ms(toShard.p50)} ms, p99 ${ms(toShard.p99)} ms; from that shard write to the total (its rollup, by the trigger itself or by rollupTotal: its slot and commit) p50 ${ms(shardToTotal.p50)} ms, p99 ${ms(shardToTotal.p99)} ms.`,
    );
  }
  return parts.join(" ");
}

function moveLines(r: DocumentsResult): string[] {
  const m = r.move;
  if (m === null || phaseOf(r, MOVE_WORKLOAD, "ours") === undefined) return [];
  const line =
    m.movingAtUs === null
      ? `The move (RECOUNT_LIMIT ${int(m.limit)}): the counter never passed the limit.`
      : `The move (RECOUNT_LIMIT ${int(m.limit)} for its phase): the count that found more documents began it (kept "moving"); the product's sweep (rollupSweep, run by the benchmark ${fixed(MOVE_MAY_START_MS / 1000, 0)} s after, when the move may start, then every second; Cloud Scheduler runs it every 5 minutes) recorded every document and ended it (kept "records") ${m.recordsAtUs === null ? "— it did not end" : `${fixed((m.recordsAtUs - m.movingAtUs) / 1e6, 1)} s after it began`}; ${m.steps} run(s), ${fixed(m.runningMs / 1000, 1)} s running, ${int(m.reads)} document reads (its own fixed ones, documents and records listed, records read), ${int(m.writes)} writes. The comments kept changing throughout; the lag of its row is over the writes before the move ended.`;
  return [line, ""];
}

function backfillLine(b: BackfillResult): string {
  return (
    `Backfill (the admin entry's backfillDocuments, rule ${b.rule}, counters kept ${b.kept.join(", ")}): ${int(b.documents)} existing comments over ${int(b.posts)} posts (${int(b.published)} published), ` +
    `${int(b.first.seen)} seen and ${int(b.first.counted)} counted in ${fixed(b.first.seconds, 1)} s: ${int(Math.round(b.documentsPerSecond))} documents/s; ` +
    `drift against the documents ${int(b.drift.absolute)}; a second run ${fixed(b.second.seconds, 1)} s, ${int(b.second.counted)} counted, ${int(b.second.takenOut)} taken out.`
  );
}
