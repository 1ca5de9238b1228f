// The benchmark's results page (scripts/bench/page.ts), written from a made-up `--quick` run
// (test/helpers/bench-results.ts: a result for every workload, the rows, costs and targets the benchmark's own
// code makes of them). The page is what docs/benchmark.md links for every number, so it must carry the
// run's header and every table, and npm test's --quick run must never replace the committed copy. Also the
// judging of workload 10's targets, which run.ts fails the run on.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { linksIn } from "../lib/doc-links";
import { REPO_ROOT } from "../lib/firebase-cli";
import { parseOptions, RESULTS_PAGE } from "../bench/options";
import { writeResultsPage, type RenderedPlot } from "../bench/page";
import { allInRows } from "../bench/allin";
import { smallDollars } from "../bench/format";
import { machineLine } from "../bench/report";
import type { BenchResults } from "../bench/results";
import { FLAGS, ran, selected, targetsOf, WORKLOADS } from "../bench/workloads";
import { documents } from "../bench/workloads/documents";
import { HOT_PLOT_FILE } from "../bench/workloads/hot";
import { PLOT_FILE } from "../bench/workloads/sustained";
import { windowsTargets } from "../bench/workloads/windows";
import { benchResults, workloadResults } from "../../test/helpers/bench-results";

const W = workloadResults();
const RECORDED = benchResults(W);
/** The workloads' plots, as they declare them, each a few bytes of its own instead of a rendered PNG. */
const PLOTS: RenderedPlot[] = ran(RECORDED.workloads).flatMap(({ workload, result }) => {
  const plot = workload.plot?.(result, RECORDED);
  return plot === undefined ? [] : [{ file: plot.file, alt: plot.alt, png: Buffer.from(`the plot ${plot.file}`) }];
});

