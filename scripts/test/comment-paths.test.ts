// Every file path a comment names exists (scripts/lib/comment-paths.ts), in every source file of the
// repository, so a comment never sends a reader to a file that has moved.
import { execFileSync } from "node:child_process";
import { brokenCommentPaths, pathsIn, resolves } from "../lib/comment-paths";
import { REPO_ROOT } from "../lib/firebase-cli";

const SOURCES = /\.(ts|mts|cts|tsx|js|mjs|cjs|rules)$/;

function trackedSources(): string[] {
  const files = execFileSync("git", ["ls-files"], { cwd: REPO_ROOT, encoding: "utf8" }).split("\n");
  return files.filter((file) => SOURCES.test(file));
}

describe("file paths in comments", () => {
  it("all exist: from the repository's root, the file's folder or a folder above it", () => {
    expect(brokenCommentPaths(REPO_ROOT, trackedSources())).toEqual([]);
  });

  it("finds the paths of line and block comments, not of strings or URLs", () => {
    const source = [
      '// config/read.ts reads them; see docs/app.md, "Maintenance".',
      'const url = "http://example.com/a/b.ts"; // and functions/src/index.ts',
      "/* a block naming cli/src/main.ts",
      "   and scripts/lib/cli.ts */ const x = 1;",
      'import { y } from "./not/a-comment.ts";',
    ].join("\n");
    expect(pathsIn(source, "functions/src/entry/x.ts").map(({ line, path }) => `${line}:${path}`)).toEqual([
      "1:config/read.ts",
      "1:docs/app.md",
      "2:functions/src/index.ts",
      "3:cli/src/main.ts",
      "4:scripts/lib/cli.ts",
    ]);
  });

  it("resolves a path from the file's folder and the folders above it, and never a moved one", () => {
    expect(resolves(REPO_ROOT, "functions/src/entry/createCounter.ts", "config/read.ts")).toBe(true);
    expect(resolves(REPO_ROOT, "functions/src/entry/createCounter.ts", "docs/app.md")).toBe(true);
    expect(resolves(REPO_ROOT, "functions/src/entry/createCounter.ts", "config/env.ts")).toBe(false);
    expect(resolves(REPO_ROOT, "scripts/bench/run.ts", "functions/lib/index.js")).toBe(true);
    // A test names its package's sources from src/; any comment a firebase-tools module from its lib/.
    expect(resolves(REPO_ROOT, "functions/test/kinds.test.ts", "model/kinds.ts")).toBe(true);
    expect(resolves(REPO_ROOT, "cli/src/commands/init.ts", "deploy/lifecycleHooks.js")).toBe(true);
    expect(pathsIn("// see firestore-counter:functions/src/worker.ts", "test/helpers/x.ts")).toEqual([]);
  });
});
