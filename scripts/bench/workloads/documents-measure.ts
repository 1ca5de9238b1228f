// Workload 11's measurements, pure (no Firebase: scripts/test/bench-documents.test.ts checks each): what the
// writer does next to a comment, what a write changes in the count, the drift against the documents
// themselves, the drift the usual ±1 trigger must show for the events it got more than once, and the lag of
// each counted change from the comment's write to the first total that holds it.
//
// Lag of a counted change W of a document D (commit time t, version v: the model's, versionAt of its update
// time, or for a delete versionJustAfter the update time it removes: functions/src/documents/records.ts):
// - ours: the document trigger applies W when D's record (counters/{id}/exactCounterDocuments/{key}) first
//   holds a version ≥ v: W's own observation, or a later write's that covers it. The record is written in the
//   same batch as the shard, so that state's update time is the shard write's commit time; the total holds W
//   from the first parent state whose `rollup.readTime` is at or after the last record state of D, up to that
//   one, that moved the count (the product's coverage rule), and not before W is applied (oursApplied).
// - ours, kept by recount (a rule over one collection: functions/src/documents/recount.ts): the total is a
//   count() of the documents at `rollup.readTime`, so it holds W from the first parent state whose read time is
//   at or after t (recountLags); no record, no shard. Every such state must be exact at its read time: its total
//   is the documents' count then (recountStatesOff, from the writes themselves and what existed before).
// - the usual trigger: its update of the total, on W's first delivery (the handler answers its commit time).
// All end at a commit time on the emulator's clock; the lag is that minus t.
import type { Summary } from "../stats";
import { summarize } from "../stats";

/** The rule's one condition: a comment counts while its `status` is "published". */
export const PUBLISHED = "published";

/** What a comment adds to its post's count: 1 while it exists and is published. */
export function countOf(data: Record<string, unknown> | undefined): number {
  return data?.status === PUBLISHED ? 1 : 0;
}

/** A write of the load: create (published or a draft), delete, publish/unpublish, or an edit that changes no count. */
export type Operation = { kind: "create"; status: string } | { kind: "delete" } | { kind: "toggle"; status: string } | { kind: "edit" };

/** Shares of the mix: a new comment is published 3 times in 4; of the writes to an existing one, 35 % delete it and 30 % (un)publish it. */
const PUBLISHED_SHARE = 0.75;
const DELETE_SHARE = 0.35;
const TOGGLE_SHARE = 0.3;

/** The next write of a comment whose current data is `data` (undefined: it does not exist), drawn from `random`. */
export function nextOperation(data: Record<string, unknown> | undefined, random: () => number): Operation {
  if (data === undefined) return { kind: "create", status: random() < PUBLISHED_SHARE ? PUBLISHED : "draft" };
  const r = random();
  if (r < DELETE_SHARE) return { kind: "delete" };
  if (r < DELETE_SHARE + TOGGLE_SHARE) return { kind: "toggle", status: data.status === PUBLISHED ? "draft" : PUBLISHED };
  return { kind: "edit" };
}

/** A comment's data after `op` (undefined: deleted); `text` is the edit's new text. */
export function applyOperation(data: Record<string, unknown> | undefined, op: Operation, text: string): Record<string, unknown> | undefined {
  switch (op.kind) {
    case "create":
      return { status: op.status, text };
    case "delete":
      return undefined;
    case "toggle":
      return { ...data, status: op.status };
    case "edit":
      return { ...data, text };
  }
}

/** One write of a comment, as the benchmark made it. */
export interface CommentWrite {
  counterId: string;
  path: string;
  /** The count's change by this write: after's contribution − before's (−1, 0, 1). */
  delta: number;
  /** The write's version, as the document trigger observes it (header). */
  version: string;
  /** Commit time, µs. */
  writtenAtUs: number;
  /** Successful deliveries of its event to the trigger (duplicates included). */
  deliveries: number;
  /** The usual trigger's update of the total on its first delivery that made one, µs. */
  naiveAppliedAtUs?: number;
}

/** A state of a document's record, as a listener saw it: its version, what the document counts, its update time. */
export interface RecordSeen {
  path: string;
  version: string;
  counted: number;
  atUs: number;
}

