// The marked block of firestore.rules that init puts into an app's own rules (docs/existing-app.md):
// found by its BEGIN and END comment lines, so that init can replace it and check-rules can tell whether
// an app's copy is missing, current, or older than this version's.
export const BLOCK_BEGIN = "// BEGIN firestore-exact-counter rules";
export const BLOCK_END = "// END firestore-exact-counter rules";

/** The block's lines, markers included, as they appear in `source`; undefined without both markers. */
export function findBlock(source: string): string[] | undefined {
  const lines = source.split("\n");
  const begin = lines.findIndex((line) => line.trim().startsWith(BLOCK_BEGIN));
  if (begin === -1) return undefined;
  const end = lines.findIndex((line, i) => i > begin && line.trim().startsWith(BLOCK_END));
  if (end === -1) return undefined;
  return lines.slice(begin, end + 1);
}

/** The block without indentation and blank lines: a pasted copy is re-indented to fit the app's file. */
function normalized(block: string[]): string {
  return block
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join("\n");
}

export type BlockStatus = "current" | "outdated" | "missing";

/** Whether `source` holds the block of `ours` (the shipped firestore.rules), and the same one. */
export function blockStatus(source: string, ours: string): BlockStatus {
  const theirs = findBlock(source);
  if (theirs === undefined) return "missing";
  const reference = findBlock(ours);
  if (reference === undefined) throw new Error(`the shipped firestore.rules has no ${BLOCK_BEGIN} … ${BLOCK_END} block`);
  return normalized(theirs) === normalized(reference) ? "current" : "outdated";
}
