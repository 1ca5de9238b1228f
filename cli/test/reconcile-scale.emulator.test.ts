// `npm run reconcile` over a few thousand counters in the Firestore emulator, run as an operator runs it:
// bounded concurrency, progress on stderr with a count() total, resuming with --start-after, exit codes.
import { deleteApp, initializeApp } from "firebase-admin/app";
import { Timestamp, getFirestore } from "firebase-admin/firestore";
import { progressLine } from "../src/lib/progress";
import { requireEmulators } from "../../test/helpers/emulators";
import { runReconcile, type Run } from "../../test/helpers/reconcile-cli";
import { randomUUID } from "node:crypto";
import { runCommand } from "../../test/helpers/run";

// A project of its own: reconcile walks the whole `counters` collection.
const PROJECT = "demo-reconcile-scale";
const COUNTERS = 3000;
const DRIFTED = ["c-0100", "c-1200", "c-2000", "c-2999"];
const app = initializeApp({ projectId: PROJECT }, PROJECT);
const db = getFirestore(app);

const idOf = (i: number) => `c-${String(i).padStart(4, "0")}`;

function reportsOf(run: Run): { counterId: string; status: string; fixed: boolean }[] {
  return run.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { counterId: string; status: string; fixed: boolean });
}

jest.setTimeout(240_000);

afterAll(() => deleteApp(app));

beforeAll(async () => {
  await requireEmulators();
  await db.recursiveDelete(db.collection("counters"));
  // Counter i has one shard holding i % 7; its total says the same, except for the drifted ones. Their
  // rollup.readTime lies after every shard write, so a differing total is drift, not a rollup still due.
  const coveredUntil = Timestamp.fromMillis(Date.now() + 3_600_000);
  const writer = db.bulkWriter();
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < COUNTERS; i++) {
    const id = idOf(i);
    const count = i % 7;
    writes.push(
      writer.set(db.doc(`counters/${id}/shards/0`), { count }),
      writer.set(db.doc(`counters/${id}`), {
        numShards: 1,
        total: DRIFTED.includes(id) ? count + 3 : count,
        rollup: { commits: 1, readTime: coveredUntil },
      }),
    );
  }
  await writer.close();
  await Promise.all(writes);
});

describe("reconcile at scale", () => {
  it("checks every counter at bounded concurrency, in id order, with progress on stderr, and exits 1 on drift", async () => {
    const run = await runReconcile(PROJECT, ["--json", "--concurrency", "32"]);
    expect(run.code).toBe(1);
    const reports = reportsOf(run);
    expect(reports.map((r) => r.counterId)).toEqual(Array.from({ length: COUNTERS }, (_, i) => idOf(i)));
    expect(reports.filter((r) => r.status === "drift").map((r) => r.counterId)).toEqual(DRIFTED);
    expect(run.stderr).toContain(`${COUNTERS}/${COUNTERS} counters (100%)`);
    expect(run.stderr).not.toContain("resume with"); // it finished: nothing to resume
    expect(run.stderr).toContain(`${PROJECT}: ${COUNTERS - DRIFTED.length} ok, ${DRIFTED.length} drift`);
  });

  it("resumes after a counter id, fixes what it visits, and leaves the rest for the next run", async () => {
    const resumed = await runReconcile(PROJECT, ["--json", "--fix", "--start-after", "c-1499"]);
    expect(resumed.code).toBe(0);
    const visited = reportsOf(resumed);
    expect(visited).toHaveLength(1500);
    expect(visited[0]!.counterId).toBe("c-1500");
    expect(visited.filter((r) => r.fixed).map((r) => r.counterId)).toEqual(["c-2000", "c-2999"]);
    expect(resumed.stderr).toContain("1500/1500 counters (100%)");

    const again = await runReconcile(PROJECT, ["--quiet", ...DRIFTED.flatMap((id) => ["--counter", id])]);
    expect(again.code).toBe(1);
    expect(again.stdout.trim().split("\n").map((l) => l.split(/\s+/).slice(0, 2).join(" "))).toEqual(["drift c-0100", "drift c-1200"]);
    expect(again.stderr).toContain(`${PROJECT}: 2 drift, 2 ok`);
    expect(again.stderr).not.toContain("counters (");
  });

  it("prints where to resume only when interrupted, and exits 130", async () => {
    // Interrupt once a few hundred reports are out: the run is then well under way and far from done.
    const run = await runReconcile(PROJECT, ["--json", "--concurrency", "2"], (stdout) => (stdout.split("\n").length > 300 ? "SIGINT" : undefined));
    expect(run.code).toBe(130);
    const reports = reportsOf(run);
    expect(reports.length).toBeLessThan(COUNTERS);
    const lastReported = reports[reports.length - 1]!.counterId;
    expect(run.stderr).toMatch(new RegExp(`interrupted \\(SIGINT\\) after ${reports.length}/${COUNTERS} counters; resume with --start-after ${lastReported}\n`));
  });

  it("refuses a bad --concurrency with exit code 2", async () => {
    const run = await runReconcile(PROJECT, ["--concurrency", "0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--concurrency takes a whole number from 1 to 500");
  });
});

describe("progressLine", () => {
  it("says done of total, rate and time left", () => {
    expect(progressLine({ done: 1200, total: 5000, elapsedMs: 4000 })).toBe("1200/5000 counters (24%), 300.0/s, 13 s left");
    expect(progressLine({ done: 10, total: 100_000, elapsedMs: 1000 })).toBe("10/100000 counters (0%), 10.0/s, 2 h 46 min left");
    expect(progressLine({ done: 0, total: 0, elapsedMs: 0 })).toBe("0/0 counters (100%), 0.0/s, 0 s left");
  });
});

describe("reconcile --counter", () => {
  it("reports a --counter that does not exist as missing and exits 2, after checking the others", async () => {
    await requireEmulators();
    const run = await runCommand("reconcile", ["--counter", `nope-${randomUUID().slice(0, 8)}`]);
    expect(run.stdout).toMatch(/^missing {2}nope-\w+ {2}no such counter \(no counters\/nope-\w+ document\)$/m);
    expect(run.stderr).toMatch(/: 1 missing\n$/);
    expect(run.code).toBe(2);
  });
});
