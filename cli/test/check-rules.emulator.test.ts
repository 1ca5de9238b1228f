// `firestore-exact-counter check-rules`, run as a user runs it on three rules files made from the fixture
// app's rules: with our block added as init adds it (passes), the same plus a permissive catch-all (fails,
// naming the shards), and the app's rules without our block (fails). Plus --help, a file that does not
// compile, and an older block. (Bad arguments: cli-args.test.ts.)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { GUARANTEES } from "../src/lib/rules-guarantees";
import { requireEmulators } from "../../test/helpers/emulators";
import { FIXTURE_APP, withOurBlock, withCatchAll, withNarrowedCatchAll } from "../../test/helpers/existing-app";
import { runCommand, stopAll, type Run } from "../../test/helpers/run";

const DIR = join(REPO_ROOT, ".cache", "check-rules");
const APP_RULES = readFileSync(join(FIXTURE_APP, "firestore.rules"), "utf8");

function rulesFile(name: string, content: string): string {
  mkdirSync(DIR, { recursive: true });
  const path = join(mkdtempSync(join(DIR, `${name}-`)), "firestore.rules");
  writeFileSync(path, content);
  return path;
}

const checkRules = (...args: string[]): Promise<Run> => runCommand("check-rules", args);

/** The guarantee lines: "ok" or "FAIL" and the statement. */
function verdicts(run: Run): string[] {
  return run.stdout.split("\n").filter((line) => /^ {2}(ok {3}|FAIL )/.test(line)).map((line) => line.trim());
}

jest.setTimeout(120_000);

beforeAll(() => requireEmulators());

afterAll(() => {
  stopAll();
  rmSync(DIR, { recursive: true, force: true });
});

