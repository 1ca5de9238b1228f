// What a reset writes onto the parent (reset.ts does the reading and the writing), as a pure function of what
// it read at its snapshot's read time R and of the parent as it is when the write commits. Pure, so the
// model check (functions/test/model.test.ts) runs the very decision over its in-memory Firestore, with
// rollups, growth, reshards and other resets landing between the read and the write.
//
// THE ARGUMENT. Between R and the reset's write, the writers of the counter are:
// - increments: they touch shards only, and commute with the reset's `increment(-count at R)`;
// - rollup commits: they write the parent only (`total` = a sum read at R' and `rollup.readTime` = R',
//   `rollup.days` exact at R'; growth adds shards at 0, which hold nothing from before R);
// - other resets, reshards, and a delete (and a create again): they move or remove what shards held at R.
// The write is one transaction that reads the parent (locking it until it commits) and refuses the last
// group: a `resetAt`, a `rollup.reshards` or a creation time other than at R means one of them ran, and the
// reset reads again. A rollup commit is no reason to: after the write, every shard holds exactly the deltas
// committed after R, and the parent must say what of those it covers. Two cases:
// - no sum read after R is on the parent (rollup.readTime <= R, or none): total 0, rollup.readTime = R, no
//   days: it covers nothing after R, exactly;
// - a rollup committed a sum read at R' > R: its total is Σ shards at R', so total - Σ shards at R is the
//   sum of the deltas committed in (R, R'], exactly what a total at R' must count after the reset; and
//   rollup.readTime stays R', never going back (plan.ts: coverage only grows). A day still open at R
//   (model/windows.ts) likewise: the parent's count of it at R' minus what the shards held of it at R.
//   A day closed at R took no write after it, so what the reset erases of it leaves 0.
// `resetAt` = R either way: the increments committed at or before it are gone.
import { addDays, DAY_CLOSES_AFTER_MS, type DayCounts, dayOf, KEPT_DAYS } from "./windows";

/** What tells that nothing but increments and rollups wrote the counter since the read. */
export interface ResetMarks {
  /** The parent's creation time (microseconds): a counter deleted and created again has another. */
  createdUs: number;
  /** `resetAt` (microseconds); null when never reset. */
  resetUs: number | null;
  /** `rollup.reshards`: how many reshards the counter took (0 when absent). */
  reshards: number;
}

/** What the reset read at R: its parent's marks, and what the shards held then. */
export interface ResetRead {
  readUs: number;
  marks: ResetMarks;
  /** Σ of the shards' counts at R (what the reset subtracts). */
  total: number;
  /** A windowed counter's erased days: Σ over the shards of each day the reset takes back to 0, at R; null when not windowed. */
  days: DayCounts | null;
}

/** The parent when the write commits (read in its transaction). */
export interface ResetParent {
  exists: boolean;
  marks: ResetMarks;
  total: number;
  /** `rollup.readTime` (microseconds); null when absent. */
  coveredUntilUs: number | null;
  /** `rollup.days` of a windowed counter; null when it cannot be read. */
  days: DayCounts | null;
}

export type ResetPlan =
  | { kind: "gone" }
  /** Another reset, a reshard or a delete ran since the read: read again. */
  | { kind: "retry" }
  /** `rollup.days` is needed and cannot be read: reconcile --fix sums it again. */
  | { kind: "unreadable-days" }
  /**
   * The parent's fields: `total`; `rollup.readTime` = R (`covers: "read"`) or as it is (`"kept"`); and,
   * windowed, `rollup.days`.
   */
  | { kind: "commit"; total: number; covers: "read" | "kept"; days: DayCounts | null };

/** What the reset writes onto `parent` after reading `read` (see the header). */
export function resetPlan(read: ResetRead, parent: ResetParent): ResetPlan {
  if (!parent.exists) return { kind: "gone" };
  const { marks } = parent;
  if (marks.createdUs !== read.marks.createdUs || marks.resetUs !== read.marks.resetUs || marks.reshards !== read.marks.reshards) return { kind: "retry" };
  const covered = parent.coveredUntilUs;
  if (covered === null || covered <= read.readUs) return { kind: "commit", total: 0, covers: "read", days: read.days === null ? null : {} };
  if (read.days === null) return { kind: "commit", total: parent.total - read.total, covers: "kept", days: null };
  if (parent.days === null) return { kind: "unreadable-days" };
  const firstOpen = dayOf(Math.floor(read.readUs / 1000) - DAY_CLOSES_AFTER_MS);
  const days: DayCounts = {};
  for (const day of new Set([...Object.keys(parent.days), ...Object.keys(read.days)])) {
    const count = (parent.days[day] ?? 0) - (read.days[day] ?? 0);
    if (day >= firstOpen && count !== 0) days[day] = count;
  }
  return { kind: "commit", total: parent.total - read.total, covers: "kept", days };
}

/** The days a reset erases on a shard, around the resetting clock's day: the KEPT_DAYS ending with it, and the day after. */
export function erasedDays(today: string): { from: string; to: string } {
  return { from: addDays(today, 1 - KEPT_DAYS), to: addDays(today, 1) };
}
