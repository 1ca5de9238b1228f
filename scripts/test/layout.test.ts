// docs/development.md's "Layout" section is a newcomer's map of the repository: a table whose first column
// is a backticked path. Every path it lists must exist, and every folder directly in functions/src,
// client/src, cli/src and scripts must be on it, so the map cannot fall behind a move.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../lib/firebase-cli";

/** The roots whose folders must all be listed. */
const ROOTS = ["functions/src", "client/src", "cli/src", "scripts"];

/** The paths of the Layout section's table, in order; folders end in "/". */
function layoutPaths(markdown: string): string[] {
  const start = markdown.indexOf("\n## Layout\n");
  if (start === -1) throw new Error('no "## Layout" section');
  const next = markdown.indexOf("\n## ", start + 1);
  const section = markdown.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

const PATHS = layoutPaths(readFileSync(join(REPO_ROOT, "docs", "development.md"), "utf8"));

describe("docs/development.md's layout", () => {
  it("lists paths", () => {
    expect(PATHS.length).toBeGreaterThan(20);
  });

  it("lists only paths that exist: folders as folders, files as files", () => {
    const wrong = PATHS.filter((path) => {
      const full = join(REPO_ROOT, path);
      return !existsSync(full) || statSync(full).isDirectory() !== path.endsWith("/");
    });
    expect(wrong).toEqual([]);
  });

  it("lists every folder directly in functions/src, client/src, cli/src and scripts", () => {
    const folders = ROOTS.flatMap((root) =>
      readdirSync(join(REPO_ROOT, root), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${root}/${entry.name}/`),
    );
    expect(folders.filter((folder) => !PATHS.includes(folder))).toEqual([]);
  });
});

describe("layoutPaths", () => {
  it("reads the first column of the Layout table only, up to the next section", () => {
    const markdown = [
      "# Dev",
      "| `not/this.ts` | before the section |",
      "## Layout",
      "",
      "| path | what it holds |",
      "|---|---|",
      "| `a/b.ts` | a file, with `c/d.ts` in its text |",
      "| `a/` | a folder |",
      "## Next",
      "| `nor/this.ts` | after it |",
    ].join("\n");
    expect(layoutPaths(markdown)).toEqual(["a/b.ts", "a/"]);
  });
});
