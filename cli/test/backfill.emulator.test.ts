// `firestore-exact-counter backfill` (npm run backfill) as an operator runs it, against the Firestore
// emulator, in a project folder whose counters codebase sets DOCUMENT_COUNTERS: a dry run that writes
// nothing, progress on stderr, Ctrl-C with the position to resume from and a resumed run that ends exact, a
// second run that changes nothing, documents gone without their events taken out, one --counter, and the
// refusals (exit 2) and a stopped emulator (exit 3).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deleteApp, initializeApp } from "firebase-admin/app";
import { AggregateField, getFirestore } from "firebase-admin/firestore";
import { freePort } from "../src/lib/firestore-emulator";
import { requireEmulators } from "../../test/helpers/emulators";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { paramsEnv } from "../../functions/src/model/params";

jest.setTimeout(300_000);

// A project of its own: the backfill lists every counter its rules name.
const PROJECT = "demo-backfill-cli";
const POSTS = 20;
const PER_POST = 100;
const RULES = "posts/{post}/comments/{c}=post-{post}-comments,posts/{post}/comments/{c}[status==published]=post-{post}-published";
const app = initializeApp({ projectId: PROJECT }, PROJECT);
const db = getFirestore(app);
const dir = mkdtempSync(join(tmpdir(), "backfill-cli-"));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command in the project folder; `onStderr` sees stderr so far and may return a signal to send it (once). */
function backfill(args: string[], options: { onStderr?: (stderr: string) => NodeJS.Signals | undefined; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "cli", "src", "main.ts"), "backfill", "--dir", dir, "--project", PROJECT, ...args], {
      cwd: REPO_ROOT,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let signalled = false;
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
      const signal = signalled ? undefined : options.onStderr?.(stderr);
      if (signal !== undefined) {
        signalled = true;
        child.kill(signal);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function project(rules: string): void {
  writeFileSync(join(dir, "firebase.json"), JSON.stringify({ functions: [{ source: "counters", codebase: "counters" }] }));
  mkdirSync(join(dir, "counters"), { recursive: true });
  writeFileSync(join(dir, "counters", "package.json"), JSON.stringify({ name: "counters", main: "index.js", dependencies: { "@firestore-exact-counter/functions": "*" } }));
  writeFileSync(join(dir, "counters", ".env"), paramsEnv().replace(/^DOCUMENT_COUNTERS=.*$/m, `DOCUMENT_COUNTERS=${rules}`));
}

/**
 * Each post's comments and published comments, from the documents; and what the counters count: a counter kept
 * by recount (these rules' way, docs/documents.md) its total, any other its shards' sum (no rollupTotal runs here).
 */
async function truthAndCounts(): Promise<{ truth: number[][]; counts: number[][] }> {
  const truth: number[][] = [];
  const counts: number[][] = [];
  for (let p = 0; p < POSTS; p++) {
    const comments = db.collection(`posts/p${p}/comments`);
    truth.push([(await comments.count().get()).data().count, (await comments.where("status", "==", "published").count().get()).data().count]);
    const sum = async (id: string) => {
      const parent = await db.doc(`counters/${id}`).get();
      if (parent.get("kept") === "recount") return parent.get("total") as number;
      return (await db.collection(`counters/${id}/shards`).aggregate({ s: AggregateField.sum("count") }).get()).data().s;
    };
    counts.push([await sum(`post-p${p}-comments`), await sum(`post-p${p}-published`)]);
  }
  return { truth, counts };
}

beforeAll(async () => {
  await requireEmulators();
  await db.recursiveDelete(db.collection("counters"));
  await db.recursiveDelete(db.collection("posts"));
  project(RULES);
  const writer = db.bulkWriter();
  for (let i = 0; i < POSTS * PER_POST; i++) void writer.set(db.doc(`posts/p${Math.floor(i / PER_POST)}/comments/c${i}`), { status: i % 3 === 0 ? "published" : "draft" });
  await writer.close();
});

afterAll(async () => {
  await deleteApp(app);
  rmSync(dir, { recursive: true, force: true });
});

describe("backfill", () => {
  it("--dry-run says what it would count, per rule, and writes nothing", async () => {
    const run = await backfill(["--dry-run", "--quiet"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`rule 1 posts/{post}/comments/{c}=post-{post}-comments  seen ${POSTS * PER_POST}  would count ${POSTS * PER_POST}  would take out 0  +${POSTS * PER_POST}  ${POSTS} counters to create`);
    expect(run.stdout).toMatch(/rule 2 .*would count 667 /);
    expect(run.stdout).toMatch(/\(dry run: nothing written\)\n$/);
    expect(run.stderr).toBe("");
    expect((await db.collection("counters").count().get()).data().count).toBe(0);
  });

  it("shows progress on stderr; interrupted, prints where to resume, and a run resumed there ends exact", async () => {
    // The first page's progress line shows at once, with most of rule 1 and all of rule 2 still to do.
    const interrupted = await backfill(["--concurrency", "1"], { onStderr: (stderr) => (/backfill: rule 1, documents: \d+ seen/.test(stderr) ? "SIGINT" : undefined) });
    expect(interrupted.code).toBe(130);
    // The run's first line is its first page (300 documents), however quickly the check before it ended.
    expect(interrupted.stderr.split("\n").find((line) => line.startsWith("backfill: rule "))).toMatch(/^backfill: rule 1, documents: 300 seen /);
    // What it did goes to stderr (stdout is the report, and there is none), and no debug line of the functions' own anywhere.
    expect(interrupted.stdout).toBe("");
    expect(interrupted.stderr).not.toContain('"severity":"DEBUG"');
    const resume = /resume with --start-after '([^']+)'/.exec(interrupted.stderr);
    expect(interrupted.stderr).toMatch(/backfill: interrupted \(SIGINT\); every write so far is whole; resume with --start-after '\d:(documents|records):/);
    const resumed = await backfill(["--start-after", resume![1]!]);
    expect({ code: resumed.code, stderr: resumed.stderr }).toMatchObject({ code: 0 });
    const { truth, counts } = await truthAndCounts();
    expect(counts).toEqual(truth);
  });

  it("changes nothing on a second run", async () => {
    const run = await backfill(["--quiet"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^${PROJECT}: ${2 * POSTS * PER_POST} documents seen, counted 0, took out 0\\n$`, "m"));
  });

  it("takes out documents that went without their events, and counts one counter alone with --counter", async () => {
    await Promise.all(["c0", "c1", "c2", "c3"].map((c) => db.doc(`posts/p0/comments/${c}`).delete()));
    await db.doc("posts/p1/comments/extra").set({ status: "published" });
    const one = await backfill(["--counter", "post-p0-comments", "--quiet"]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^rule 1 \S+ {2}seen 96 {2}counted 0 {2}taken out 4 {2}-4$/m);
    const all = await backfill(["--quiet"]);
    expect(all.stdout).toMatch(/^rule 1 .*counted 1 {2}taken out 0 {2}\+1$/m);
    expect(all.stdout).toMatch(/^rule 2 .*counted 1 {2}taken out 2 {2}-1$/m); // c0 and c3 were published
    const { truth, counts } = await truthAndCounts();
    expect(counts).toEqual(truth);
  });

  it("is what reconcile --fix runs for a document counter that differs from count() of its documents", async () => {
    await db.doc("posts/p2/comments/missed").set({ status: "draft" }); // no event counted it
    const reconcile = (args: string[]) =>
      new Promise<Run>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "cli", "src", "main.ts"), "reconcile", "--dir", dir, "--project", PROJECT, "--counter", "post-p2-comments", ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
      });
    const before = await reconcile([]);
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/^drift +post-p2-comments .* documents=101 {2}document-drift=-1$/m);
    const fixed = await reconcile(["--fix"]);
    expect(fixed).toMatchObject({ code: 0, stdout: expect.stringMatching(/^drift +post-p2-comments {2}total=100 {2}sum=101 {2}drift=-1 .*documents=101 {2}backfilled: counted 1, took out 0 {2}FIXED$/m) as string });
    const { truth, counts } = await truthAndCounts();
    expect(counts).toEqual(truth);
  });

  it("refuses what looks like a typo in a rule, one line per rule and nothing written; --dry-run warns first; --force writes it", async () => {
    const before = await truthAndCounts();
    const comments = before.counts.reduce((n, c) => n + c[0]!, 0);
    const published = before.counts.reduce((n, c) => n + c[1]!, 0);
    const documents = before.truth.reduce((n, [c]) => n + c!, 0);
    const typos = "posts/{post}/coments/{c}=post-{post}-comments,posts/{post}/comments/{c}[state==published]=post-{post}-published";
    const warnings = [
      `rule 1 "posts/{post}/coments/{c}=post-{post}-comments" finds no document at all (no collection coments holds one) and would take out ${comments} of the ${comments} its counters count: a typo in its document path?`,
      `rule 2 "posts/{post}/comments/{c}[state==published]=post-{post}-published" would take out ${published} of the ${published} its counters count (it saw ${documents} documents): ` +
        "none of them has the field state that its condition [state==published] reads: a typo in the rule?",
    ];
    project(typos);
    try {
      const refused = await backfill(["--quiet"]);
      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: "" });
      expect(refused.stderr).toBe([...warnings.map((w) => `backfill: refused, nothing written: ${w}`), "backfill: if that is what you mean, run it again with --force", ""].join("\n"));
      expect((await truthAndCounts()).counts).toEqual(before.counts);
      const dry = await backfill(["--dry-run", "--quiet"]);
      expect(dry.code).toBe(1);
      expect(dry.stdout.split("\n").slice(0, 2)).toEqual(warnings.map((w) => `WARNING ${w}; a run without --force refuses it`));
      const forced = await backfill(["--force", "--quiet"]);
      expect(forced.code).toBe(0);
      expect(forced.stdout).toMatch(new RegExp(`: ${documents} documents seen, counted 0, took out ${comments + published}\n$`));
      expect((await truthAndCounts()).counts.flat().every((n) => n === 0)).toBe(true);
    } finally {
      project(RULES);
    }
    // The right rules count every document again: nothing in them looks like a typo.
    expect((await backfill(["--quiet"])).code).toBe(0);
    const { truth, counts } = await truthAndCounts();
    expect(counts).toEqual(truth);
  });

  it("counts the documents no counter id can stand for as not countable, per rule", async () => {
    const bad = db.doc("posts/bad post/comments/c1");
    await bad.set({ status: "published" });
    try {
      const run = await backfill(["--dry-run", "--quiet"]);
      expect(run.stdout).toMatch(/^rule 1 .* {2}not countable 1 \(a wildcard's value no counter id can hold\)$/m);
      expect(run.stdout).toMatch(/^rule 2 .* {2}not countable 1 \(a wildcard's value no counter id can hold\)$/m);
    } finally {
      await bad.delete();
    }
  });

  it("refuses, with exit 2 and one line, a --counter no rule names, a position it never printed, and an empty DOCUMENT_COUNTERS", async () => {
    const unnamed = await backfill(["--counter", "post-p1-likes"]);
    expect({ code: unnamed.code, stderr: unnamed.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^backfill: --counter post-p1-likes: no DOCUMENT_COUNTERS rule names it .*\n$/) as string });
    const position = await backfill(["--start-after", "somewhere"]);
    expect(position.code).toBe(2);
    project("");
    try {
      const empty = await backfill([]);
      expect({ code: empty.code, stderr: empty.stderr }).toEqual({ code: 2, stderr: expect.stringContaining("DOCUMENT_COUNTERS is empty") as string });
      project("posts/{post}=post-{post}");
      const bad = await backfill([]);
      expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('DOCUMENT_COUNTERS: rule 1 "posts/{post}=post-{post}"') as string });
    } finally {
      project(RULES);
    }
  });

  it("says to start the emulators first, with exit code 3, when the Firestore emulator does not answer", async () => {
    const run = await backfill([], { env: { ...process.env, FIRESTORE_EMULATOR_HOST: `127.0.0.1:${await freePort()}` } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("start the emulators first");
  });
});
