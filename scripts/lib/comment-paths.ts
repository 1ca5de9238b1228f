// File paths that comments name: every one must exist, so a reader who follows a comment finds the file it
// means, and a move that forgets a comment fails a test (scripts/test/comment-paths.test.ts, which shows
// examples of each rule). A path is a word of a comment with a `/` and a file extension of the repository's.
// It names a file relative to the repository's root, to the commenting file's folder or to any folder above
// that; a test's comment may also name its package's sources from their src/ folder, and any comment a
// firebase-tools module from that package's lib/. A path after a `:` is in another repository. Pure
// parsing plus file reads.
import { existsSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";

export interface CommentPath {
  /** The file the comment is in, from the repository's root. */
  file: string;
  line: number;
  path: string;
}

/** The extensions of the files a comment can name. */
const EXTENSIONS = ["ts", "mts", "cts", "tsx", "js", "mjs", "cjs", "json", "md", "rules", "env", "sh", "png", "jar", "yml", "yaml"];
const PATH = new RegExp(String.raw`(?<![\w./@{}:-])((?:\.{1,2}/)*[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)+\.(?:${EXTENSIONS.join("|")}))(?![\w/-])`, "g");
/** What a build or an install writes: named by comments, never in a clean checkout. */
const GENERATED = /(^|\/)(lib|dist|node_modules|\.cache|bench-results|coverage)\//;
/** A placeholder for the reader's own file (`path/to/firestore.rules`). */
const PLACEHOLDER = /^(path\/to|PATH\/TO)\//;
/** Where firebase-tools keeps the modules comments cite (what cli/src/lib/firebase-tools-internals.ts loads). */
const FIREBASE_TOOLS_LIB = "node_modules/firebase-tools/lib";

/** The comments of a source file: `//` to the line's end and `/* … *\/` blocks, with their line numbers. */
export function commentsIn(source: string): { line: number; text: string }[] {
  const comments: { line: number; text: string }[] = [];
  const lines = source.split("\n");
  let inBlock = false;
  lines.forEach((text, index) => {
    let rest = text;
    let found = "";
    while (rest.length > 0) {
      if (inBlock) {
        const end = rest.indexOf("*/");
        found += ` ${end === -1 ? rest : rest.slice(0, end)}`;
        if (end === -1) break;
        inBlock = false;
        rest = rest.slice(end + 2);
        continue;
      }
      const code = withoutStrings(rest);
      const line = code.indexOf("//");
      const block = code.indexOf("/*");
      if (line === -1 && block === -1) break;
      if (block === -1 || (line !== -1 && line < block)) {
        found += ` ${rest.slice(line + 2)}`;
        break;
      }
      inBlock = true;
      rest = rest.slice(block + 2);
    }
    if (found.trim() !== "") comments.push({ line: index + 1, text: found });
  });
  return comments;
}

/** `text` with the insides of its string literals (and regex-looking URLs) blanked, so `"http://x"` holds no comment. */
function withoutStrings(text: string): string {
  return text.replace(/(["'`])(?:\\.|(?!\1).)*\1/g, (literal) => " ".repeat(literal.length)).replace(/[a-z]+:\/\//gi, (url) => " ".repeat(url.length));
}

/** The paths the comments of `source` name. */
export function pathsIn(source: string, file: string): CommentPath[] {
  return commentsIn(source).flatMap(({ line, text }) =>
    [...text.matchAll(PATH)].map((match) => ({ file, line, path: match[1]!.replace(/[.,;:)]+$/, "") })).filter(({ path }) => !path.includes("*")),
  );
}

/** Whether `path`, named in `file`, exists from the root, the file's folder or a folder above it. */
export function resolves(root: string, file: string, path: string): boolean {
  if (GENERATED.test(path) || PLACEHOLDER.test(path)) return true;
  const [pkg, tests] = file.split("/");
  if (tests === "test" && existsSync(join(root, pkg!, "src", path))) return true;
  if (path.endsWith(".js") && existsSync(join(root, FIREBASE_TOOLS_LIB, path))) return true;
  let folder = posix.dirname(file);
  for (;;) {
    if (existsSync(join(root, folder, path))) return true;
    if (folder === "." || folder === "") return false;
    folder = posix.dirname(folder);
  }
}

/** Every path a comment of `files` names that does not exist, as `file:line: path`. */
export function brokenCommentPaths(root: string, files: readonly string[]): string[] {
  return files.flatMap((file) =>
    pathsIn(readFileSync(join(root, file), "utf8"), file)
      .filter(({ path }) => !resolves(root, file, path))
      .map(({ line, path }) => `${file}:${line}: ${path}`),
  );
}