describe("the benchmark's results page", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "bench-page-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function write(results: BenchResults): string {
    const path = writeResultsPage(dir, results, PLOTS);
    expect(path).toBe(join(dir, RESULTS_PAGE));
    return readFileSync(path, "utf8");
  }

  it("writes the page and the plot beside it, with the run's date, machine and options in its header", () => {
    const page = write(RECORDED);
    expect(PLOTS.map((p) => p.file)).toEqual([PLOT_FILE, HOT_PLOT_FILE]);
    for (const plot of PLOTS) expect(readFileSync(join(dir, plot.file))).toEqual(plot.png);
    const header = page.slice(0, page.indexOf("Emulator delivery capacity"));
    expect(header).toContain("# Benchmark results");
    expect(header).toContain(RECORDED.startedAt);
    expect(header).toContain(machineLine(RECORDED.machine));
    expect(header).toContain(`${RECORDED.intervalMs} ms`);
    expect(page).toContain(`| \`--sustained-rate\` | ${RECORDED.options.sizes.sustainedRate} |`);
    expect(page).toContain(`| \`--delivery-concurrency\` | ${RECORDED.options.sizes.deliveryConcurrency} |`);
  });

  it("says in its header that a --quick run's numbers are a smoke test, and not for a full run", () => {
    expect(RECORDED.options.quick).toBe(true);
    const quickHeader = write(RECORDED).split("Emulator delivery capacity")[0]!;
    expect(quickHeader).toMatch(/\*\*A `--quick` run\*\*: smoke-test sizes/);
    const full = write({ ...RECORDED, options: { ...RECORDED.options, quick: false } });
    expect(full).not.toContain("--quick");
    expect(full).toContain("A full run");
  });

  it("holds every table of the run: capacity, one row per phase, deliveries, workloads 4 to 12, costs, targets", () => {
    const page = write(RECORDED);
    expect(page).toContain(`Emulator delivery capacity: ${RECORDED.capacity.eventsPerSecond.toFixed(0)} events/s`);
    for (const phase of RECORDED.phases) expect(page).toContain(`| ${phase.workload} | ${phase.rollup} | ${phase.delivery} | ${phase.counters} |`);
    for (const row of RECORDED.costs) expect(page).toContain(`| ${row.workload} | ${row.rollup} | ${row.delivery} | `);
    for (const path of W.endToEnd.paths) expect(page).toContain(`| ${path.path} | ${path.calls} |`);
    for (const target of RECORDED.targets) expect(page).toContain(`| ${target.target} | ${target.measured} |`);
    const n = (value: number) => value.toLocaleString("en-US");
    const delivered = RECORDED.phases.filter((p) => p.deliveries !== null);
    expect(delivered.length).toBeGreaterThan(0);
    for (const p of delivered) expect(page).toContain(`| ${p.workload} | ${p.rollup} | ${p.delivery} | ${n(p.events ?? p.increments)} | ${n(p.deliveries!.deliveries)} |`);
    expect(page).toMatch(/Workload 5, mirrors on/);
    expect(page).toMatch(/Workload 6, likes on unique counters/);
    expect(page).toMatch(/Workload 7, cold start/);
    expect(page).toMatch(/Workload 8, resets under load/);
    expect(page).toMatch(/Workload 9, a hot counter/);
    for (const run of W.hot.runs) expect(page).toContain(`| ${run.phase.workload} | ${run.rollup} | `);
    expect(page).toMatch(/Workload 10, windowed counters/);
    expect(page).toMatch(/^\| plain \| production-like \| /m);
    expect(page).toMatch(/^\| windowed \| production-like \| /m);
    expect(page).toMatch(/Per 1,000,000 increments on idle counters: plain \$[\d.]+, windowed \$[\d.]+: windows add/);
    expect(page).toMatch(/^\| naive \(plain\) \| production-like \| /m);
    expect(page).toMatch(/Workload 11, document counters against the usual ±1 trigger.* ours by recount \(rule benchDocPosts/);
    expect(page).toMatch(/^\| 11 documents \| ours, recount \| 4 \| 0 \| 40 \| 30 \| /m);
    expect(page).toMatch(/^\| 11 documents \| the usual ±1 trigger \| 4 \| 0 \| 40 \| 30 \| /m);
    expect(page).toMatch(/^\| 11 documents, records \| ours, records \(\+ rollupTotal\) \| 4 \| /m);
    for (const label of ["11 documents, calm", "11 documents, viral"]) for (const trigger of ["ours, recount", "the usual ±1 trigger"]) expect(page).toContain(`| ${label} | ${trigger} | 4 |`);
    expect(page).toMatch(/^\| 11 documents moving to records \| ours, recount → records \| 4 \| /m);
    expect(page).toContain("11 documents: 12 parent versions, 0 of them not the count of the documents at their rollup.readTime.");
    expect(page).toMatch(/The move \(RECOUNT_LIMIT 20 for its phase\): .* ended it \(kept "records"\) 22\.5 s after it began; 1 run\(s\), 0\.8 s running, 120 document reads/);
    expect(page).toContain("200 seen and 150 counted in 2.0 s: 100 documents/s");
    expect(page).toMatch(/Workload 11, per 1,000,000 counted changes .* all in: ours \$[\d.]+ .* the usual ±1 trigger \$[\d.]+: [\d.]+×/);
    expect(page).toContain("### Leaderboards (workload 12)");
    expect(page).toMatch(/^\| ours: the counter, the summary, one count\(\) in its bucket \| 2 \| 8 \/ 13 \| 3 \/ 3 \|$/m);
    expect(page).toMatch(/^\| 1,000,000 \| 3 \| 500 \|$/m);
    expect(page).toContain("| 12 leaderboard, the board's rollup | ours | emulator | ");
    // The all-in table: a row per counted phase (workload 4's calls are not counted), with the ratio to its naive row.
    expect(page).toContain("All in, per 1,000,000 increments");
    for (const row of allInRows(RECORDED.costs)) expect(page).toContain(`| ${row.workload} | ${row.rollup} | ${row.delivery} | `);
    expect(allInRows(RECORDED.costs).map((r) => r.workload)).not.toContain("4 end to end");
    expect(page).toMatch(/^\| 0 sparse \| ours \| emulator \| [\d,]+ \| 1,000,000 \| \$[\d.]+ \| \$[\d.]+ \| \$[\d.]+ \| [\d.]+× \| /m);
    const m = W.windows.midnight;
    expect(page).toContain(`| after midnight, ${m.counters.toLocaleString("en-US")} counters | ${m.first.found.toLocaleString("en-US")} | committed `);
    expect(page).toContain("| the same, per 1,000 counters | 1,000 | (the row above, scaled) |");
    expect(page).toContain("| again right after (nothing to move) | 0 | – | 1 | 0 | 0 |");
  });

  it("judges workload 10: drift and windows exact, every counter moved at midnight, nothing found right after", () => {
    const w = W.windows;
    expect(windowsTargets(w).map((t) => t.met)).toEqual([true, true, true]);
    const missed = { ...w, midnight: { ...w.midnight, moved: w.midnight.counters - 1 } };
    expect(windowsTargets(missed).map((t) => t.met)).toEqual([true, false, true]);
    const foundAgain = { ...w, midnight: { ...w.midnight, second: { ...w.midnight.second, found: 1, ops: { ...w.midnight.second.ops, reads: 1, writes: 1 } } } };
    expect(windowsTargets(foundAgain).map((t) => t.met)).toEqual([true, true, false]);
    expect(windowsTargets({ ...w, windowsDrift: 1 })[0]!.met).toBe(false);
    expect(windowsTargets({ ...w, phases: { ...w.phases, windowed: { ...w.phases.windowed, drift: 1 } } })[0]!.met).toBe(false);
  });

  it("judges workload 11 and its calm, viral and move loads: our drift 0 and every recounted version exact, the usual trigger's drift as its duplicates, lag p99, the calm lag against the usual trigger's, the viral parent writes, the move ended, the backfill exact and idempotent, the cost ratios; fails the run on our drift, a version off, a move not ended or the backfill", () => {
    const d = W.documents;
    const judge = (result: typeof d) => new Map(documents.targets!(result, { intervalMs: RECORDED.intervalMs }).map((t) => [t.target, t.met]));
    const met = judge(d);
    expect([...met.values()].every((m) => m === true)).toBe(true);
    const named = (start: string) => {
      const found = [...met.keys()].filter((t) => t.startsWith(start));
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    const drift = named("11 documents: drift, ours = 0");
    const versions = named("11 documents: every parent version of ours holds the count");
    const lag = named("11 documents: lag p99");
    const calmLag = named("11 documents, calm: lag p99, ours ≤ the usual trigger's p99 + 250 ms");
    const viralWrites = named("11 documents, viral, production-like: parent writes, ours ≤ 1 per interval per counter");
    const move = named("11 documents moving to records: a counter past RECOUNT_LIMIT (20) moves to records");
    const backfill = named("workload 11: the backfill counts every existing comment exactly (kept recount)");
    named("11 documents, calm: drift, the usual trigger = its duplicated counted changes");
    named("11 documents, records: drift, ours = 0");
    expect([...met.keys()].filter((t) => t.includes("every parent version"))).toHaveLength(4);

    const change = (workload: string, rollup: string, more: (p: (typeof d.phases)[number]) => Partial<(typeof d.phases)[number]>) => ({
      ...d,
      phases: d.phases.map((p) => (p.phase.workload === workload && p.phase.rollup === rollup ? { ...p, ...more(p) } : p)),
    });
    const drifted = change("11 documents", "ours", () => ({ drift: { net: 0, absolute: 2, counters: 2 } }));
    expect(judge(drifted).get(drift)).toBe(false);
    expect(documents.failures!(drifted)).toEqual(["11 documents: 2 document counter(s) differ from their documents by 2 in all"]);
    const off = change("11 documents", "ours", () => ({ versions: { states: 12, off: 1 } }));
    expect(judge(off).get(versions)).toBe(false);
    expect(documents.failures!(off)).toEqual(["11 documents: 1 parent version(s) were not the count of their documents at their read time"]);
    const late = change("11 documents", "ours", (p) => ({ phase: { ...p.phase, lagMs: { ...p.phase.lagMs, p99: 2500 } } }));
    expect(judge(late).get(lag)).toBe(false);
    // The calm counter's bound is the usual trigger's p99 (700 ms) + 250 ms.
    const calmAt = (p99: number) => judge(change("11 documents, calm", "ours", (p) => ({ phase: { ...p.phase, lagMs: { ...p.phase.lagMs, p99 } } }))).get(calmLag);
    expect(calmAt(950)).toBe(true);
    expect(calmAt(951)).toBe(false);
    const busy = change("11 documents, viral", "ours", (p) => ({ phase: { ...p.phase, parentWrites: 21 } }));
    expect(judge(busy).get(viralWrites)).toBe(false);
    const stuck = { ...d, move: { ...d.move!, recordsAtUs: null } };
    expect(judge(stuck).get(move)).toBe(false);
    expect(documents.failures!(stuck)).toEqual(["11 documents moving to records: the counter did not move to records"]);
    const again = { ...d, backfill: { ...d.backfill, second: { ...d.backfill.second, counted: 1 } } };
    expect(judge(again).get(backfill)).toBe(false);
    expect(documents.failures!(again)).toEqual(["workload 11: a second backfill changed counts"]);
    expect(documents.failures!(d)).toEqual([]);
    const cost = documents.costTargets!(allInRows(RECORDED.costs));
    expect(cost.map((c) => c.target)).toEqual([
      "11 documents: a counted change, ours all in ≤ 2× the usual ±1 trigger all in",
      "11 documents, calm: a counted change, ours all in ≤ 1.5× the usual ±1 trigger all in",
      "11 documents, viral: a counted change, ours all in ≤ 1× the usual ±1 trigger all in",
    ]);
    // A run of workload 11 alone has no phase for the shared "drift, ours = 0 in every workload" row: none is made.
    const alone = targetsOf({ documents: d }, RECORDED.costs, RECORDED.intervalMs).map((t) => t.target);
    expect(alone).not.toContain("drift, ours = 0 in every workload and delivery");
    expect(targetsOf(W, RECORDED.costs, RECORDED.intervalMs).map((t) => t.target)).toContain("drift, ours = 0 in every workload and delivery");
    // The records variant is set against the workload's usual trigger; the move against none.
    const rows = allInRows(RECORDED.costs);
    expect(rows.find((r) => r.workload === "11 documents, records")!.vsNaive).not.toBeNull();
    expect(rows.find((r) => r.workload === "11 documents moving to records")!.vsNaive).toBeNull();
  });

  it("runs only the workloads --only names, never with --publish, and refuses an unknown one", () => {
    const ids = WORKLOADS.map((w) => w.id);
    expect(parseOptions(["--quick", "--only", "documents,mirrors"], FLAGS, ids)).toMatchObject({ only: ["documents", "mirrors"] });
    expect(selected(["documents"]).map((w) => w.id)).toEqual(["documents"]);
    expect(selected(undefined)).toBe(WORKLOADS);
    expect(() => parseOptions(["--only", "document"], FLAGS, ids)).toThrow(/--only: no workload "document"; the workloads are/);
    expect(() => parseOptions(["--only", "documents", "--publish"], FLAGS, ids)).toThrow(/not --only/);
  });

  it("judges workload 1's targets on workload 1 only, not on workload 10's rows", () => {
    const judged = targetsOf(RECORDED.workloads, RECORDED.costs, RECORDED.intervalMs);
    expect(RECORDED.phases.some((p) => p.workload.startsWith("10 "))).toBe(true);
    // Workload 1's parent-write targets; the naive drift rule holds for every naive phase, workload 10's too.
    expect(judged.filter((t) => t.target.startsWith("10 ") && !t.target.includes("drift, naive = number of duplicate deliveries"))).toEqual([]);
    expect(judged.some((t) => t.target.startsWith("1 sustained"))).toBe(true);
  });

  it("prices a run of the midnight commit in fractions of a cent, with two significant digits", () => {
    expect(smallDollars(0.0042)).toBe("$0.0042");
    expect(smallDollars(0.0000006)).toBe("$0.00000060");
    expect(smallDollars(0.046)).toBe("$0.05");
    expect(smallDollars(0)).toBe("$0.00");
  });

  it("links only files that exist beside it in docs/ (the plot, the prose page)", () => {
    const page = write(RECORDED);
    const targets = linksIn(page, RESULTS_PAGE).map((l) => l.target);
    expect(targets).toEqual(expect.arrayContaining(["benchmark.md", PLOT_FILE, HOT_PLOT_FILE]));
    for (const target of targets.filter((t) => !/^[a-z]+:/.test(t))) {
      expect({ target, exists: existsSync(join(REPO_ROOT, "docs", target.split("#")[0]!)) }).toEqual({ target, exists: true });
    }
  });

  it("is never published by npm test's --quick run: only --publish writes into docs/", () => {
    const testScript = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.test!;
    const argv = testScript.slice(testScript.indexOf("scripts/bench/main.ts") + "scripts/bench/main.ts".length).trim().split(/\s+/);
    expect(argv).toContain("--quick");
    expect(parseOptions(argv, FLAGS)).toMatchObject({ quick: true, publish: false });
    expect(parseOptions([...argv, "--publish"], FLAGS)).toMatchObject({ quick: true, publish: true });
  });
});
