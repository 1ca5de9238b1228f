// The backfill (docs/documents.md, "Existing documents"): every document a rule watches is observed as it
// is (its contribution at its update time), and every record that counts something, of a document the run
// did not observe, is checked against it (absent at a read time R: 0 at R; present but no longer this
// counter's under the rule as it is now: 0 at its update time, so that the rule changed back, a typo fixed,
// counts it again at that same version; a document observed and deleted since is the trigger's to take out). The observations go through the
// same apply as the trigger's events (apply.ts; records.ts says why that is exact while the
// trigger runs and the app writes), a page of one counter's documents per atomic write. A second run finds
// every record agreeing with its document and writes nothing. Rule by rule, documents then records, each
// in path / key order, so a run can resume after the last position it reported. A run that writes first
// reads what it would do (a dry run) and refuses, unless forced, what looks like a typo in a rule
// (backfill-guard.ts); a dry run says the same.
import { backfillNotices, backfillWarnings, refusalOf, type RuleSight } from "./backfill-guard";
import { fieldValue } from "../model/conditions";
import { bindingOfCounter, contributionOf, counterOf, listingOf, type Listing } from "./match";
import type { Observation } from "./records";
import { ruleNaming, type DocumentRule } from "../model/document-rules";
import type { NewCounterRule } from "../model/new-counter";
import type { Random } from "../model/shards";
import { applyObservations, type ApplyReport } from "./apply";
import { isRecountRule } from "./recount";
import { recountNow } from "./recount-now";
import type { RollupDeps } from "../rollup/types";
import type { DocumentSource, DocumentStore } from "./store";

