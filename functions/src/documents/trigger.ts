// One change of a watched document through every rule of its pattern (the document triggers' work; their
// entry, entry/documentCounters.ts, turns an event into a change). Per rule, the change's counter and its
// contribution before and after (match.ts); a change that moves no contribution reads and writes nothing.
// Then one of the two ways to keep a count (docs/documents.md, "Two ways to keep a count"):
// - KEPT BY RECOUNT (recount.ts: a count rule over one collection). The trigger is the rollup: the change is
//   a write at the document's own commit time, which the rollup (rollup/index.ts) covers, defers to a promise,
//   or counts: a count() of the rule's documents at a read time after it, committed with its read time. The
//   first counted document creates the counter (`kept: "recount"`). A counter kept by records (created before
//   this way existed, or moving to it: move.ts) takes the change's record too.
// - KEPT BY RECORDS (sums, documents over several collections): the change's record and a delta on a shard,
//   in one write (event.ts, apply.ts), which the trigger then rolls up itself at once.
// A transient failure throws once every rule was tried, and the platform delivers the event again; the rules
// that were done are covered then.
import { createHash } from "node:crypto";
import * as logger from "firebase-functions/logger";
import type { DocumentRule } from "../model/document-rules";
import { isPermanentError } from "../model/errors";
import type { NewCounterRule } from "../model/new-counter";
import type { Random } from "../model/shards";
import { parseRfc3339Micros } from "../model/time";
import { rollupShardWrite } from "../rollup/index";
import type { RollupDeps, RollupOutcome, ShardWrite } from "../rollup/types";
import { countWrite, ownShardWrite, type DocumentWrite } from "./event";
import { changesOf } from "./match";
import { isRecountRule } from "./recount";
import { StaleRead, type DocumentStore } from "./store";

/** A change of a watched document as its event brings it: the write, its commit time in µs (rounded up), and the event. */
export interface DocumentChange extends DocumentWrite {
  /** The commit time (a delete: its event's time, never before the deleted version), microseconds, rounded up. */
  writtenAtUs: number;
  eventId: string;
}

export interface TriggerDeps {
  store: DocumentStore;
  /** The rollup's dependencies (with this instance's memos and the recount rules), as of now. */
  rollup: () => RollupDeps;
  /** The shape of a counter the first counted document creates; throws for an id no counter may have. */
  newCounter: NewCounterRule;
  /** A warning said once per key on this instance. */
  warnOnce: (key: string, message: string, fields: Record<string, unknown>) => void;
  nowMs: () => number;
  /** How the records' part draws a shard and waits between attempts (the model check's own); default Math.random and a timer. */
  random?: Random;
  sleep?: (ms: number) => Promise<void>;
}

/** Thrown for a change that cannot be counted yet (its counter's deletion is still cleaning up): the event comes again. */
class NotYet extends Error {}

/** Every rule of the change's pattern (`rules`), each to its counter (see the header). */
export async function countDocumentChange(change: DocumentChange, rules: readonly DocumentRule[], deps: TriggerDeps): Promise<void> {
  let failure: Error | undefined;
  // The rollups of the shard writes this change made (kept by records), run side by side (none throws).
  const rollups: Promise<void>[] = [];
  for (const rule of rules) {
    const fields = { document: change.path, rule: rule.source, eventId: change.eventId };
    try {
      if (isRecountRule(rule)) await recountChange(rule, change, deps, fields, rollups);
      else await recordChange(rule, change, deps, fields, rollups);
    } catch (error) {
      if (!isPermanentError(error)) failure ??= error instanceof Error ? error : new Error(String(error));
      else logger.error("document not counted, for good", { ...fields, error: error instanceof Error ? error.message : String(error) });
    }
  }
  await Promise.all(rollups);
  if (failure !== undefined) throw failure;
}

/** Whether a failure of countDocumentChange is a change that cannot be counted yet (its counter still being deleted). */
export function isNotYet(error: unknown): boolean {
  return error instanceof NotYet;
}

/**
 * The change through a rule kept by records: in each counter it changes (of those `only` accepts), its record
 * and shard delta (event.ts), then the rollup of that shard write.
 */
async function recordChange(rule: DocumentRule, change: DocumentChange, deps: TriggerDeps, fields: Record<string, unknown>, rollups: Promise<void>[], only?: (counterId: string) => boolean): Promise<void> {
  const options = {
    newCounter: deps.newCounter,
    now: deps.nowMs,
    ...(deps.random === undefined ? {} : { random: deps.random }),
    ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
  };
  let notYet: NotYet | undefined;
  for (const outcome of (await countWrite(deps.store, rule, change, options, only)) ?? []) {
    if (outcome.kind === "no-counter") {
      deps.warnOnce(change.path, "document not counted: it cannot name a counter", { ...fields, problem: outcome.problem });
      continue;
    }
    if (outcome.fieldProblem !== undefined) deps.warnOnce(`${rule.position}\u0000${change.path}\u0000field`, "document field not counted", { ...fields, problem: outcome.fieldProblem });
    if (outcome.kind === "unchanged") continue;
    const { report } = outcome;
    const done = { ...fields, counterId: outcome.counterId, counted: outcome.counted, version: change.version };
    if (report.retryLater) {
      notYet ??= new NotYet(`document ${change.path} not counted in ${outcome.counterId} yet: ${report.problem ?? "try again"}`);
      continue;
    }
    if (report.problem !== undefined) logger.error("document not counted", { ...done, problem: report.problem });
    else if (report.plan.writes.length > 0) logger.debug("document counted", { ...done, delta: report.plan.delta, created: report.created });
    const own = ownShardWrite(outcome, eventIdOf(change, rule, outcome.counterId));
    if (own !== null) rollups.push(rollUpOwnWrite(own, done, deps));
  }
  // The event comes again: the counters done are covered then.
  if (notYet !== undefined) throw notYet;
}

