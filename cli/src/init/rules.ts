// The app's rules file with the counters' block in it: the block (the marked lines of the shipped
// firestore.rules) goes first inside the app's `match /databases/{database}/documents { … }`, re-indented
// to fit, and every line of the app's stays; a block already there is replaced by the current one when it
// differs. A project without a rules file gets the shipped file, which holds only the block.
import { BLOCK_BEGIN, findBlock } from "../lib/rules-block";
import { shippedFile } from "../lib/package";
import { refuse } from "./firebase-json";

const DOCUMENTS = /^(\s*)match\s+\/databases\/\{\w+\}\/documents\s*\{\s*(\/\/.*)?$/;

/** The shipped block's lines, markers included. */
export function ourBlock(): string[] {
  const block = findBlock(shippedFile("firestore.rules"));
  if (block === undefined) throw new Error(`the shipped firestore.rules has no ${BLOCK_BEGIN} block`);
  return block;
}

/** `lines` re-indented so that their least indented line starts at `indent`. */
function indented(lines: string[], indent: string): string[] {
  const common = Math.min(...lines.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length));
  return lines.map((line) => (line.trim() === "" ? "" : indent + line.slice(common)));
}

/** The app's rules (`source`, or none) with the current block; `file` names it in a refusal. */
export function mergeRules(source: string | undefined, file: string): string {
  if (source === undefined || source.trim() === "") return shippedFile("firestore.rules");
  const lines = source.split("\n");
  const block = ourBlock();
  const begin = lines.findIndex((line) => line.trim().startsWith(BLOCK_BEGIN));
  if (begin !== -1) {
    const end = lines.findIndex((line, i) => i > begin && line.trim().startsWith("// END firestore-exact-counter rules"));
    if (end === -1) refuse(`${file} has the line "${BLOCK_BEGIN}" but no END line after it: restore the block's END marker (or remove the block), then run init again`);
    const indent = /^\s*/.exec(lines[begin]!)![0];
    const current = indented(block, indent);
    if (sameBlock(lines.slice(begin, end + 1), current)) return source;
    return [...lines.slice(0, begin), ...current, ...lines.slice(end + 1)].join("\n");
  }
  const at = lines.findIndex((line) => DOCUMENTS.test(line));
  if (at === -1) refuse(`${file} has no line "match /databases/{database}/documents {" to put the counters' block in: add the block by hand (docs/existing-app.md)`);
  const indent = `${DOCUMENTS.exec(lines[at]!)![1]!}  `;
  return [...lines.slice(0, at + 1), ...indented(block, indent), ...lines.slice(at + 1)].join("\n");
}

/** The same block whatever its indentation and blank lines (as check-rules compares them). */
function sameBlock(a: string[], b: string[]): boolean {
  const normal = (lines: string[]) => lines.map((l) => l.trim()).filter((l) => l !== "").join("\n");
  return normal(a) === normal(b);
}
