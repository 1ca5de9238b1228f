// Workload 11: document counters (DOCUMENT_COUNTERS, docs/documents.md) against the usual ±1 trigger. Comments
// are created, published, unpublished, edited and deleted under posts, and every write's event is delivered
// production-like (delayed, reordered, some twice) to ours (the product's document trigger, then rollupTotal
// for the shard writes it makes) and, on other posts, to the usual trigger (documents-load.ts). Measured
// against the documents themselves (documents-measure.ts): drift, lag from the comment's write to the total
// that holds it, and the cost per counted change, all in. Then the backfill's throughput on existing comments
// (documents-backfill.ts). The run fails if our drift is not 0 or the backfill is not exact.
import { allInRows, type AllInRow } from "../allin";
import { outcomeLines } from "../costs";
import type { CallableOps } from "../callable";
import { ROLLUPS } from "../counters";
import { dollars, fixed, int, markdownTable, ms } from "../format";
import { sharedSizes, sizes } from "../options";
import { lagBoundMs, type Target } from "../targets";
import { step } from "./context";
import { backfillThroughput, type BackfillResult } from "./documents-backfill";
import { documentPhase, DOCUMENTS_WORKLOAD, type DocumentPhase } from "./documents-load";
import { wrappedOf, type Workload } from "./workload";

/** Seeds of the phases' delivery, one per rollup. */
const SEED = 20261128;
/** The issue's targets (docs/documents.md): a counted change at most this many times the usual trigger's cost, all in. */
const COST_RATIO = 2;

export interface DocumentsResult {
  phases: DocumentPhase[];
  backfill: BackfillResult;
}

const FLAGS = [
  { key: "documentsPosts", flag: "--documents-posts", full: 20, quick: 4, min: 1, help: "workload 11: posts (a counter each), ours and the usual trigger alike" },
  { key: "documentsComments", flag: "--documents-comments", full: 10, quick: 5, min: 1, help: "workload 11: comment ids per post, written again and again" },
  { key: "documentsRate", flag: "--documents-rate", full: 50, quick: 20, min: 1, help: "workload 11: writes of comments per second over all posts" },
  { key: "documentsSeconds", flag: "--documents-seconds", full: 20, quick: 2, min: 1, help: "workload 11: duration" },
  { key: "backfillDocuments", flag: "--backfill-documents", full: 5000, quick: 200, min: 1, help: "workload 11: existing comments the backfill counts" },
  { key: "backfillPosts", flag: "--backfill-posts", full: 50, quick: 4, min: 1, help: "workload 11: posts (counters) they are spread over" },
] as const;

