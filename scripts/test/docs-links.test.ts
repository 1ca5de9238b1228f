// The README is an entrance and the details live in docs/: every relative link between them (and to the
// code they cite) must resolve, down to the heading a #fragment names.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anchorsOf, brokenLinks, headingSlug, linksIn } from "../lib/doc-links";
import { REPO_ROOT } from "../lib/firebase-cli";

describe("the repository's Markdown links", () => {
  it("all resolve: files exist and every #fragment names a heading of its file", () => {
    expect(brokenLinks(REPO_ROOT)).toEqual([]);
  });
});

describe("the entrances", () => {
  it("stay short: README.md and docs/app.md are at most 400 lines each (details live in pages of their own)", () => {
    const lines = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8").split("\n").length - 1;
    expect({ readme: lines("README.md") <= 400, app: lines("docs/app.md") <= 400 }).toEqual({ readme: true, app: true });
  });
});

describe("brokenLinks", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "doc-links-"));
    mkdirSync(join(root, "docs"));
    writeFileSync(join(root, "docs", "api.md"), "# API\n\n## The coverage rule\n\ntext\n");
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("reports a missing file and a missing heading, with file and line, and accepts good links", () => {
    writeFileSync(
      join(root, "README.md"),
      [
        "# Title",
        "[ok](docs/api.md) [ok too](docs/api.md#the-coverage-rule) [web](https://example.com/x)",
        "[gone](docs/gone.md)",
        "[no heading](docs/api.md#no-such-heading)",
        "```",
        "[inside a fence](nowhere.md)",
        "```",
        "`[inside code](nowhere.md)` [self](#title)",
      ].join("\n"),
    );
    expect(brokenLinks(root)).toEqual([
      "README.md:3: docs/gone.md (docs/gone.md does not exist)",
      "README.md:4: docs/api.md#no-such-heading (docs/api.md has no heading #no-such-heading)",
    ]);
  });

  it("resolves links from docs/ relative to the page", () => {
    writeFileSync(join(root, "README.md"), "# R\n");
    writeFileSync(join(root, "docs", "app.md"), "[back](../README.md) [api](api.md#api) [bad](../docs/app.md#nope)\n");
    expect(brokenLinks(root)).toEqual(["docs/app.md:1: ../docs/app.md#nope (../docs/app.md has no heading #nope)"]);
  });
});

describe("headings and links", () => {
  it("slugs headings the way GitHub does", () => {
    expect(headingSlug("`resetCounter` (admin)")).toBe("resetcounter-admin");
    expect(headingSlug("Before the first deploy: `npm run preflight`")).toBe("before-the-first-deploy-npm-run-preflight");
    expect(headingSlug("Firestore rules ([`firestore.rules`](../firestore.rules))")).toBe("firestore-rules-firestorerules");
    expect([...anchorsOf("# A\n## A\n```\n# not a heading\n```\n")]).toEqual(["a", "a-1"]);
  });

  it("finds a link whose text wraps onto the next line, or whose target starts there, at the line of its [", () => {
    const markdown = ["intro [a link whose", "text wraps](wrapped.md) and [another](", "next-line.md)", "", "[not a link]", "", "(paragraph.md)"].join("\n");
    expect(linksIn(markdown, "x.md").map((l) => `${l.line} ${l.target}`)).toEqual(["1 wrapped.md", "2 next-line.md"]);
  });

  it("finds image links and links with titles", () => {
    expect(linksIn('![plot](bench.png) [t](a.md "title")', "x.md").map((l) => l.target)).toEqual(["bench.png", "a.md"]);
  });
});
