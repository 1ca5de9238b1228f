// When a write takes the firestore-counter extension's field (`pages/{id}.visits`) into a counter, and when it
// creates the counter: the one decision of the fold (extension/fold.ts: the trigger and migrate-extension)
// and of every creation of a counter that EXTENSION_COUNTERS names (createCounter, the admin entry,
// AUTO_CREATE: counters/create.ts). Pure, no Firebase import: each caller reads the state in one read (a
// transaction, or a read-only transaction at one read time) and commits what this says in one atomic write
// whose preconditions make that read still true.
//
// The record. `counters/{id}/exactCounterExtension/{document:field}` says that the field of that document
// was settled for that counter id: taken (its value added to the counter) or left (the counter existed
// first). It is created with create() (fails if it exists) in the same write that adds the field, and it
// outlives a deleteCounter (counters/deletion.ts leaves it): a record is a fact about the id, not about one
// life of its counter.
//
// Why the field is taken at most once per counter id, whatever the order of migrating, creating,
// old-client writes, mirrors writing back, deletes and re-creation:
// - only a write that finds no record takes it, and that write creates the record (create() fails if
//   another write created it since: the loser reads again and finds it), so two writes cannot both take it;
// - a write takes it only while the counter does not exist (no parent at its read), and that same write
//   creates the parent (create(): fails if someone created it since). While no parent exists nothing of
//   ours writes the field: a mirror is written only with a parent (the rollup's commit is conditioned on the
//   parent, deleteCounter removes the field in the transaction that deletes the parent). So the field's
//   value then is the extension's (its workers', or the app's own), never our mirrored total;
// - a counter that exists without a record (created before EXTENSION_COUNTERS named it, or by code that
//   did not know) may have mirrored its total into the field: such a counter never takes the field; the
//   first write that touches the source records that ("left"), so a later delete and re-create does not take
//   it either.
// Hence `createCounter` and AUTO_CREATE take the field in the transaction that creates the counter, a fold
// that creates the counter takes it in the batch that creates it, and everything after finds the record.

/** What a write finds, at its one read, for one source (a document and field whose count moves to a counter). */
export interface SourceState {
  /** The record exists (of this counter, or of an earlier counter with the same id). */
  record: boolean;
  /** The counter's parent exists. */
  parent: boolean;
}

/**
 * How the field was settled: "taken" (by this write), "before" (a record says an earlier write settled it),
 * "left" (the counter existed without a record: the field may hold its mirrored total, so it is not taken).
 */
export type FieldSettlement = "taken" | "before" | "left";

export interface FieldDecision {
  /** What the write adds of the field: its value, or 0. */
  taken: number;
  /** The write creates the record (with `taken`). */
  createRecord: boolean;
  settlement: FieldSettlement;
}

/** What a write does with the field, found at `field` (0 when absent), given the source's state. */
export function fieldDecision(state: SourceState, field: number): FieldDecision {
  if (state.record) return { taken: 0, createRecord: false, settlement: "before" };
  if (state.parent) return { taken: 0, createRecord: true, settlement: "left" };
  return { taken: field, createRecord: true, settlement: "taken" };
}

/** Who folds: the trigger (an old client's write, anyone's) or migrate-extension (the operator's run). */
export type Folder = "trigger" | "migration";

/** What one fold of one source finds at its read (extension/snapshot.ts). */
export interface FoldState extends SourceState {
  /** The counter's deletion marker exists: it is still being deleted. */
  deleting: boolean;
  /** The app's document exists. */
  documentExists: boolean;
  /** The field is on the document (0 counts: a page whose extension count is 0 still gets its counter). */
  fieldPresent: boolean;
  /** The field's value (0 when absent). */
  field: number;
  /** Shard documents with an amount of the field to move, and their sum. */
  moves: number;
  sum: number;
}

export type FoldPlan =
  /** Nothing to move and nothing to settle. */
  | { kind: "nothing" }
  /** The counter does not exist and the trigger may not create it: its document does not exist. Amounts stay. */
  | { kind: "no-document" }
  /** The counter must be created but its id is still being deleted: fold again later. Amounts stay. */
  | { kind: "deleting" }
  /** One batch: the moves, `total` onto the counter (created when `createsCounter`), the record when `field.createRecord`. */
  | { kind: "write"; field: FieldDecision; total: number; createsCounter: boolean };

/**
 * The fold's decision. A counter is created only when there is something of the source to hold (an amount
 * to move, or a field the extension kept, even 0) and no record says its id was settled before (a counter
 * that was deleted is not brought back by a migration that finds only its field); the trigger creates one
 * only while the app's document exists, so no client write under a document that does not exist creates a
 * counter: the amount stays in its shard, where migrate-extension can still move it.
 */
export function foldPlan(state: FoldState, by: Folder): FoldPlan {
  if (state.moves === 0 && !(state.fieldPresent && !state.record)) return { kind: "nothing" };
  const field = fieldDecision(state, state.field);
  const total = field.taken + state.sum;
  const createsCounter = !state.parent && (state.moves > 0 || field.createRecord);
  if (createsCounter) {
    if (by === "trigger" && !state.documentExists) return { kind: "no-document" };
    if (state.deleting) return { kind: "deleting" };
  }
  return { kind: "write", field, total, createsCounter };
}
