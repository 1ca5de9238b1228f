// docs/development.md's "Layout" section is a newcomer's map of the repository: a table whose first column
// is a backticked path, a folder (ending in "/") or a file. Every path it lists must exist, every folder
// directly in functions/src, client/src, cli/src and scripts must be on it, and so must every product file
// under them (tests aside): as a row of its own, or named in the text of its folder's row or of a row of a
// file beside it ("`claim.ts` | the claim; `lead.ts` the leading edge"), or, deeper, under a folder that
// the row of a folder above names ("workloads/"). So the map cannot fall behind a move or a new file.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import { REPO_ROOT } from "../lib/firebase-cli";

/** The roots whose folders and files must all be on the map. */
const ROOTS = ["functions/src", "client/src", "cli/src", "scripts"];

/** Folders of no product file: tests (with their fixtures and helpers) and installed packages. */
const NOT_PRODUCT = new Set(["test", "node_modules"]);

interface Row {
  /** The first column: a path from the repository's root; a folder ends in "/". */
  path: string;
  /** The second column. */
  text: string;
}

/** The rows of the Layout section's table, in order. */
function layoutRows(markdown: string): Row[] {
  const start = markdown.indexOf("\n## Layout\n");
  if (start === -1) throw new Error('no "## Layout" section');
  const next = markdown.indexOf("\n## ", start + 1);
  const section = markdown.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/^\| `([^`]+)` \| (.*) \|$/gm)].map((m) => ({ path: m[1]!, text: m[2]! }));
}

/** Whether `text` names `name` (a file's or a folder's name, or a path) as a word of its own. */
function names(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\w./-])${escaped}(?![\\w-]|\\.\\w)`).test(text);
}

/** Whether a product file is on the map (see the header). */
function isMapped(file: string, rows: readonly Row[]): boolean {
  const folder = `${posix.dirname(file)}/`;
  const name = posix.basename(file);
  return rows.some(({ path, text }) => {
    if (path === file) return true;
    if (path === folder || (!path.endsWith("/") && `${posix.dirname(path)}/` === folder)) return names(text, name);
    // A folder row above the file's folder that names the path below it: `scripts/bench/` naming `workloads/`.
    if (!path.endsWith("/") || !file.startsWith(path)) return false;
    const below = file.slice(path.length).split("/");
    return below.slice(0, -1).some((_, i) => names(text, `${below.slice(0, i + 1).join("/")}/`));
  });
}

/** Every product file under `root`, as a path from the repository's root. */
function productFiles(root: string): string[] {
  return readdirSync(join(REPO_ROOT, root), { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory() && NOT_PRODUCT.has(entry.name)) return [];
    const path = `${root}/${entry.name}`;
    return entry.isDirectory() ? productFiles(path) : [path];
  });
}

const ROWS = layoutRows(readFileSync(join(REPO_ROOT, "docs", "development.md"), "utf8"));
const PATHS = ROWS.map((row) => row.path);

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

  it("lists every product file, or names it in its folder's row or a row beside it", () => {
    const files = ROOTS.flatMap(productFiles);
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((file) => !isMapped(file, ROWS))).toEqual([]);
  });
});

describe("layoutRows", () => {
  it("reads the Layout table's rows only, up to the next section", () => {
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
    expect(layoutRows(markdown)).toEqual([
      { path: "a/b.ts", text: "a file, with `c/d.ts` in its text" },
      { path: "a/", text: "a folder" },
    ]);
  });
});

describe("isMapped", () => {
  const rows: Row[] = [
    { path: "src/", text: "the sources: `main.ts` the entry, tools/ the tools" },
    { path: "src/claim.ts", text: "the claim; `lead.ts` the leading edge" },
    { path: "src/deep/", text: "deeper" },
  ];

  it("finds a file listed, or named by its folder's row, a row beside it, or a folder row above it", () => {
    expect(["src/claim.ts", "src/main.ts", "src/lead.ts", "src/tools/a.ts", "src/tools/x/b.ts"].filter((file) => !isMapped(file, rows))).toEqual([]);
  });

  it("misses a file named nowhere, named only as part of another name, or only in another folder's rows", () => {
    expect(["src/other.ts", "src/main", "src/deep/main.ts", "src/lead.tsx", "src/read.ts"].filter((file) => isMapped(file, rows))).toEqual([]);
  });
});
