// The React hooks run in React Native, which has no DOM: no identifier in client/src/react/ may name
// anything the DOM declares (document, window, navigator, localStorage, HTMLElement …). Checked with
// TypeScript's own binding: the hooks are compiled with the DOM library loaded, and every identifier
// that resolves to a declaration in lib.dom.d.ts is a failure, whatever the name (a local variable named
// like a DOM global resolves to the local).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import ts from "typescript";

const REACT_DIR = join(__dirname, "..", "src", "react");

/** Each identifier of `files` that resolves to something lib.dom.d.ts declares: "file:line name". */
function domUses(files: string[]): string[] {
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file)!;
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) {
        const declarations = checker.getSymbolAtLocation(node)?.declarations ?? [];
        if (declarations.some((declaration) => declaration.getSourceFile().fileName.endsWith("/lib.dom.d.ts"))) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push(`${basename(file)}:${line + 1} ${node.text}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe("the React hooks (client/src/react)", () => {
  const files = readdirSync(REACT_DIR)
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(REACT_DIR, name));

  it("use no DOM API, so that they run in React Native", () => {
    expect(files.map((file) => basename(file)).sort()).toEqual(["auth.ts", "context.ts", "index.ts", "store.ts", "use-counter.ts", "use-like.ts", "use-rank.ts"]);
    expect(domUses(files)).toEqual([]);
  });

  it("would see one: the check finds document, window and navigator in a file that uses them", () => {
    const dir = mkdtempSync(join(tmpdir(), "dom-probe-"));
    try {
      const probe = join(dir, "probe.ts");
      writeFileSync(probe, 'export const a = document.title;\nexport const b = window.innerWidth + navigator.language.length;\nconst window2 = 1;\nexport { window2 };\n');
      expect(domUses([probe])).toEqual(["probe.ts:1 document", "probe.ts:1 title", "probe.ts:2 window", "probe.ts:2 innerWidth", "probe.ts:2 navigator", "probe.ts:2 language"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
