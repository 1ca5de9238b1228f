// The one decision behind every document counter (docs/documents.md), made the same way by the trigger,
// the backfill and the model check: what a counter's records say of its documents, what an observation of
// a document brings, and what a commit must write. Pure: no Firebase import.
//
// A record per counter and document the backend has seen (counters/{counterId}/exactCounterDocuments/{key},
// paths.ts) holds what the document contributes to the counter now (`counted`: 0, 1 or the field's value)
// and the VERSION of the document that contribution reflects. An observation is a document's contribution
// at one of its versions:
// - a trigger event whose `after` exists: the contribution of `after`, at its update time;
// - a delete: 0, just after `before`'s update time (the delete removes that version; no write of the
//   document can commit between the two, so nothing falls between them either);
// - the backfill: a document read at read time R with update time U: its contribution at U; a document
//   absent at R: 0 at R (no later write can have committed at or before R).
// An observation newer than the record replaces it, and the same commit adds `new - old` to one shard of
// the counter (a precondition on the record's update time, or its absence, makes the record the one read).
// An observation not newer changes nothing: duplicated, late and reordered events, and a backfill that
// read a document before the trigger wrote a later version of it, are all covered. So the record holds
// the contribution of the newest version observed, and the counter's shards add up to the records.
//
// Why that is what the document contributes now, once events settle, even though the trigger skips the
// events that change no contribution (an edit of a counted comment costs nothing): take the document's
// last write that changed its contribution. Its event is delivered (retries run up to 24 h) and observes
// the contribution the document has had ever since, at that write's version; the record ends at that
// version or a later one, which then saw the same contribution. A document that never changed its
// contribution since the trigger was deployed is counted by the backfill, which observes it as it is. The
// backfill writes nothing where the record already says what the document counts (or where a document
// that counts nothing has no record): there, the last change's event brings its version itself. A deleted
// id created again has versions after the delete's, so it counts afresh.
//
// After a deleteCounter (its records go with it), an event of a write older than the deletion must not
// count again in a counter the next change creates: the deletion leaves its time behind
// (exactCounterDeleted, paths.ts), the counter created next keeps it (`rollup.documentsSince`), and events
// of versions at or before it that count something are covered. The backfill's observations are not: they
// are what is there now. An event that counts nothing is not covered by the deletion's time either: it
// cannot count twice, and it may be the one that takes out what a backfill counted again after the
// deletion (a comment written before the deleteCounter, counted by the backfill at its old version, then
// deleted: its delete's version, just after that old version, is at or before the deletion's time). Such
// an observation goes by its record alone: with no record it writes one that counts 0 (nothing to take
// out); with the backfill's record at an older version it takes the document out.

import type { Version } from "../model/time";

/** When a record of a document that no longer counts (deleted, or out of its conditions) may expire. */
export const RECORD_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** What a record holds of its document. */
export interface RecordState {
  counted: number;
  version: Version;
}

/** A document's contribution at one of its versions. */
export interface Observation {
  document: string;
  counted: number;
  version: Version;
}

/** Who observed: a trigger event, or the backfill (docs above: stale events after a deletion). */
export type Source = "event" | "backfill";

/** The counter as one read saw it. */
export type CounterRead =
  | { exists: true; unique: boolean; since: Version | null }
  | { exists: false; deleting: boolean; deletedAt: Version | null };

/** One read: the counter, and the record of each observed document (null: none). */
export interface Read {
  counter: CounterRead;
  records: ReadonlyMap<string, RecordState | null>;
}

/** A record the commit writes: the new state, and what it held (0 when it had none). */
export interface RecordWrite extends Observation {
  previous: number;
  existed: boolean;
}

/**
 * What a commit does to the counter besides the records: nothing, one shard increment, the counter's
 * creation with its first amount; or nothing may be written now (still being deleted: try later; a unique
 * counter: never).
 */
export type CounterAction = "none" | "shard" | "create" | "retry-later" | "unique";

export interface Plan {
  writes: RecordWrite[];
  /** The sum of `counted - previous`: what the counter gains. */
  delta: number;
  counter: CounterAction;
  /** Observations that changed nothing. */
  covered: number;
}

/** Whether an observation replaces a record: a newer version, or (a rule changed in between) the same version counted otherwise. */
export function supersedes(observation: Observation, record: RecordState | null): boolean {
  if (record === null) return true;
  return observation.version > record.version || (observation.version === record.version && observation.counted !== record.counted);
}

/**
 * The plan for `observations` (one per document) of one counter, given what was read. Events at or before
 * the counter's last deletion that count something are covered (see above); every other observation newer
 * than its record is written.
 */
export function planObservations(read: Read, observations: readonly Observation[], source: Source): Plan {
  const since = source === "backfill" ? null : read.counter.exists ? read.counter.since : read.counter.deletedAt;
  const writes: RecordWrite[] = [];
  let delta = 0;
  let covered = 0;
  for (const observation of observations) {
    const record = read.records.get(observation.document) ?? null;
    // The backfill leaves a record that already says what the document counts (and a document that counts
    // nothing without one): see above. An event writes its version even so: it may be the last change.
    const agrees = source === "backfill" && observation.counted === (record?.counted ?? 0);
    const beforeDeletion = since !== null && observation.counted !== 0 && observation.version <= since;
    if (agrees || beforeDeletion || !supersedes(observation, record)) {
      covered++;
      continue;
    }
    const previous = record?.counted ?? 0;
    writes.push({ ...observation, previous, existed: record !== null });
    delta += observation.counted - previous;
  }
  return { writes, delta, counter: counterAction(read.counter, writes, delta), covered };
}

function counterAction(counter: CounterRead, writes: readonly RecordWrite[], delta: number): CounterAction {
  if (writes.length === 0) return "none";
  // A record that counts something is written only with a shard of the counter (or its creation), so
  // that a deletion's cleanup, which runs while the counter has no shards, never misses one (deletion.ts).
  const counts = delta !== 0 || writes.some((w) => w.counted !== 0);
  if (counter.exists) {
    if (counter.unique) return "unique";
    return counts ? "shard" : "none";
  }
  if (counter.deleting) return "retry-later";
  return counts ? "create" : "none";
}

/** When a record written at `nowMs` may expire: never while it counts something. */
export function expiryMs(counted: number, nowMs: number): number | null {
  return counted === 0 ? nowMs + RECORD_TTL_MS : null;
}