export interface BackfillOptions {
  /** Only this counter (a rule must name it); default every counter of every rule. */
  counter?: string;
  /** Read and report what would change; write nothing. */
  dryRun?: boolean;
  /**
   * Write even what looks like a typo in a rule (backfill-guard.ts). Without it, a run that writes reads
   * everything first, as a dry run, and throws BackfillRefused, writing nothing, when a rule finds no
   * document or would take out most of what its counters count.
   */
  force?: boolean;
  /** Resume after this position (what onProgress reported, or the interrupted run printed). */
  startAfter?: string;
  /** Documents (or records) read per page; default 300. */
  pageSize?: number;
  /** Counters of one page written at once; default 8. */
  concurrency?: number;
  /** After every page: where the run is, and what it did so far (while it checks first: `checking`, nothing written). */
  onProgress?: (progress: BackfillProgress) => void;
  newCounter: NewCounterRule;
  /**
   * The rollup's dependencies (its store, the recount rules), for the counters kept by recount (recount.ts):
   * each is counted once (recount-now.ts) instead of observed document by document. Without them, or with
   * `records`, every counter is observed (a counter moving to records: move.ts).
   */
  rollup?: () => RollupDeps;
  /** Observe every document, whatever way its counter is kept (a move to records builds their records). */
  records?: boolean;
  random?: Random;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** What the backfill did for one rule (or, dry, would do). */
export interface RuleBackfill {
  rule: string;
  position: number;
  /** Documents of the rule observed. */
  seen: number;
  /** Records that count something of documents this run did not observe, checked against them (gone, or no longer this counter's?). */
  checked: number;
  /** Documents whose count was written: counted anew, or again with another value. */
  counted: number;
  /** Documents taken out of the count: gone, or no longer matching. */
  takenOut: number;
  /** Documents of the rule that no counter can count: a wildcard's value no counter id can hold (the trigger warns of each). */
  notCountable: number;
  /** What the rule's counters gained in all. */
  delta: number;
  /** Counters created (dry: that would be). */
  created: number;
  /** What could not be done now (a counter still being deleted, contention): run it again. */
  problems: string[];
}

export interface BackfillReport {
  seen: number;
  counted: number;
  takenOut: number;
  notCountable: number;
  rules: RuleBackfill[];
  dryRun: boolean;
  /**
   * A dry run's: one line per rule that looks like a typo that costs a count (it finds no document while
   * its counters count some, or would take out most of what they count), which a run that writes refuses
   * unless forced. Empty for a run that wrote.
   */
  warnings: string[];
  /** One line per rule that finds no document while its counters count nothing: maybe a typo, but nothing is lost, so nothing refuses. */
  notices: string[];
}

export interface BackfillProgress {
  rule: number;
  phase: "documents" | "records";
  /** Where a run resumes after everything reported so far (for startAfter); while `checking`, nothing is written yet. */
  position: string;
  report: BackfillReport;
  /** The run reads what it would do before it writes (options.force absent): the position is not one to resume from. */
  checking: boolean;
}

/** A backfill that would write what looks like a typo in a rule: nothing was written. */
export class BackfillRefused extends Error {
  constructor(readonly warnings: string[]) {
    super(refusalOf(warnings, "run it again with force (the command line: --force)"));
    this.name = "BackfillRefused";
  }
}

const PAGE_SIZE = 300;
/** Records per atomic write: under the 500 writes of a commit, with the counter's writes. */
const CHUNK = 200;
/** Documents whose paths a run remembers from its documents to its records (about 100 bytes each). */
const OBSERVED_MAX = 200_000;
/** Problems kept per rule (the rest are counted in the last one). */
const MAX_PROBLEMS = 20;

/**
 * Runs the backfill of `rules` (the param's, in order) over a store. Unless dry or forced, a dry run comes
 * first, and its warnings refuse the run (BackfillRefused: nothing written).
 */
export async function backfillDocuments(store: DocumentStore & DocumentSource, rules: readonly DocumentRule[], options: BackfillOptions): Promise<BackfillReport> {
  if (options.dryRun !== true && options.force !== true) {
    const { onProgress } = options;
    const check = await runRules(store, rules, { ...options, dryRun: true, onProgress: onProgress && ((progress) => onProgress({ ...progress, checking: true })) });
    if (check.warnings.length > 0) throw new BackfillRefused(check.warnings);
  }
  return runRules(store, rules, options);
}

async function runRules(store: DocumentStore & DocumentSource, rules: readonly DocumentRule[], options: BackfillOptions): Promise<BackfillReport> {
  const selected = options.counter === undefined ? [...rules] : [ruleNaming(rules, options.counter)].filter((r): r is DocumentRule => r !== undefined);
  if (options.counter !== undefined && selected.length === 0) throw new Error(`no DOCUMENT_COUNTERS rule names the counter "${options.counter}"`);
  const start = options.startAfter === undefined ? undefined : parsePosition(options.startAfter);
  const report: BackfillReport = { seen: 0, counted: 0, takenOut: 0, notCountable: 0, rules: [], dryRun: options.dryRun === true, warnings: [], notices: [] };
  const sights: RuleSight[] = [];
  for (const rule of selected) {
    if (start !== undefined && rule.position < start.rule) continue;
    const tally: RuleBackfill = { rule: rule.source, position: rule.position, seen: 0, checked: 0, counted: 0, takenOut: 0, notCountable: 0, delta: 0, created: 0, problems: [] };
    report.rules.push(tally);
    const resume = start?.rule === rule.position ? start : undefined;
    const run = new RuleRun(store, rule, options, report, tally);
    if (resume?.phase !== "records") await run.documents(resume?.after);
    await run.records(resume?.phase === "records" ? resume.after : undefined);
    // A resumed rule saw only part of its documents: nothing to judge it by.
    if (resume === undefined) sights.push(run.sight());
  }
  if (report.dryRun) report.warnings = backfillWarnings(sights);
  report.notices = backfillNotices(sights);
  return report;
}

/** A position as text: `<rule>:documents:<path>` or `<rule>:records:<counterId>/<record key>`. */
export function formatPosition(rule: number, phase: "documents" | "records", after: string): string {
  return `${rule}:${phase}:${after}`;
}

export function parsePosition(text: string): { rule: number; phase: "documents" | "records"; after: string | undefined } {
  const match = /^(\d+):(documents|records):(.*)$/s.exec(text);
  if (match === null) throw new Error(`"${text.slice(0, 80)}" is not a backfill position (<rule>:documents:<path> or <rule>:records:<counter>/<key>, as a run prints it)`);
  return { rule: Number(match[1]), phase: match[2] as "documents" | "records", after: match[3] === "" ? undefined : match[3] };
}

class RuleRun {
  /** The counters this run created (or, dry, would create): a counter is created once, whatever pages its documents span. */
  private readonly created = new Set<string>();
  /**
   * The documents this run observed (up to OBSERVED_MAX): their records need no second look, since a
   * document that existed then and is gone since was deleted under the trigger, whose event takes it out.
   */
  private readonly observed = new Set<string>();
  /** What the records listed count (before the run, in a dry run), and how many documents seen lack each field the rule reads. */
  private held = 0;
  private readonly missing = new Map<string, number>();
  private readonly listing: Listing;
  /** How each counter this run met is kept: recounted once (its documents then observed no more), or by records. */
  private readonly kept = new Map<string, "recount" | "records">();