describe("check-rules", () => {
  it("passes an app's rules with our block in them, one ok line per guarantee", async () => {
    const run = await checkRules(rulesFile("merged", withOurBlock(APP_RULES)));
    expect(run.stderr).toBe("");
    expect(verdicts(run)).toEqual(GUARANTEES.map((g) => `ok   ${g.statement}`));
    expect(run.stdout).toContain("note the firestore-exact-counter block is there, the same as this version's");
    expect(run.stdout).toContain(`check-rules: all ${GUARANTEES.length} guarantees hold`);
    expect(run.code).toBe(0);
  });

  it("fails the same rules plus a permissive catch-all, naming the shards and everything else it opens", async () => {
    const run = await checkRules(rulesFile("catch-all", withCatchAll(withOurBlock(APP_RULES))));
    expect(run.code).toBe(1);
    expect(verdicts(run)).toEqual(
      expect.arrayContaining([
        "ok   anyone can get counters/{id} (its total), signed in or not",
        "FAIL clients cannot read counters/{id}/shards/{n} (broken for signed-in users, users with the admin claim)",
        "FAIL clients cannot write counters/{id}/shards/{n} (broken for signed-in users, users with the admin claim)",
        "FAIL clients cannot write counters/{id}/exactCounterRequests/{requestId} (broken for signed-in users, users with the admin claim)",
        "FAIL clients cannot write counters/{id}/exactCounterRollup/lease (broken for signed-in users, users with the admin claim)",
        "FAIL nobody can get another user's counters/{id}/members/{uid} (broken for signed-in users, users with the admin claim)",
      ]),
    );
    const summary = run.stdout.slice(run.stdout.indexOf("guarantees broken:"));
    expect(summary).toContain("\n  signed-in users can write counters/{id}/shards/{n}\n");
    expect(summary).toContain("\n  signed-in users can read counters/{id}/shards/{n}\n");
    expect(summary).toContain("\n  users with the admin claim can write counters/{id}/members/{uid}\n");
    // The catch-all requires sign-in: signed-out clients are still denied, and not named.
    expect(summary).not.toContain("signed-out clients");
  });

  it("passes once the catch-all leaves the counters out, as the guide shows", async () => {
    const run = await checkRules(rulesFile("narrowed", withNarrowedCatchAll(withOurBlock(APP_RULES))));
    expect(verdicts(run)).toEqual(GUARANTEES.map((g) => `ok   ${g.statement}`));
    expect(run.code).toBe(0);
  });

  it("fails an app's rules without our block: nobody can get a counter, and says the block is missing", async () => {
    const run = await checkRules(rulesFile("app-only", APP_RULES));
    expect(run.code).toBe(1);
    expect(verdicts(run)[0]).toBe(
      "FAIL anyone can get counters/{id} (its total), signed in or not (broken for signed-out clients, signed-in users, users with the admin claim)",
    );
    expect(verdicts(run)).toContain("FAIL signed-in users can get their own counters/{id}/members/{uid}, present or absent (broken for signed-in users, users with the admin claim)");
    expect(run.stdout).toContain("note no firestore-exact-counter block (BEGIN/END markers) in this file: firestore-exact-counter init adds it");
    expect(run.stdout).toContain("\n  signed-out clients cannot get counters/{id}\n");
  });

  it("says when the block is older than this version's, and still judges by the guarantees", async () => {
    const older = withOurBlock(APP_RULES).replace("// No listing or querying of the collection: counter ids are not enumerable.", "// (an older comment)");
    const run = await checkRules(rulesFile("older", older));
    expect(run.stdout).toContain("note the firestore-exact-counter block differs from this version's: firestore-exact-counter init puts the current one in");
    expect(run.code).toBe(0);
  });

  it("fails a file that does not compile, with the compiler's line and column", async () => {
    const run = await checkRules(rulesFile("broken", withOurBlock(APP_RULES).replace("allow get", "allow get(")));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/could not be evaluated: Error compiling rules: L\d+:\d+ /);
  });

  it("warns of each field MIRRORS keeps that the rules let a signed-in user write, as the post's owner; not of fields they protect", async () => {
    const example = readFileSync(join(REPO_ROOT, "examples", "rules", "mirrored-posts.rules"), "utf8");
    // The same posts without the conditions on the counts: an owner may create and edit any field.
    const lax = example.replace(/\n\s*&& (likeCount|views|views7d)\((request\.)?resource\.data\) == (null|\w+\(resource\.data\))/g, "");
    expect(lax).not.toContain("likeCount(request.resource.data)");
    const project = (rules: string) => {
      const file = rulesFile("mirrors", rules);
      const dir = dirname(file);
      writeFileSync(join(dir, "firebase.json"), JSON.stringify({ functions: [{ source: "counters", codebase: "counters" }] }));
      mkdirSync(join(dir, "counters"));
      writeFileSync(join(dir, "counters", ".env"), "MIRRORS=post-{id}-likes=posts/{id}:likeCount,post-{id}-views=posts/{id}:stats.views\n");
      return file;
    };
    const warned = await checkRules(project(lax));
    expect(warned.code).toBe(0);
    expect(warned.stdout).toContain(
      '  WARN signed-in users can write posts/{id}:likeCount, which MIRRORS rule "post-{id}-likes=posts/{id}:likeCount" keeps: they can create it with the field set and update the field (probed on posts/alice as user alice, the fields the rules read of a document set to alice)',
    );
    expect(warned.stdout).toContain("  WARN signed-in users can write posts/{id}:stats.views");
    const guarded = await checkRules(project(example));
    expect(guarded.stdout).not.toContain("WARN");
    expect(guarded.stdout).toContain("  note clients can write none of the 2 fields MIRRORS keeps");
    expect(guarded.code).toBe(0);
  });

  it("starts a Firestore emulator of its own when FIRESTORE_EMULATOR_HOST is not set", async () => {
    const env = { ...process.env };
    delete env.FIRESTORE_EMULATOR_HOST;
    const run = await runCommand("check-rules", [rulesFile("own-emulator", withOurBlock(APP_RULES))], { env });
    expect(run.stdout).toContain(`check-rules: all ${GUARANTEES.length} guarantees hold`);
    expect(run.code).toBe(0);
  });

  it("prints its usage and every guarantee with --help, and exits 0", async () => {
    const run = await checkRules("--help");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage: firestore-exact-counter check-rules <path/to/firestore.rules>");
    for (const g of GUARANTEES) expect(run.stdout).toContain(`  - ${g.statement}\n`);
  });
  // Bad arguments (no file, a missing or empty file, an unknown option): commands.test.ts.
});
