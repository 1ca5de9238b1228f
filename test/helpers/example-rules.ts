// The example rules files of examples/rules/ (an app's rules with the counters' block), loaded into the
// Firestore emulator for a test file, and the two checks every such file gets: the counters' guarantees
// still hold in it (what npm run check-rules checks), and the docs show its app block as it is.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { initializeTestEnvironment, type RulesTestEnvironment } from "@firebase/rules-unit-testing";
import { setLogLevel } from "firebase/firestore";
import { checkGuarantees } from "../../cli/src/lib/rules-check";
import { firestoreHost, requireEmulators } from "./emulators";

const ROOT = join(__dirname, "..", "..");

/**
 * examples/rules/<file>, in a test environment of its own set up around the test file; `env()` is it.
 * `variant` turns the file's text into a variant the docs describe (the same rules with one line changed).
 */
export function exampleRules(file: string, variant: (rules: string) => string = (rules) => rules): { rules: string; env: () => RulesTestEnvironment } {
  const rules = variant(readFileSync(join(ROOT, "examples", "rules", file), "utf8"));
  let env: RulesTestEnvironment | undefined;
  beforeAll(async () => {
    await requireEmulators();
    setLogLevel("silent");
    const host = firestoreHost();
    const at = host.lastIndexOf(":");
    env = await initializeTestEnvironment({
      projectId: `demo-${file.replace(/\.rules$/, "")}-${randomUUID().slice(0, 8)}`,
      firestore: { rules, host: host.slice(0, at), port: Number(host.slice(at + 1)) },
    });
  });
  afterAll(async () => {
    await env?.cleanup();
  });
  return { rules, env: () => env! };
}

/** The merged file keeps the counters' guarantees, and `doc` (under docs/) shows the app block named `block` as the file has it. */
export function describeMergedFile(rules: string, doc: string, block: string): void {
  describe("the merged file", () => {
    it("keeps every guarantee of the counters (what npm run check-rules checks)", async () => {
      const results = await checkGuarantees(rules, firestoreHost());
      expect(results.flatMap((r) => r.breaches)).toEqual([]);
    });

    it(`is what docs/${doc} shows for it`, () => {
      const text = rules.slice(rules.indexOf(`    // BEGIN ${block}`), rules.indexOf(`    // END ${block}`));
      expect(text.length).toBeGreaterThan(100);
      expect(readFileSync(join(ROOT, "docs", doc), "utf8")).toContain(text);
    });
  });
}