  constructor(
    private readonly store: DocumentStore & DocumentSource,
    private readonly rule: DocumentRule,
    private readonly options: BackfillOptions,
    private readonly report: BackfillReport,
    private readonly tally: RuleBackfill,
  ) {
    this.listing = listingOf(rule.document, options.counter === undefined ? {} : bindingOfCounter(rule, options.counter));
  }

  /** What this run saw of the rule, for the guard (backfill-guard.ts). */
  sight(): RuleSight {
    const { rule, tally } = this;
    return { rule: rule.source, position: rule.position, conditions: rule.conditions, field: rule.field, listing: this.listing, oneCounter: this.options.counter !== undefined, seen: tally.seen, held: this.held, delta: tally.delta, missing: this.missing };
  }

  /** Every document the rule watches (of the one counter, with --counter), page by page. */
  async documents(from: string | undefined): Promise<void> {
    const { rule, options, listing } = this;
    const pageSize = options.pageSize ?? PAGE_SIZE;
    const reads = [...rule.conditions.map((c) => c.field), ...(rule.field === null ? [] : [rule.field])];
    let after = from;
    for (;;) {
      const page = await this.store.listDocuments(listing, after, pageSize);
      const byCounter = new Map<string, Observation[]>();
      for (const document of page) {
        const target = counterOf(rule, document.path, document.data);
        if (target === null || (options.counter !== undefined && "counterId" in target && target.counterId !== options.counter)) continue;
        if ("problem" in target) {
          this.count({ notCountable: 1 });
          continue;
        }
        this.count({ seen: 1 });
        for (const field of reads) if (fieldValue(document.data, field) === undefined) this.missing.set(field, (this.missing.get(field) ?? 0) + 1);
        const observations = byCounter.get(target.counterId) ?? [];
        observations.push({ document: document.path, counted: contributionOf(rule, document.data).value, version: document.version });
        if (this.observed.size < OBSERVED_MAX) this.observed.add(observedKey(target.counterId, document.path));
        byCounter.set(target.counterId, observations);
      }
      await this.apply(byCounter);
      if (page.length > 0) after = page[page.length - 1]!.path;
      this.progress("documents", after ?? "");
      if (page.length < pageSize) return;
    }
  }

  /**
   * Every record that counts something, of every counter of the rule (or the one counter), against its
   * document. `from`: `<counterId>/<key>` (resume inside that counter) or `<counterId>` (that one is done).
   */
  async records(from: string | undefined): Promise<void> {
    const slash = from?.indexOf("/") ?? -1;
    const resumeIn = from !== undefined && slash !== -1 ? { counterId: from.slice(0, slash), after: from.slice(slash + 1) } : undefined;
    let after = resumeIn?.counterId ?? from;
    if (resumeIn !== undefined) {
      await this.recordsOf(resumeIn.counterId, resumeIn.after);
      this.progress("records", resumeIn.counterId);
    }
    for await (const counterId of this.counterIds(after)) {
      // A recounted counter has no records to check: it is counted (once), also when none of its documents is left.
      if ((await this.keptOf(counterId)) === "records") await this.recordsOf(counterId, undefined);
      this.progress("records", counterId);
      after = counterId;
    }
  }

  /** The counters of the rule after `after`, in id order: the one of --counter, the literal one, or those that exist and match. */
  private async *counterIds(after: string | undefined): AsyncGenerator<string> {
    const { counter } = this.rule;
    const only = this.options.counter ?? (counter.placeholder === null ? counter.prefix : undefined);
    if (only !== undefined) {
      if (after === undefined || after < only) yield only;
      return;
    }
    const pageSize = this.options.pageSize ?? PAGE_SIZE;
    // Counter ids are [A-Za-z0-9_-], all below "~": the ids that start with the prefix.
    const range = { from: counter.prefix, to: `${counter.prefix}~` };
    let cursor = after;
    for (;;) {
      const ids = await this.store.listCounters(range, cursor, pageSize);
      for (const id of ids) if (ruleNaming([this.rule], id) !== undefined) yield id;
      if (ids.length < pageSize) return;
      cursor = ids[ids.length - 1];
    }
  }

