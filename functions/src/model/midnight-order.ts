// The order the midnight commit visits windowed counters in (rollup/midnight.ts; docs/windows.md, "The
// midnight commit at scale"). Its query returns counters in the order of `rollup.windowsMoveAt`, then of
// their document names. Were every value the midnight itself, a run would write some 1,300 parents a second
// in document-name order, each setting the same new value: every write of a moment on one narrow range of
// the counters' documents and of that field's index, the sequential-key hot spot Firestore warns about (a
// range takes about 500 writes a second until it has split, and traffic to it should grow by at most 50%
// every 5 minutes: its "500/50/5" rule). So each counter's value lies a few microseconds after the midnight,
// at a spread that a hash of its id and of that midnight decides (0 to 999 µs): the query then returns the
// counters in the order of that hash, whose neighbours are spread over the whole key space, and the values a
// run writes (the next midnight's spread, another hash) land spread over the index too. Nothing else
// changes: every reader of the field takes its millisecond (the spread is below one), and the query's bound
// takes the whole millisecond of its time, so it finds every counter it found before, each once. Pure.

/** The spread lies in [0, SPREAD_US) microseconds after the midnight. */
export const SPREAD_US = 1000;

/** FNV-1a, 32 bits: a cheap, stable hash of a string. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Where, after the midnight `moveAtMs`, counter `counterId`'s `rollup.windowsMoveAt` lies, in microseconds. */
export function moveAtSpreadUs(counterId: string, moveAtMs: number): number {
  return fnv1a(`${counterId}@${moveAtMs}`) % SPREAD_US;
}

/** `rollup.windowsMoveAt` as stored, in microseconds since the epoch: the midnight plus the counter's spread. */
export function storedMoveAtUs(counterId: string, moveAtMs: number): number {
  return moveAtMs * 1000 + moveAtSpreadUs(counterId, moveAtMs);
}

/** The midnight commit's bound at `atMs`: every stored value whose midnight is at or before `atMs`, whatever its spread. */
export function midnightBoundUs(atMs: number): number {
  return atMs * 1000 + SPREAD_US - 1;
}