export const documents: Workload<DocumentsResult> = {
  id: "documents",
  flags: FLAGS,
  stages: ["production-like"],
  // Drift and lag run against the documents, not the shards (documents-measure.ts): its own targets judge them.
  judged: "none",
  async run(ctx, on) {
    const s = sizes(ctx.options, FLAGS);
    const o = sharedSizes(ctx.options);
    const wrapped = wrappedOf(on);
    const model = { maxDelayMs: o.deliveryDelayMs, duplicateFraction: o.deliveryDuplicatesPercent / 100, concurrency: o.deliveryConcurrency };
    const load = { posts: s.documentsPosts, commentsPerPost: s.documentsComments, rate: s.documentsRate, seconds: s.documentsSeconds, instances: o.deliveryInstances, model };
    const phases: DocumentPhase[] = [];
    for (const [i, rollup] of ROLLUPS.entries()) {
      const label = rollup === "ours" ? "ours (the document trigger, then rollupTotal)" : "the usual ±1 trigger";
      phases.push(
        await step(`workload 11, document counters: ${s.documentsRate} writes/s for ${s.documentsSeconds} s over ${s.documentsPosts} posts' comments, ${label}`, () =>
          documentPhase(ctx, wrapped, rollup, { ...load, seed: SEED + 10 * i }),
        ),
      );
    }
    const backfill = await step(`workload 11, backfill: ${s.backfillDocuments} existing comments over ${s.backfillPosts} posts`, () => backfillThroughput(ctx, s.backfillDocuments, s.backfillPosts));
    return { phases, backfill };
  },
  phases: (r) => r.phases.map((p) => p.phase),
  // The calls are the app's own writes of comments, the same for both: nothing on that side (the all-in table's rows need it counted).
  callables: (r) => new Map<string, CallableOps>(r.phases.map((p) => [p.phase.opsPrefix, { calls: p.counted, reads: 0, writes: 0 }])),
  section: (r) => [
    `Workload 11, document counters (${r.phases.find((p) => p.rule !== null)?.rule ?? "–"}) against the usual ±1 trigger, production-like delivery of every comment's write; drift is each counter's total against its published comments at the end:`,
    "",
    documentsTable(r),
    "",
    ...r.phases.flatMap((p) =>
      p.rollupDeliveries === null
        ? []
        : [
            `Ours: rollupTotal got ${int(p.rollupDeliveries.deliveries)} deliveries (${int(p.rollupDeliveries.duplicates)} duplicates, ${int(p.rollupDeliveries.retries)} retried) of the shard writes the document trigger made; ${p.shardWritesMerged === 0 ? "the shard listeners saw every shard write as its own state" : `the shard listeners merged ${int(p.shardWritesMerged)} shard write(s) into a later state (one rollup event fewer each)`}. ${hopsLine(p)}`,
            "",
          ],
    ),
    backfillLine(r.backfill),
  ],
  targets(r, { intervalMs }) {
    const ours = r.phases.find((p) => p.phase.rollup === "ours");
    const naive = r.phases.find((p) => p.phase.rollup === "naive");
    const out: Target[] = [];
    if (ours !== undefined) {
      out.push({
        target: "workload 11: drift, ours = 0 on every document counter (total = its published comments)",
        measured: `${int(ours.drift.absolute)} over ${int(ours.phase.counters)} counters, ${int(ours.duplicatedCounted)} counted changes delivered twice`,
        met: ours.drift.absolute === 0,
      });
      const lag = ours.phase.lagMs;
      out.push({
        target: `workload 11: lag p99 from a comment's write to the total, ours ≤ interval + 1 s = ${int(lagBoundMs(intervalMs))} ms`,
        measured: `p50 ${ms(lag.p50)} ms, p99 ${ms(lag.p99)} ms${lag.uncovered > 0 ? ` (${lag.uncovered} never in the total)` : ""}`,
        met: lag.uncovered === 0 && lag.p99 !== null && lag.p99 <= lagBoundMs(intervalMs),
      });
    }
    if (naive !== undefined) {
      out.push({
        target: "workload 11: drift, the usual trigger = its duplicated counted changes (net per counter)",
        measured: `drift ${int(naive.drift.absolute)}; ${int(naive.duplicatedCounted)} counted changes delivered twice, net ${int(naive.expectedNaiveDrift)}`,
        met: naive.driftAsDuplicated,
      });
    }
    out.push({
      target: "workload 11: the backfill counts every existing comment exactly, and a second run changes nothing",
      measured: `${int(r.backfill.first.seen)} seen, drift ${int(r.backfill.drift.absolute)}; again: ${int(r.backfill.second.counted)} counted, ${int(r.backfill.second.takenOut)} taken out`,
      met: r.backfill.drift.absolute === 0 && r.backfill.second.counted === 0 && r.backfill.second.takenOut === 0,
    });
    return out;
  },
  costTargets(rows) {
    const row = oursRow(rows);
    if (row === undefined) return [];
    return [
      {
        target: `workload 11: a counted change, ours all in ≤ ${COST_RATIO}× the usual ±1 trigger all in`,
        measured: row.vsNaive === null ? "no row of the usual trigger to compare with" : `${fixed(row.vsNaive, 2)}×: ${dollars(row.allIn)} against ${dollars(row.allIn / row.vsNaive)} per 1,000,000 counted changes`,
        met: row.vsNaive !== null && row.vsNaive <= COST_RATIO,
      },
    ];
  },
  afterCosts: (_r, results) => {
    const row = oursRow(allInRows(results.costs));
    if (row === undefined || row.vsNaive === null) return [];
    return [
      ...outcomeLines(results.costs.find((c) => c.workload === DOCUMENTS_WORKLOAD && c.rollup === "ours")),
      `Workload 11, per 1,000,000 counted changes (a comment created, deleted, published or unpublished; its rows of the tables above count those as increments), all in: ours ${dollars(row.allIn)} (the document trigger's invocations, reads and writes, and rollupTotal's, with both functions' instance time), the usual ±1 trigger ${dollars(row.allIn / row.vsNaive)}: ${fixed(row.vsNaive, 2)}×. Every write of a comment invokes both triggers, counted or not; the comment's own write is the app's, the same for both, and left out. In the table above, the document trigger's invocations are the outcomes "document trigger: …" (counted: it wrote the record and a shard; covered: a duplicate or late event, read and found applied; unchanged: the write changed no count); the outcomes "document trigger's rollup: …" are the rollup it then ran on its own shard write, inside the same invocation (no invocation or running time of their own: the "counted" row has them); the rest are rollupTotal's.`,
      "",
    ];
  },
  failures(r) {
    const ours = r.phases.find((p) => p.phase.rollup === "ours");
    return [
      ...(ours === undefined || ours.drift.absolute === 0 ? [] : [`workload 11: ${ours.drift.counters} document counter(s) differ from their documents by ${ours.drift.absolute} in all`]),
      ...(r.backfill.drift.absolute === 0 ? [] : [`workload 11: the backfill left ${r.backfill.drift.counters} counter(s) off their documents by ${r.backfill.drift.absolute}`]),
      ...(r.backfill.second.counted === 0 && r.backfill.second.takenOut === 0 ? [] : ["workload 11: a second backfill changed counts"]),
    ];
  },
};