/** A state of a parent: its update time, total and, ours, the read time its total covers. */
export interface ParentSeen {
  atUs: number;
  total: number;
  coveredUntilUs: number | null;
}

export interface LagResult extends Summary {
  /** Counted changes no state showed in a total. */
  uncovered: number;
}

/**
 * When the total first holds our counted change `w` (µs), or undefined: the record state that applied it
 * (header) and the shard write its count last moved with. A state whose `counted` is the one before it moved
 * no shard (a change undone before its events came, a late event of a deleted comment): then the total
 * holds `w` as soon as it covers the last state that did (none: the count never moved, and holds it at once).
 */
function oursApplied(w: CommentWrite, records: ReadonlyMap<string, readonly RecordSeen[]>, parents: ReadonlyMap<string, readonly ParentSeen[]>): { appliedUs: number; shownUs: number } | undefined {
  const states = records.get(w.path) ?? [];
  const at = states.findIndex((r) => r.version >= w.version);
  if (at === -1) return undefined;
  let moved: RecordSeen | undefined;
  for (let i = 0; i <= at; i++) if (states[i]!.counted !== (i === 0 ? 0 : states[i - 1]!.counted)) moved = states[i];
  const appliedUs = states[at]!.atUs;
  if (moved === undefined) return { appliedUs, shownUs: appliedUs };
  const movedUs = moved.atUs;
  const shown = (parents.get(w.counterId) ?? []).find((p) => p.coveredUntilUs !== null && p.coveredUntilUs >= movedUs);
  return shown === undefined ? undefined : { appliedUs, shownUs: Math.max(appliedUs, shown.atUs) };
}

/** Lags of our counted changes (header): `records` by document path, `parents` by counter id, each in time order. */
export function oursLags(writes: readonly CommentWrite[], records: ReadonlyMap<string, readonly RecordSeen[]>, parents: ReadonlyMap<string, readonly ParentSeen[]>): LagResult {
  const lags: number[] = [];
  let uncovered = 0;
  for (const w of writes) {
    if (w.delta === 0) continue;
    const applied = oursApplied(w, records, parents);
    if (applied === undefined) uncovered++;
    else lags.push(Math.max(0, (applied.shownUs - w.writtenAtUs) / 1000));
  }
  return { ...summarize(lags), uncovered };
}

/**
 * Where our lag goes, per counted change: from the comment's write to the record state that applied it (the
 * document trigger's delivery and work; its shard write, if any, is in the same batch), and from there to the
 * total (the rollup of that shard write, by the trigger itself or by rollupTotal: its slot and commit). Only the
 * changes the total holds.
 */
export function oursHops(writes: readonly CommentWrite[], records: ReadonlyMap<string, readonly RecordSeen[]>, parents: ReadonlyMap<string, readonly ParentSeen[]>): { toShard: Summary; shardToTotal: Summary } {
  const toShard: number[] = [];
  const shardToTotal: number[] = [];
  for (const w of writes) {
    if (w.delta === 0) continue;
    const applied = oursApplied(w, records, parents);
    if (applied === undefined) continue;
    toShard.push(Math.max(0, (applied.appliedUs - w.writtenAtUs) / 1000));
    shardToTotal.push((applied.shownUs - applied.appliedUs) / 1000);
  }
  return { toShard: summarize(toShard), shardToTotal: summarize(shardToTotal) };
}

/** Lags of our counted changes on counters kept by recount (header): `parents` by counter id, each in time order. */
export function recountLags(writes: readonly CommentWrite[], parents: ReadonlyMap<string, readonly ParentSeen[]>): LagResult {
  const lags: number[] = [];
  let uncovered = 0;
  for (const w of writes) {
    if (w.delta === 0) continue;
    const shown = (parents.get(w.counterId) ?? []).find((p) => p.coveredUntilUs !== null && p.coveredUntilUs >= w.writtenAtUs);
    if (shown === undefined) uncovered++;
    else lags.push(Math.max(0, (shown.atUs - w.writtenAtUs) / 1000));
  }
  return { ...summarize(lags), uncovered };
}

