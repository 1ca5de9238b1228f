// The admin entry's backfill of document counters (docs/documents.md, "Existing documents"): every document
// DOCUMENT_COUNTERS watches counted, every counted one that is gone or no longer matches taken out, exactly
// while the triggers run and the app writes (documents/backfill.ts). The rules and the new counters' shape
// come from the params' values as text: the options' env (a codebase's .env, as the command line reads it)
// or this process's environment; a run that writes compares them with the deployed ones first (params-check.ts).
import { CounterError } from "../model/errors";
import { ruleNaming } from "../model/document-rules";
import { newCounterRule } from "../model/new-counter";
import { backfillDocuments as backfill, parsePosition, type BackfillOptions, type BackfillReport } from "../documents/backfill";
import { firestoreDocumentStore } from "../documents/firestore-store";
import { documentRulesOf, tool, type ToolOptions } from "./maintenance";

const KEYS = ["counter", "dryRun", "startAfter", "pageSize", "concurrency", "onProgress"] as const;

/** What backfillDocuments takes: an app and the params' values (env), and the backfill's own options. */
export type BackfillDocumentsOptions = ToolOptions & Omit<BackfillOptions, "newCounter" | "random" | "now" | "sleep">;

/**
 * Backfills every document counter (or `counter`), resolving to what it saw, counted and took out, in all
 * and per rule. `dryRun` writes nothing; `onProgress` hears each page (its `position` resumes a run with
 * `startAfter`). A rule list that does not parse, a counter no rule names or a position that is not one:
 * invalid-argument, and nothing is read.
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
  return backfill(firestoreDocumentStore(db), rules, { ...own, newCounter: newCounterRule(settings, "documents") });
}