function oursRow(rows: readonly AllInRow[]): AllInRow | undefined {
  return rows.find((row) => row.workload === DOCUMENTS_WORKLOAD && row.rollup === "ours");
}

function documentsTable(r: DocumentsResult): string {
  return markdownTable(
    ["trigger", "posts", "comment writes", "counted changes", "deliveries (duplicates)", "counted changes delivered twice", "drift", "lag p50 ms", "lag p99 ms", "lag max ms"],
    r.phases.map((p) => [
      p.phase.rollup === "ours" ? "ours (document trigger + rollupTotal)" : "the usual ±1 trigger",
      int(p.phase.counters),
      int(p.writes),
      int(p.counted),
      `${int(p.phase.deliveries?.deliveries ?? 0)} (${int(p.phase.deliveries?.duplicates ?? 0)})`,
      int(p.duplicatedCounted),
      int(p.drift.absolute),
      ms(p.phase.lagMs.p50),
      ms(p.phase.lagMs.p99),
      ms(p.phase.lagMs.max),
    ]),
    1,
  );
}

function hopsLine(p: DocumentPhase): string {
  if (p.hops === null) return "";
  const { toShard, shardToTotal } = p.hops;
  return `Where the lag went: from the comment's write to the shard write that applied it (the document trigger's delivery and work) p50 ${ms(toShard.p50)} ms, p99 ${ms(toShard.p99)} ms; from that shard write to the total (its rollup, by the trigger itself or by rollupTotal: its slot and commit) p50 ${ms(shardToTotal.p50)} ms, p99 ${ms(shardToTotal.p99)} ms.`;
}

function backfillLine(b: BackfillResult): string {
  return (
    `Backfill (the admin entry's backfillDocuments, rule ${b.rule}): ${int(b.documents)} existing comments over ${int(b.posts)} posts (${int(b.published)} published), ` +
    `${int(b.first.seen)} seen and ${int(b.first.counted)} counted in ${fixed(b.first.seconds, 1)} s: ${int(Math.round(b.documentsPerSecond))} documents/s; ` +
    `drift against the documents ${int(b.drift.absolute)}; a second run ${fixed(b.second.seconds, 1)} s, ${int(b.second.counted)} counted, ${int(b.second.takenOut)} taken out.`
  );
}
