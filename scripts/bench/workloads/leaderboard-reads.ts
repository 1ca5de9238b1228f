// Workload 12's measurements (leaderboard.ts): listeners on a board's summary and entries while its counters
// take increments (each entry write until the first summary that holds it, the writes of each document per
// second), and every counter's rank read after the load: through the admin entry's rankOf, checked against
// the rank counted from the totals, and what the read costs against a count() of every counter above.
import type { App } from "firebase-admin/app";
import type { Firestore } from "firebase-admin/firestore";
import { rankQuery, summaryOf } from "../../../functions/src/model/board";
import { boardRef, counterRef, entriesRef } from "../../../functions/src/model/paths";
import { sleep } from "../pace";
import { adminEntry } from "../product";
import { summarize, type Summary } from "../stats";

interface SummarySeen {
  receivedMs: number;
  readUs: number;
  updateUs: number;
  buckets: number;
}

export interface BoardSeen {
  lagMs: { p50: number | null; p99: number | null; max: number | null; writes: number; uncovered: number };
  maxWritesPerSecond: { summary: number; entry: number };
  summaryWrites: number;
  buckets: number;
}

export interface BoardWatch {
  /** Waits (at most 30 s) until a summary holds every entry write seen. */
  settled(intervalMs: number): Promise<void>;
  stop(): void;
  result(): BoardSeen;
}

const micros = (t: { seconds: number; nanoseconds: number }) => t.seconds * 1_000_000 + Math.floor(t.nanoseconds / 1000);

/** The most of `timesUs` within one second (each second of the clock). */
function mostPerSecond(timesUs: readonly number[]): number {
  const per = new Map<number, number>();
  for (const t of timesUs) per.set(Math.floor(t / 1_000_000), (per.get(Math.floor(t / 1_000_000)) ?? 0) + 1);
  return Math.max(0, ...per.values());
}

export function watchBoard(db: Firestore, board: string): BoardWatch {
  const summaries: SummarySeen[] = [];
  const entries = new Map<string, number[]>();
  const stopSummary = boardRef(db, board).onSnapshot((snap) => {
    const readTime = snap.get("rollup.readTime") as { seconds: number; nanoseconds: number } | undefined;
    if (!snap.exists || readTime === undefined) return;
    summaries.push({ receivedMs: Date.now(), readUs: micros(readTime), updateUs: micros(snap.updateTime!), buckets: summaryOf(snap.data()).counts.length });
  });
  const stopEntries = entriesRef(db, board).onSnapshot((snap) => {
    for (const change of snap.docChanges()) {
      if (change.type === "removed") continue;
      const changedAt = change.doc.get("changedAt") as { seconds: number; nanoseconds: number } | undefined;
      if (changedAt === undefined) continue;
      const times = entries.get(change.doc.id) ?? [];
      const us = micros(changedAt);
      if (times[times.length - 1] !== us) times.push(us);
      entries.set(change.doc.id, times);
    }
  });
  const lastEntryUs = () => Math.max(0, ...[...entries.values()].flat());
  const lastReadUs = () => Math.max(0, ...summaries.map((s) => s.readUs));
  return {
    async settled() {
      const deadline = Date.now() + 30_000;
      while (lastReadUs() < lastEntryUs() && Date.now() < deadline) await sleep(100);
    },
    stop() {
      stopSummary();
      stopEntries();
    },
    result() {
      const writes = [...entries.values()].flat();
      const lags: number[] = [];
      let uncovered = 0;
      for (const at of writes) {
        const first = summaries.find((s) => s.readUs >= at);
        if (first === undefined) uncovered++;
        else lags.push(Math.max(0, first.receivedMs - at / 1000));
      }
      const lag = summarize(lags);
      const updates = [...new Set(summaries.map((s) => s.updateUs))];
      return {
        lagMs: { p50: lag.p50, p99: lag.p99, max: lag.max, writes: writes.length, uncovered },
        maxWritesPerSecond: { summary: mostPerSecond(updates), entry: Math.max(0, ...[...entries.values()].map(mostPerSecond)) },
        summaryWrites: updates.length,
        buckets: summaries[summaries.length - 1]?.buckets ?? 0,
      };
    },
  };
}

/** What the rank reads of the board's counters counted and cost. */
export interface RankReads {
  counters: number;
  /** Ours: index entries the count() in the counter's bucket counted, and reads billed (2 documents + the count, if any). */
  ours: { entries: Summary; billed: Summary };
  /** A count() of every counter above: its index entries, and reads billed (at least 1). */
  countAbove: { entries: Summary; billed: Summary };
  /** Counters whose rankOf is not the rank counted from the totals. */
  wrong: string[];
}

/** Every counter's rank, read as rankOf reads it, against the truth and against a count() of every counter above. */
export async function rankReads(app: App, db: Firestore, ids: readonly string[]): Promise<RankReads> {
  const parents = await db.getAll(...ids.map((id) => counterRef(db, id)));
  const totals = parents.map((p) => p.get("total") as number);
  const boards = new Set(parents.map((p) => p.get("board") as unknown));
  if (boards.size !== 1) throw new Error(`workload 12: the counters are on ${boards.size} boards, not one`);
  const board = [...boards][0] as string;
  const summary = summaryOf((await boardRef(db, board).get()).data());
  const ours: { entries: number[]; billed: number[] } = { entries: [], billed: [] };
  const countAbove: { entries: number[]; billed: number[] } = { entries: [], billed: [] };
  const wrong: string[] = [];
  for (const [i, id] of ids.entries()) {
    const total = totals[i]!;
    const above = totals.filter((t) => t > total).length;
    const query = rankQuery(summary, total);
    let counted = 0;
    if (query.count !== null) {
      let q = entriesRef(db, board).where("total", ">", query.count.greaterThan);
      if (query.count.lessThan !== null) q = q.where("total", "<", query.count.lessThan);
      counted = (await q.count().get()).data().count;
    }
    ours.entries.push(counted);
    ours.billed.push(2 + (query.count === null ? 0 : Math.max(1, Math.ceil(counted / 1000))));
    countAbove.entries.push(above);
    countAbove.billed.push(Math.max(1, Math.ceil(above / 1000)));
    const read = await adminEntry().rankOf(id, { app });
    if (read.rank !== 1 + above || read.total !== total || read.of !== ids.length) wrong.push(`${id}: ${read.rank} of ${read.of}, truly ${1 + above} of ${ids.length}`);
  }
  return {
    counters: ids.length,
    ours: { entries: summarize(ours.entries), billed: summarize(ours.billed) },
    countAbove: { entries: summarize(countAbove.entries), billed: summarize(countAbove.billed) },
    wrong,
  };
}
