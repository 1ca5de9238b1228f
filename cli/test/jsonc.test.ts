// JSON with comments (cli/src/lib/jsonc.ts): read exactly as firebase-tools' own loadCJSON reads the index
// file (the repository's pinned 14.27.0, run on the same texts from files), and the edit that appends to
// top-level arrays keeping every comment and every other byte, on the index file a stock `firebase init`
// writes (firebase-tools' own template) among others.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { appendToTopLevelArrays, readJsonc } from "../src/lib/jsonc";

const tools = createRequire(join(REPO_ROOT, "node_modules", "firebase-tools", "package.json"));
const { loadCJSON } = tools("./lib/loadCJSON") as { loadCJSON: (path: string) => unknown };
/** The index file `firebase init firestore` writes (lib/init/features/firestore/indexes.js reads this template). */
const STOCK = readFileSync(join(REPO_ROOT, "node_modules", "firebase-tools", "templates", "init", "firestore", "firestore.indexes.json"), "utf8");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "jsonc-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What firebase-tools reads from a file holding `text`: its value, or "refused". */
function firebaseToolsReads(text: string): unknown {
  const path = join(dir, "firestore.indexes.json");
  writeFileSync(path, text);
  try {
    return { value: loadCJSON(path) };
  } catch {
    return "refused";
  }
}

const ours = (text: string): unknown => {
  const read = readJsonc(text);
  return "value" in read ? { value: read.value } : "refused";
};

const TEXTS: Record<string, string> = {
  "the stock template": STOCK,
  "the repository's index file": readFileSync(join(REPO_ROOT, "firestore.indexes.json"), "utf8"),
  "block comments, one over several lines": '/* the app\'s\n indexes */ { "indexes": [ /* none */ ], "fieldOverrides": [] }',
  "a comment that holds quotes and slashes": '{\n  // "quoted" // and /* not a block\n  "indexes": []\n}',
  "strings that hold // and /*": '{ "indexes": [], "note": "https://example.com/* not a comment */" }',
  "an escaped quote in a string, a comment after it": '{ "a": "say \\"hi\\"" // c\n}',
  "a byte order mark, and one inside a string": '\ufeff{ "a": "x\ufeffy" }',
  "a comment between two digits (removed, not blanked)": '{ "a": 1/**/2 }',
  "a string ending in a backslash, a comment after it": '{ "a": "x\\\\" // c\n}',
  "a trailing comma in an array": '{ "indexes": [ {}, ], "fieldOverrides": [] }',
  "a trailing comma in the object": '{\n  "indexes": [],\n  "fieldOverrides": [],\n}',
  "an unclosed block comment": '{ "indexes": [] /* }',
  "single quotes": "{ 'indexes': [] }",
  "nothing at all": "",
  "a comment alone": "// nothing\n",
  "an unterminated string": '{ "indexes": [], "x": "abc',
};

describe("readJsonc", () => {
  it.each(Object.keys(TEXTS))("reads %s as firebase-tools 14.27.0 does (the same value, or a refusal)", (name) => {
    expect(ours(TEXTS[name]!)).toEqual(firebaseToolsReads(TEXTS[name]!));
  });

  it("takes the stock template with its comments: empty indexes and overrides", () => {
    expect(readJsonc(STOCK)).toEqual({ value: { indexes: [], fieldOverrides: [] } });
    expect(STOCK).toMatch(/^\s*\/\/ Example/m);
  });

  it.each([
    ["a trailing comma in an array", 1, 20, /^Unexpected token '\]'$/],
    ["a trailing comma in the object", 4, 1, /^Expected double-quoted property name$/],
    ["single quotes", 1, 3, /^(Expected property name or '}'|Unexpected token ')/],
    ["an unterminated string", 1, 27, /^Unterminated string/],
    // cjson reads the string on past its end, so the comment stays and JSON.parse stops at it.
    ["a string ending in a backslash, a comment after it", 1, 14, /^Expected ',' or '}' after property value$/],
  ])("says where %s stops it, by line and column of the file as written", (name, line, column, reason) => {
    const read = readJsonc(TEXTS[name]!);
    expect(read).toMatchObject({ line, column });
    expect("error" in read && read.error).toMatch(reason);
  });

  it("places a mistake after comments that span lines on its line in the file", () => {
    const text = '{\n  /* one\n     two */\n  "indexes": [],\n  // three\n  "fieldOverrides": [] x\n}';
    expect(readJsonc(text)).toMatchObject({ line: 6, column: 24 });
  });
});

describe("appendToTopLevelArrays", () => {
  const index = { collectionGroup: "shards", queryScope: "COLLECTION", fields: [{ fieldPath: "count", order: "ASCENDING" }] };
  const override = { collectionGroup: "exactCounterRequests", fieldPath: "expireAt", ttl: true, indexes: [] };

  it("adds to the stock template's empty arrays, keeping every comment; firebase-tools reads the merged value", () => {
    const edited = appendToTopLevelArrays(STOCK, [
      ["indexes", [index]],
      ["fieldOverrides", [override]],
    ]);
    expect(firebaseToolsReads(edited)).toEqual({ value: { indexes: [index], fieldOverrides: [override] } });
    // Every comment line of the template, unchanged and in order.
    const comments = (text: string) => text.split("\n").filter((l) => l.trim().startsWith("//"));
    expect(comments(edited)).toEqual(comments(STOCK));
    expect(edited.slice(0, STOCK.indexOf('"indexes"'))).toBe(STOCK.slice(0, STOCK.indexOf('"indexes"')));
    expect(edited).toContain('  "indexes": [\n    {\n      "collectionGroup": "shards",');
    expect(edited).toMatch(/\n {2}\],\n {2}"fieldOverrides": \[\n {4}\{/);
  });

  it("appends after the last entry, with a comment on its line kept on that line", () => {
    const text = '{\n  "indexes": [\n    { "collectionGroup": "posts" } // mine\n  ]\n}\n';
    const edited = appendToTopLevelArrays(text, [["indexes", [index]]]);
    const added = JSON.stringify(index, null, 2).replace(/\n/g, "\n    ");
    expect(edited).toBe(`{\n  "indexes": [\n    { "collectionGroup": "posts" }, // mine\n    ${added}\n  ]\n}\n`);
    expect(readJsonc(edited)).toEqual({ value: { indexes: [{ collectionGroup: "posts" }, index] } });
  });

  it("adds a key the file lacks as its last member, after a comment on the last member's line", () => {
    const text = '{\n\t"indexes": [] // none\n}';
    const edited = appendToTopLevelArrays(text, [["fieldOverrides", [override]]]);
    expect(edited.startsWith('{\n\t"indexes": [], // none\n\t"fieldOverrides": [\n\t\t{\n\t\t\t"collectionGroup"')).toBe(true);
    expect(readJsonc(edited)).toEqual({ value: { indexes: [], fieldOverrides: [override] } });
  });

  it("fills an empty object, and keeps comments inside an empty array after the new entries", () => {
    expect(readJsonc(appendToTopLevelArrays("{}", [["indexes", [index]]]))).toEqual({ value: { indexes: [index] } });
    const text = '{ "indexes": [\n    // none yet\n  ] }';
    const edited = appendToTopLevelArrays(text, [["indexes", [index]]]);
    expect(edited).toContain("// none yet");
    expect(readJsonc(edited)).toEqual({ value: { indexes: [index] } });
  });

  it("changes nothing when there is nothing to add", () => {
    expect(appendToTopLevelArrays(STOCK, [["indexes", []]])).toBe(STOCK);
  });
});