/**
 * Parent states of counters kept by recount whose total is not the count of their documents at their read time:
 * what counted before the load (`base`, by counter id) plus the deltas of the writes committed at or before it.
 * States without a read time (none yet) are left out. 0 when the total was exact on every version.
 */
export function recountStatesOff(writes: readonly CommentWrite[], parents: ReadonlyMap<string, readonly ParentSeen[]>, base: ReadonlyMap<string, number>): { states: number; off: number } {
  const byCounter = new Map<string, CommentWrite[]>();
  for (const w of writes) if (w.delta !== 0) (byCounter.get(w.counterId) ?? byCounter.set(w.counterId, []).get(w.counterId)!).push(w);
  let states = 0;
  let off = 0;
  for (const [counterId, seen] of parents) {
    const own = [...(byCounter.get(counterId) ?? [])].sort((a, b) => a.writtenAtUs - b.writtenAtUs);
    for (const p of seen) {
      if (p.coveredUntilUs === null) continue;
      states++;
      const readUs = p.coveredUntilUs;
      const count = own.reduce((n, w) => (w.writtenAtUs <= readUs ? n + w.delta : n), base.get(counterId) ?? 0);
      if (p.total !== count) off++;
    }
  }
  return { states, off };
}

/** Lags of the usual trigger's counted changes: to its update on the first delivery. */
export function naiveLags(writes: readonly CommentWrite[]): LagResult {
  const lags: number[] = [];
  let uncovered = 0;
  for (const w of writes) {
    if (w.delta === 0) continue;
    if (w.naiveAppliedAtUs === undefined) uncovered++;
    else lags.push(Math.max(0, (w.naiveAppliedAtUs - w.writtenAtUs) / 1000));
  }
  return { ...summarize(lags), uncovered };
}

/** The exact count of each counter: its comments that exist and are published at the end (`finals` by path). */
export function truthOf(finals: ReadonlyMap<string, { counterId: string; data: Record<string, unknown> | undefined }>): Map<string, number> {
  const truth = new Map<string, number>();
  for (const { counterId, data } of finals.values()) truth.set(counterId, (truth.get(counterId) ?? 0) + countOf(data));
  return truth;
}

export interface Drift {
  /** Σ over the counters of total − exact count. */
  net: number;
  /** Σ over the counters of |total − exact count|. */
  absolute: number;
  counters: number;
}

/** Each counter's total against its exact count (a counter without a total holds 0). */
export function driftOf(totals: ReadonlyMap<string, number>, truth: ReadonlyMap<string, number>): Drift {
  let net = 0;
  let absolute = 0;
  let counters = 0;
  for (const id of new Set([...totals.keys(), ...truth.keys()])) {
    const d = (totals.get(id) ?? 0) - (truth.get(id) ?? 0);
    net += d;
    absolute += Math.abs(d);
    if (d !== 0) counters++;
  }
  return { net, absolute, counters };
}

/**
 * The drift the usual trigger must end with: every delivery after the first applies the write's delta once
 * more, so a counter is off by Σ (deliveries − 1) × delta over its writes. Duplicates of writes that change no
 * count (an edit) do nothing; a duplicated +1 and a duplicated −1 of one counter cancel.
 */
export function expectedNaiveDrift(writes: readonly CommentWrite[]): { perCounter: Map<string, number>; absolute: number; duplicatedCounted: number } {
  const perCounter = new Map<string, number>();
  let duplicatedCounted = 0;
  for (const w of writes) {
    const extra = Math.max(0, w.deliveries - 1);
    if (extra === 0 || w.delta === 0) continue;
    duplicatedCounted += extra;
    perCounter.set(w.counterId, (perCounter.get(w.counterId) ?? 0) + extra * w.delta);
  }
  const absolute = [...perCounter.values()].reduce((sum, d) => sum + Math.abs(d), 0);
  return { perCounter, absolute, duplicatedCounted };
}

/** From when (µs) the total equals `exact` for good, over states in time order; null if the last state differs. */
export function exactSinceUs(states: readonly ParentSeen[], exact: number): number | null {
  let since: number | null = null;
  for (const s of states) {
    if (s.total !== exact) since = null;
    else since ??= s.atUs;
  }
  return since;
}