  private async recordsOf(counterId: string, from: string | undefined): Promise<void> {
    const pageSize = this.options.pageSize ?? PAGE_SIZE;
    let after = from;
    for (;;) {
      const page = await this.store.listRecords(counterId, after, pageSize);
      for (const record of page) this.held += record.counted;
      const counting = page.filter((r) => r.counted !== 0 && !this.observed.has(observedKey(counterId, r.document)));
      if (counting.length > 0) {
        // The documents at one read time R: one absent then (or no longer this counter's) counts 0 at R.
        const { present, readVersion } = await this.store.readDocuments(counting.map((r) => r.document));
        const observations = counting.map((record): Observation => {
          const document = present.get(record.document);
          if (document === undefined) return { document: record.document, counted: 0, version: readVersion };
          const here = counterOf(this.rule, record.document, document.data);
          // Present: what it counts here under the rule as it is, at the version it has (never later: see above).
          const counted = here === null || "problem" in here || here.counterId !== counterId ? 0 : contributionOf(this.rule, document.data).value;
          return { document: record.document, counted, version: document.version };
        });
        this.tally.checked += counting.length;
        await this.apply(new Map([[counterId, observations]]));
      }
      if (page.length > 0) {
        after = page[page.length - 1]!.key;
        this.progress("records", `${counterId}/${after}`);
      }
      if (page.length < pageSize) return;
    }
  }

  /**
   * How `counterId` is kept, for this run: a counter of a recount rule is counted once, the first time the run
   * meets it (recount-now.ts; counted and taken out are then its net change: what the count gained or lost).
   */
  private async keptOf(counterId: string): Promise<"recount" | "records"> {
    const known = this.kept.get(counterId);
    if (known !== undefined) return known;
    const rollup = this.options.rollup;
    if (rollup === undefined || this.options.records === true || !isRecountRule(this.rule)) return "records";
    const result = await recountNow(rollup(), this.store, counterId, { newCounter: this.options.newCounter, dryRun: this.options.dryRun === true });
    const kept = result.kind === "records" ? "records" : "recount";
    this.kept.set(counterId, kept);
    if (result.kind === "problem" && this.tally.problems.length < MAX_PROBLEMS) this.tally.problems.push(result.problem);
    if (result.kind === "recounted") {
      const before = result.before ?? 0;
      this.held += before;
      this.count({ counted: Math.max(0, result.after - before), takenOut: Math.max(0, before - result.after) });
      this.tally.delta += result.after - before;
      if (result.created) this.created.add(counterId);
      this.tally.created = this.created.size;
    }
    return kept;
  }

  /** Each counter's observations, a chunk per atomic write, a few counters at once (a recounted counter's: none, it is counted). */
  private async apply(byCounter: Map<string, Observation[]>): Promise<void> {
    for (const counterId of [...byCounter.keys()]) if ((await this.keptOf(counterId)) === "recount") byCounter.delete(counterId);
    const work = [...byCounter].flatMap(([counterId, observations]) => chunks(observations).map((chunk) => ({ counterId, chunk })));
    const concurrency = Math.max(1, this.options.concurrency ?? 8);
    let next = 0;
    const worker = async () => {
      while (next < work.length) {
        const { counterId, chunk } = work[next++]!;
        this.tallyReport(
          await applyObservations(this.store, counterId, chunk, {
            source: "backfill",
            newCounter: this.options.newCounter,
            dryRun: this.options.dryRun === true,
            ...(this.options.random === undefined ? {} : { random: this.options.random }),
            ...(this.options.now === undefined ? {} : { now: this.options.now }),
            ...(this.options.sleep === undefined ? {} : { sleep: this.options.sleep }),
          }),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, work.length) }, worker));
  }

  private tallyReport(report: ApplyReport): void {
    if (report.problem !== undefined) {
      if (this.tally.problems.length < MAX_PROBLEMS) this.tally.problems.push(report.problem);
      return;
    }
    const counted = report.plan.writes.filter((w) => w.counted !== 0).length;
    const takenOut = report.plan.writes.filter((w) => w.counted === 0 && w.previous !== 0).length;
    this.count({ counted, takenOut });
    this.tally.delta += report.plan.delta;
    if (report.created) this.created.add(report.counterId);
    this.tally.created = this.created.size;
  }

  private count(n: { seen?: number; counted?: number; takenOut?: number; notCountable?: number }): void {
    for (const key of ["seen", "counted", "takenOut", "notCountable"] as const) {
      this.tally[key] += n[key] ?? 0;
      this.report[key] += n[key] ?? 0;
    }
  }

  private progress(phase: "documents" | "records", after: string): void {
    this.options.onProgress?.({ rule: this.rule.position, phase, position: formatPosition(this.rule.position, phase, after), report: this.report, checking: false });
  }
}

/** A document observed in one counter (a counter id from a field: a record elsewhere may still count it, and needs its look). */
function observedKey(counterId: string, document: string): string {
  return `${counterId}\u0000${document}`;
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}
