// Relative links in the repository's Markdown (README.md, docs/, examples/): every one must name a file
// or folder that exists and, with a #fragment into a Markdown file, a heading of that file. Pure parsing
// plus file reads, so the docs test can run it on the repository and on small fixtures.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export interface Link {
  /** The Markdown file the link is in. */
  file: string;
  line: number;
  target: string;
}

/**
 * Links `[text](target)` and `![alt](target)` outside code fences and inline code, in order, each at the
 * line its `[` is on. A link's text may wrap onto the next lines of its paragraph, as prose wraps it, and
 * its `(target)` may start on the next line; a blank line ends the paragraph, and the link with it.
 */
export function linksIn(markdown: string, file: string): Link[] {
  let fenced = false;
  // The text outside fences and inline code, line for line (a fence's lines and code spans become blanks).
  const prose = markdown
    .split("\n")
    .map((text) => {
      if (/^\s*(```|~~~)/.test(text)) {
        fenced = !fenced;
        return "";
      }
      return fenced ? "" : text.replace(/`[^`]*`/g, (code) => " ".repeat(code.length));
    })
    .join("\n");
  const links: Link[] = [];
  const LINK = /!?\[(?:[^\]\n]|\n(?![ \t]*\n)|\](?!\())*\]\([ \t]*\n?[ \t]*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
  for (const match of prose.matchAll(LINK)) {
    links.push({ file, line: prose.slice(0, match.index).split("\n").length, target: match[1]! });
  }
  return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    // A link in a heading counts by its text only, as GitHub renders it.
    .replace(/!?\[((?:[^\]]|\](?!\())*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors a Markdown file offers: one per heading, repeated headings numbered as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const text of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading === null) continue;
    const slug = headingSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");
}

/** Why a link does not resolve, or null when it does. */
export function problemWith(link: Link): string | null {
  if (isExternal(link.target)) return null;
  const [pathPart = "", fragment] = link.target.split("#", 2);
  const path = decodeURIComponent(pathPart);
  const targetFile = path === "" ? link.file : resolve(dirname(link.file), path);
  if (!existsSync(targetFile)) return `${path} does not exist`;
  if (fragment === undefined || fragment === "") return null;
  if (statSync(targetFile).isDirectory() || !targetFile.endsWith(".md")) return null;
  if (!anchorsOf(readFileSync(targetFile, "utf8")).has(fragment.toLowerCase())) {
    return `${path === "" ? "this file" : path} has no heading #${fragment}`;
  }
  return null;
}

/** README.md and every Markdown file under docs/ and examples/ (node_modules and build output skipped). */
export function markdownFiles(root: string): string[] {
  const files = [join(root, "README.md")];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk(join(root, "docs"));
  walk(join(root, "examples"));
  return files.filter((file) => existsSync(file));
}

/** Every broken relative link under `root`, as "file:line: target (why)". */
export function brokenLinks(root: string): string[] {
  const broken: string[] = [];
  for (const file of markdownFiles(root)) {
    for (const link of linksIn(readFileSync(file, "utf8"), file)) {
      const problem = problemWith(link);
      if (problem !== null) broken.push(`${relative(root, file)}:${link.line}: ${link.target} (${problem})`);
    }
  }
  return broken;
}
