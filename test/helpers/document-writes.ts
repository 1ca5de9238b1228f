// The document counters' tests' app: writes of an app's own documents recorded with their real before and
// after snapshots (as the platform's event carries them), and their delivery to the wrapped document
// trigger (functions/src/entry/documentCounters.ts) the way the platform delivers events: any number of times, in any
// order, at once.
import { randomUUID } from "node:crypto";
import type { DocumentReference, DocumentSnapshot, Firestore } from "firebase-admin/firestore";
import { documentCounterTriggers } from "../../functions/src/entry/documentCounters";
import { parseDocumentCounterRules } from "../../functions/src/model/document-rules";
import { documentTriggers } from "../../functions/src/model/document-triggers";
import { versionAt } from "../../functions/src/model/time";
import { rngOf } from "./model/sim";
import { fft } from "./wrapped";

/** One write of a document: the event the platform would deliver for it. */
export interface DocumentWriteEvent {
  path: string;
  before: DocumentSnapshot;
  after: DocumentSnapshot;
  eventId: string;
  /**
   * The event's time, as the platform gives it whenever it is delivered: the write's commit time (a set: the
   * document's update time; a delete, whose commit time no client sees: the read time of the read just after it).
   */
  time: string;
}

/** A collection id no other test file uses (the emulator's database is shared by every file of a run). */
export function appCollection(prefix: string): string {
  return `${prefix}${randomUUID().replace(/-/g, "").slice(0, 8)}`;
}

/**
 * Makes `write` on the document at `path` and records it. Writes of one document must be recorded one
 * after another (each `before` is the previous `after`).
 */
export async function recordWrite(db: Firestore, path: string, write: (ref: DocumentReference) => Promise<unknown>): Promise<DocumentWriteEvent> {
  const ref = db.doc(path);
  const before = await ref.get();
  await write(ref);
  const after = await ref.get();
  return { path, before, after, eventId: `evt-${randomUUID()}`, time: versionAt(after.exists ? after.updateTime! : after.readTime) };
}

/** The wrapped document triggers of a DOCUMENT_COUNTERS value: delivers an event to the one that watches its path. */
export function documentTriggersOf(value: string): (event: DocumentWriteEvent) => Promise<void> {
  const group = documentCounterTriggers(value);
  const triggers = documentTriggers(parseDocumentCounterRules("DOCUMENT_COUNTERS", value));
  const wrapped = new Map(Object.entries(group).map(([name, fn]) => [name, fft.wrap(fn) as unknown as (event: Record<string, unknown>) => Promise<unknown>]));
  return async (event) => {
    const segments = event.path.split("/");
    const trigger = triggers.find((t) => t.key.split("/").every((s, i) => s === "*" || s === segments[i]) && t.key.split("/").length === segments.length);
    if (trigger === undefined) throw new Error(`no document trigger watches ${event.path}`);
    // firebase-functions-test does not derive params from the path for v2 functions; the trigger reads the path from the snapshots.
    await wrapped.get(trigger.name)!({ data: fft.makeChange(event.before, event.after), params: {}, id: event.eventId, time: event.time });
  };
}

/** Shuffles in place with `random`; returns the array. */
export function shuffled<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Runs `body` with a seeded random source; a failure prints the seed (DOCUMENTS_TEST_SEED=<seed> replays it). */
export async function withSeed(name: string, body: (random: () => number) => Promise<void>): Promise<void> {
  const fromEnv = process.env.DOCUMENTS_TEST_SEED;
  const seed = fromEnv !== undefined ? Number(fromEnv) : Math.floor(Math.random() * 2 ** 31);
  try {
    await body(rngOf(seed));
  } catch (error) {
    console.error(`${name} failed with seed ${seed}; re-run with DOCUMENTS_TEST_SEED=${seed}`);
    throw error;
  }
}