/**
 * Rolls up the shard write this invocation just committed (event.ts, ownShardWrite: the batch's own time for
 * it), as rollupTotal would roll up its event, with this instance's memos. A failure is no loss: the record and
 * the delta are committed, and rollupTotal gets the same shard write (its event is retried until it succeeds),
 * so the total is made exact there. Throwing would only have the platform deliver the document's event again,
 * which finds it counted and rolls nothing up: so warn, and let the invocation succeed.
 */
async function rollUpOwnWrite(write: ShardWrite, fields: Record<string, unknown>, deps: TriggerDeps): Promise<void> {
  try {
    await rollupShardWrite(write, deps.rollup());
  } catch (error) {
    logger.warn("document counted; its rollup failed here and is left to rollupTotal", { ...fields, counterId: write.counterId, error: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * The change through a rule kept by recount: a write at the document's commit time, which the rollup takes
 * (see the header). Its failures throw, so that the event comes again: no other delivery brings this write.
 */
async function recountChange(rule: DocumentRule, change: DocumentChange, deps: TriggerDeps, fields: Record<string, unknown>, rollups: Promise<void>[]): Promise<void> {
  const changed = changesOf(rule, change.path, change.before, change.after);
  if (changed === null) return;
  if (changed.problem !== undefined) deps.warnOnce(change.path, "document not counted: it cannot name a counter", { ...fields, problem: changed.problem });
  // Each counter the change moves (two when a counter id from a field changed), one after the other.
  for (const { counterId, was, now } of changed.changes) if (was.value !== now.value) await recountIn(counterId, rule, change, deps, fields, rollups);
}

/** The change in one counter of a recount rule (recountChange). */
async function recountIn(counterId: string, rule: DocumentRule, change: DocumentChange, deps: TriggerDeps, fields: Record<string, unknown>, rollups: Promise<void>[]): Promise<void> {
  const write: ShardWrite = {
    eventId: eventIdOf(change, rule, counterId),
    counterId,
    // Names the change in the promise it may make (rollup/plan.ts, ownerKeyOf): the document, at its time.
    shardId: `doc-${createHash("sha256").update(change.path).digest("hex").slice(0, 16)}`,
    writtenAtUs: change.writtenAtUs,
    before: undefined,
    after: undefined,
    countChanged: true,
    inline: true,
    recounted: true,
  };
  let outcome: RollupOutcome | null = await rollupShardWrite(write, deps.rollup());
  if (outcome.kind === "skip" && outcome.reason === "no-parent") outcome = await create(counterId, change, deps, fields) ? await rollupShardWrite(write, deps.rollup()) : null;
  if (outcome === null) return;
  logger.debug("document recounted", { ...fields, counterId, outcome: outcome.kind, kept: outcome.kept });
  // Kept by records (a counter from before recounts, or one moving to records): the change's record too.
  if (outcome.kept !== "recount") await recordChange(rule, change, deps, fields, rollups, (id) => id === counterId);
}

/**
 * Creates the counter of a recount rule for its first counted document's change; false when the change must not
 * create it (it was written before the counter's last deletion: that deletion took it out). Throws NotYet while
 * a deletion of the id is still cleaning up.
 */
async function create(counterId: string, change: DocumentChange, deps: TriggerDeps, fields: Record<string, unknown>): Promise<boolean> {
  const read = await deps.store.read(counterId, []);
  if (read.counter.exists) return true;
  if (read.counter.deleting) throw new NotYet(`document ${change.path} not counted in ${counterId} yet: the counter is still being deleted`);
  const deletedAt = read.counter.deletedAt;
  if (deletedAt !== null && change.writtenAtUs <= (parseRfc3339Micros(deletedAt.replace(/\+$/, "")) ?? 0)) return false;
  let shape;
  try {
    shape = deps.newCounter(counterId);
  } catch (error) {
    logger.error("document not counted", { ...fields, counterId, problem: error instanceof Error ? error.message : String(error) });
    return false;
  }
  let created;
  try {
    created = await deps.store.createRecounted(counterId, shape, deletedAt, deps.nowMs());
  } catch (error) {
    // A deletion of the id began since the read: the change is counted, or not, once it has cleaned up.
    if (error instanceof StaleRead) throw new NotYet(`document ${change.path} not counted in ${counterId} yet: ${error.message}`);
    throw error;
  }
  logger.debug("document counter created, kept by recount", { ...fields, counterId, created });
  return true;
}

/** Names the change's delivery in one counter, in the rollup's log lines (the counter too when a field names it: a change may move two). */
function eventIdOf(change: DocumentChange, rule: DocumentRule, counterId: string): string {
  return rule.idField === null ? `${change.eventId}/${rule.position}` : `${change.eventId}/${rule.position}/${counterId}`;
}
