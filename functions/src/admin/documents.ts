// The admin entry's backfill of document counters (docs/documents.md, "Existing documents"): every document
// DOCUMENT_COUNTERS watches counted, every counted one that is gone or no longer matches taken out, exactly
// while the triggers run and the app writes (documents/backfill.ts). The rules and the new counters' shape
// come from the params' values as text: the options' env (a codebase's .env, as the command line reads it)
// or this process's environment; a run that writes compares them with the deployed ones first (params-check.ts).
import { CounterError } from "../model/errors";
import { ruleNaming } from "../model/document-rules";
import { newCounterRule } from "../model/new-counter";
import { backfillDocuments as backfill, BackfillRefused, parsePosition, type BackfillOptions, type BackfillReport } from "../documents/backfill";
import { firestoreDocumentStore } from "../documents/firestore-store";
import { documentRulesOf, tool, type ToolOptions } from "./maintenance";
import { toolRollupDeps } from "./rollup-deps";

const KEYS = ["counter", "dryRun", "force", "startAfter", "pageSize", "concurrency", "onProgress"] as const;

/** What backfillDocuments takes: an app and the params' values (env), and the backfill's own options. */
export type BackfillDocumentsOptions = ToolOptions & Omit<BackfillOptions, "newCounter" | "random" | "now" | "sleep">;

/**
 * Backfills every document counter (or `counter`), resolving to what it saw, counted and took out, in all
 * and per rule. `dryRun` writes nothing (its `warnings` say what a run would refuse); `onProgress` hears each
 * page (its `position` resumes a run with `startAfter`, unless `checking`). A rule list that does not parse, a
 * counter no rule names or a position that is not one: invalid-argument, and nothing is read. A run that
 * looks like a typo in a rule (it would take out most of what a rule's counters count, or finds no document
 * while they count something): failed-precondition naming the rule, and nothing is written, unless `force`; a
 * rule that finds no document while its counters count nothing gets a note in `notices` (a new app).
 */
export async function backfillDocuments(options: BackfillDocumentsOptions = {}): Promise<BackfillReport> {
  const { db, settings, rest, check } = tool(options, KEYS);
  const own = rest as Omit<BackfillOptions, "newCounter">;
  const rules = documentRulesOf(options.env ?? process.env);
  if (own.counter !== undefined && ruleNaming(rules, own.counter) === undefined) {
    throw new CounterError("invalid-argument", `no DOCUMENT_COUNTERS rule names the counter ${JSON.stringify(own.counter)}`);
  }
  if (own.startAfter !== undefined) {
    try {
      parsePosition(own.startAfter);
    } catch (error) {
      throw new CounterError("invalid-argument", error instanceof Error ? error.message : String(error));
    }
  }
  if (own.dryRun !== true) await check();
  try {
    return await backfill(firestoreDocumentStore(db), rules, { ...own, newCounter: newCounterRule(settings, "documents"), rollup: toolRollupDeps(db, settings, rules) });
  } catch (error) {
    if (error instanceof BackfillRefused) throw new CounterError("failed-precondition", error.message);
    throw error;
  }
}
