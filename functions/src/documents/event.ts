// One write of a watched document, as a trigger event carries it, through one rule: the observation it
// makes (the document's contribution after the write, at the write's version: records.ts),
// or nothing when the write changes no contribution (an edit of a counted comment's text, a write to a
// document that matches no condition before or after: nothing read, nothing written), brought to its
// counter by apply.ts; and the shard write that made, for the trigger to roll it up itself. The trigger's
// entry (entry/documentCounters.ts) turns an event into a write; the model check drives this same code with
// its own.
import { changesOf } from "./match";
import type { Version } from "../model/time";
import type { DocumentRule } from "../model/document-rules";
import type { ShardWrite } from "../rollup/types";
import { applyObservations, type ApplyOptions, type ApplyReport } from "./apply";
import type { DocumentStore } from "./store";

/** A document's write: its data before and after (undefined: it did not exist), and the write's version. */
export interface DocumentWrite {
  path: string;
  before: Record<string, unknown> | undefined;
  after: Record<string, unknown> | undefined;
  version: Version;
}

/** What one rule made of a write in one counter. */
export type RuleOutcome =
  /** The document cannot name a counter (a wildcard value or field no counter id can hold): a warning. */
  | { kind: "no-counter"; problem: string }
  /** The write changed nothing this rule counts. */
  | { kind: "unchanged"; counterId: string; fieldProblem?: string }
  /** The observation went to its counter (or was covered, or could not be applied: the report says). */
  | { kind: "applied"; counterId: string; counted: number; report: ApplyReport; fieldProblem?: string };

/** What apply.ts takes besides the source: the new counters' shape, and the clock and randomness (the model check's own). */
export type CountOptions = Omit<ApplyOptions, "source" | "dryRun">;

/**
 * The shard write an outcome committed, as the rollup takes a shard write event (rollup/types.ts), for the
 * trigger to roll it up itself at once (entry/documentCounters.ts); null when it wrote no delta. The commit's
 * own time stands for the event's; the shard's documents were not read, so the count is known to have
 * changed (the delta is not 0) and nothing else of them. `eventId` names this delivery in the rollup's log
 * lines; a promise it makes names the write itself (rollup/plan.ts, ownerKeyOf).
 */
export function ownShardWrite(outcome: RuleOutcome, eventId: string): ShardWrite | null {
  if (outcome.kind !== "applied") return null;
  const { shardWrite, plan } = outcome.report;
  if (shardWrite === null || plan.delta === 0) return null;
  return {
    eventId,
    counterId: outcome.counterId,
    shardId: String(shardWrite.shard),
    writtenAtUs: shardWrite.writtenAtUs,
    writtenAtExact: shardWrite.writtenAtExact,
    before: undefined,
    after: undefined,
    countChanged: true,
    inline: true,
  };
}

/**
 * The write through `rule`, one outcome per counter it changes (two when a counter id from a field changed:
 * the document's observation in each, 0 in the one it left), of those `only` accepts; null when the rule
 * does not watch the path.
 */
export async function countWrite(store: DocumentStore, rule: DocumentRule, write: DocumentWrite, options: CountOptions, only: (counterId: string) => boolean = () => true): Promise<RuleOutcome[] | null> {
  const changed = changesOf(rule, write.path, write.before, write.after);
  if (changed === null) return null;
  const outcomes: RuleOutcome[] = changed.problem === undefined ? [] : [{ kind: "no-counter", problem: changed.problem }];
  for (const { counterId, was, now } of changed.changes.filter((c) => only(c.counterId))) {
    const fieldProblem = now.problem === undefined ? {} : { fieldProblem: now.problem };
    if (was.value === now.value) {
      outcomes.push({ kind: "unchanged", counterId, ...fieldProblem });
      continue;
    }
    const report = await applyObservations(store, counterId, [{ document: write.path, counted: now.value, version: write.version }], { source: "event", ...options });
    outcomes.push({ kind: "applied", counterId, counted: now.value, report, ...fieldProblem });
  }
  return outcomes;
}
