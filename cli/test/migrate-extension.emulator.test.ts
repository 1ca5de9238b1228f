// `npm run migrate-extension` run as an operator runs it (docs/from-the-extension.md): a line per document
// with a count and a summary, --dry-run writing nothing, a second run moving only what arrived since, the
// project from --project, GCLOUD_PROJECT or .firebaserc, and its exit codes: 2 for a mistake (one line, no
// stack, nothing read), 1 when a document's count could not move (listed), 3 when the emulator is down.
// Its own project, which no function of the emulator serves: only the command writes.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { initializeApp } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import { freePort } from "../src/lib/firestore-emulator";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { runNode, type Run } from "../../test/helpers/run";
import { requireEmulators } from "../../test/helpers/emulators";
import { shardSumIn, pathsUnderIn } from "../../test/helpers/documents";
import { appCollection, extensionValue, incrementFields, mainField, oldClient, shardDocuments, workerPartial } from "../../test/helpers/extension";
import { paramsEnv } from "../../functions/src/model/params";

jest.setTimeout(120_000);

const PROJECT = "demo-migrate-test";
const db = getFirestore(initializeApp({ projectId: PROJECT }, "migrate-extension-test"));

beforeAll(requireEmulators);

/** `npm run migrate-extension -- <args>` without npm, from any folder (tsx named by its path: a folder outside the repository has none). */
function migrateExtension(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<Run> {
  const tsx = pathToFileURL(join(REPO_ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
  return runNode(["--import", tsx, join(REPO_ROOT, "cli", "src", "main.ts"), "migrate-extension", ...args], options);
}

const ruleArgs = (c: string) => ["--document", `${c}/{id}`, "--field", "stats.visits", "--counter", `${c}-{id}`, "--project", PROJECT, "--quiet"];

describe("npm run migrate-extension", () => {
  it("prints what it would move with --dry-run and writes nothing, then moves it, then moves only what arrived since", async () => {
    const c = appCollection("cli");
    await db.doc(`${c}/a`).set({ title: "A", stats: { visits: 10 } });
    await incrementFields(db, `${c}/a`, "u1", { "stats.visits": 2, likes: 1 });
    await workerPartial(db, `${c}/a`, "ab", [{ "stats.visits": 3 }]);
    await oldClient(db, `${c}/b`, "stats.visits").incrementBy(4); // a document that exists only through its shard
    await db.doc(`${c}/c`).set({ title: "no count" });

    const dry = await migrateExtension([...ruleArgs(c), "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout.split("\n")).toEqual([
      `${c}/a -> ${c}-a  would move +15  (field 10, 1 shard, 1 partial)  counter would be created`,
      `${c}/b -> ${c}-b  would move +4  (field 0, 1 shard, 0 partials)  counter would be created  no such document: nothing to mirror into`,
      expect.stringMatching(/^2 documents with a count \(2 listed, \d+ _counter_shards_ documents\): would move \+19 in 2; fields taken 2 \(0 before\), 2 shard and 1 partial documents, 2 counters to create; 0 not moved \(dry run: nothing written\)$/),
      "",
    ]);
    expect(await pathsUnderIn(db, `${c}-a`)).toEqual([]);
    expect(await extensionValue(db, `${c}/a`, "stats.visits")).toBe(15);

    const run = await migrateExtension(ruleArgs(c));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${c}/a -> ${c}-a  moved +15  (field 10, 1 shard, 1 partial)  counter created\n`);
    expect(run.stdout).toMatch(/moved \+19 in 2; fields taken 2 \(0 before\), 2 shard and 1 partial documents, 2 counters created; 0 not moved\n$/);
    expect(await shardSumIn(db, `${c}-a`)).toBe(15);
    expect(await shardSumIn(db, `${c}-b`)).toBe(4);
    expect(await shardDocuments(db, `${c}/a`)).toEqual({ u1: { likes: 1 } });

    await oldClient(db, `${c}/a`, "stats.visits").incrementBy(5);
    const again = await migrateExtension(ruleArgs(c));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${c}/a -> ${c}-a  moved +5  (field taken before, 1 shard, 0 partials)\n`);
    // b exists only through shards, and they are gone: it has no count any more.
    expect(again.stdout).not.toContain(`${c}/b`);
    expect(await shardSumIn(db, `${c}-a`)).toBe(20);
  });

  it("exits 1 and lists each document whose count could not move, after moving the others", async () => {
    const c = appCollection("cli");
    await mainField(db, `${c}/ok`, "stats.visits", 1);
    await mainField(db, `${c}/frac`, "stats.visits", 2.5);
    await mainField(db, `${c}/not an id`, "stats.visits", 3);
    const run = await migrateExtension(ruleArgs(c));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`${c}/ok -> ${c}-ok  moved +1`);
    expect(run.stdout).toContain(`${c}/frac -> ${c}-frac  NOT MOVED: ${c}/frac: stats.visits holds 2.5, not an integer`);
    expect(run.stdout).toContain(`${c}/not an id  NOT MOVED: its id cannot be part of a counter id`);
    expect(run.stdout).toMatch(/; 2 not moved\n$/);
  });

  it("takes the project from GCLOUD_PROJECT, else from .firebaserc in the folder it runs in", async () => {
    const other = "demo-migrate-rc";
    const otherDb = getFirestore(initializeApp({ projectId: other }, `rc-${randomUUID()}`));
    const c = appCollection("cli");
    await mainField(otherDb, `${c}/x`, "n", 7);
    const args = ["--document", `${c}/{id}`, "--field", "n", "--counter", `${c}-{id}`, "--quiet"];
    const dir = mkdtempSync(join(tmpdir(), "migrate-rc-"));
    writeFileSync(join(dir, ".firebaserc"), JSON.stringify({ projects: { default: other } }));
    const env = { ...process.env, GCLOUD_PROJECT: "" };
    expect((await migrateExtension([...args, "--dry-run"], { env: { ...process.env, GCLOUD_PROJECT: other } })).stdout).toContain("would move +7");
    const run = await migrateExtension(args, { env, cwd: dir });
    expect(run.code).toBe(0);
    expect(await shardSumIn(otherDb, `${c}-x`)).toBe(7);
    const none = await migrateExtension(args, { env, cwd: tmpdir() });
    expect(none).toMatchObject({ code: 2, stdout: "" });
    expect(none.stderr).toContain("no project: give --project, set GCLOUD_PROJECT, or run it where .firebaserc names a default project");
  });

  it("refuses, with one line and exit 2, counters that DOCUMENT_COUNTERS names, writing nothing: a count of documents needs the backfill, not a migration", async () => {
    const c = appCollection("cli");
    await mainField(db, `${c}/p1`, "commentCount", 3);
    await oldClient(db, `${c}/p1`, "commentCount").incrementBy(1);
    const dir = mkdtempSync(join(tmpdir(), "migrate-documents-"));
    writeFileSync(join(dir, "firebase.json"), JSON.stringify({ functions: [{ source: "counters", codebase: "counters" }] }));
    mkdirSync(join(dir, "counters"));
    writeFileSync(join(dir, "counters", "package.json"), JSON.stringify({ name: "counters", main: "index.js", dependencies: { "@firestore-exact-counter/functions": "*" } }));
    const rule = `${c}/{post}/comments/{cm}=${c}-{post}-comments`;
    writeFileSync(join(dir, "counters", ".env"), paramsEnv().replace(/^DOCUMENT_COUNTERS=.*$/m, `DOCUMENT_COUNTERS=${rule}`));
    const run = await migrateExtension(["--document", `${c}/{id}`, "--field", "commentCount", "--counter", `${c}-{id}-comments`, "--project", PROJECT, "--dir", dir]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: "" });
    expect(run.stderr).toContain(`--counter ${c}-{id}-comments: these counters cannot take the extension's amounts: they count documents (DOCUMENT_COUNTERS rule 1 "${rule}")`);
    expect(run.stderr).toContain("the backfill counts the documents themselves");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(await pathsUnderIn(db, `${c}-p1-comments`)).toEqual([]);
    expect(await extensionValue(db, `${c}/p1`, "commentCount")).toBe(4);
  });

  it("answers --help with its usage and exit codes", async () => {
    const help = await migrateExtension(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: firestore-exact-counter migrate-extension --document <pattern> --field <field> --counter <id-pattern>");
    expect(help.stdout).toContain("Exit codes: 0");
  });

  it.each<[string, string[], string]>([
    ["a missing --counter", ["--document", "p/{id}", "--field", "n"], "--counter is required"],
    ["an unknown option", ["--document", "p/{id}", "--field", "n", "--counter", "p-{id}", "--fix"], "unknown option --fix"],
    ["a placeholder on one side only", ["--document", "p/{id}", "--field", "n", "--counter", "p-all"], "uses {id} in the document path but not in the counter-id pattern"],
    ["a document path with an odd number of segments", ["--document", "p/{id}/x", "--field", "n", "--counter", "p-{id}"], "with 3 segments"],
    ["a field that is not a dotted path of identifiers", ["--document", "p/{id}", "--field", "visit count", "--counter", "p-{id}"], "has a field path"],
    ["a concurrency out of range", ["--document", "p/{id}", "--field", "n", "--counter", "p-{id}", "--concurrency", "0"], "--concurrency takes a whole number from 1 to 100"],
  ])("refuses %s with one line and exit 2, reading nothing", async (_what, args, message) => {
    const run = await migrateExtension([...args, "--project", PROJECT]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain("(see firestore-exact-counter migrate-extension --help)");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("says to start the emulators first, with exit code 3, when the Firestore emulator does not answer", async () => {
    const port = await freePort();
    const run = await migrateExtension(ruleArgs("p"), { env: { ...process.env, FIRESTORE_EMULATOR_HOST: `127.0.0.1:${port}` } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("start the emulators first (firebase emulators:start");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
