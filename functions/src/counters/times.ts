// The Firestore Timestamps the writes of counters need: one from microseconds (a read time, a version), and
// a windowed counter's `rollup.windowsMoveAt` as stored, its midnight plus the spread that orders the midnight
// commit over the key space (model/midnight-order.ts). Written by the rollup's commits and the midnight commit
// (rollup/firestore-parent.ts) and by reset (reset.ts), so both store the same value.
import { Timestamp } from "firebase-admin/firestore";
import { storedMoveAtUs } from "../model/midnight-order";

export function timestampOfMicros(us: number): Timestamp {
  const seconds = Math.floor(us / 1_000_000);
  return new Timestamp(seconds, (us - seconds * 1_000_000) * 1000);
}

/** `rollup.windowsMoveAt` as stored: the midnight `moveAtMs` plus the counter's spread; null when the windows do not move. */
export function moveAtTimestamp(counterId: string, moveAtMs: number | null): Timestamp | null {
  return moveAtMs === null ? null : timestampOfMicros(storedMoveAtUs(counterId, moveAtMs));
}
