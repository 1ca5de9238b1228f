// Names a typo most likely meant: an unknown field of a callable's data (`counterID`), an unknown option
// of the admin entry, patterns one character apart in the params (the preflight). Pure.

/** The edit distance (insertions, deletions, substitutions) between two sequences of tokens. */
export function editDistance(x: readonly string[], y: readonly string[]): number {
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length]!;
}

/** Shortest name that one name may hold inside another and still resemble it (`shards` in `numShards`). */
const MIN_CONTAINED = 3;
/** Most edits between a typo and the name it resembles. */
const MAX_EDITS = 2;
/** Longer names are taken for no typo at all (and cost nothing to compare: a caller chooses their length). */
const MAX_NAME = 64;

/**
 * The known name `name` most likely stands for, if any: the same name in another case (`counterID`), one
 * that holds it or that it holds (`shards`, `numShards`), or one at most two edits away (`delts`), case
 * ignored; the closest first, the earlier in `known` on a tie.
 */
export function resembles(name: string, known: readonly string[]): string | undefined {
  if (name.length > MAX_NAME) return undefined;
  const lower = name.toLowerCase();
  let best: { name: string; score: number } | undefined;
  for (const candidate of known) {
    const other = candidate.toLowerCase();
    const distance = editDistance([...lower], [...other]);
    const contained = Math.min(lower.length, other.length) >= MIN_CONTAINED && (other.includes(lower) || lower.includes(other));
    if (distance > MAX_EDITS && !contained) continue;
    // The same name in another case scores 0; a name held in another scores as if two edits away.
    const score = contained ? Math.min(distance, MAX_EDITS) : distance;
    if (best === undefined || score < best.score) best = { name: candidate, score };
  }
  return best?.name;
}
