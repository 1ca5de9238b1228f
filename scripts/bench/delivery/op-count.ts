// What a handler run in this process did in Firestore, counted on the calls themselves: the document
// trigger of functions/src/documents/ logs no "rollup ops" line (the rollup does: ops.ts), so workload 11
// counts its reads and writes where they happen. This process's Firestore client is one (delivery/wrapped.ts:
// every instance shares firebase-admin), so its `getAll` (every document read: DocumentReference.get calls
// it too) and `WriteBatch.commit` (every write outside a transaction: DocumentReference.update and friends
// commit a batch too) are wrapped once (and, for workload 11's move, Query.get and a transaction's getAll), and a call counts toward the run that `counting` started, found
// through the async context: the rollup's invocations, which run outside it, are not counted here. The
// rollup the trigger runs on its own shard write runs inside it: its own ops line counts it, so the run
// notes what that line said (`inline`) for the caller to take out.
import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import { DocumentReference, Firestore, Query, Transaction, WriteBatch, type QuerySnapshot } from "firebase-admin/firestore";

export interface OpCount {
  /** Documents asked for by getAll (one read each, found or not). */
  reads: number;
  /** Writes of batches that committed (a failed commit writes nothing). */
  writes: number;
  /**
   * Reads the calls above do not see: documents a query answered (at least one read each query) and documents a
   * transaction's getAll asked for. Kept apart: workload 11's move counts them, its triggers' lines do not.
   */
  otherReads: number;
  /**
   * Of those, what the rollups the run made itself (its "rollup ops" lines with `inline: true`,
   * functions/src/rollup/types.ts) said they read and wrote: those lines count them already; and how many
   * such lines it logged (a document trigger kept by recount does all its work in its rollup).
   */
  inline: { reads: number; writes: number; lines: number };
}

const current = new AsyncLocalStorage<OpCount>();
let installed = false;

/** A prototype's own method, unbound, to be called with `this` (the wrapper below). */
function original<F>(prototype: object, name: string): F {
  const value = Object.getOwnPropertyDescriptor(prototype, name)?.value as unknown;
  if (typeof value !== "function") throw new Error(`the Firestore client has no ${name}: the benchmark cannot count its calls`);
  return value as F;
}

function install(): void {
  if (installed) return;
  installed = true;
  type GetAll = (this: Firestore, ...args: unknown[]) => Promise<unknown>;
  const getAll = original<GetAll>(Firestore.prototype, "getAll");
  const countedGetAll: GetAll = function (this: Firestore, ...args) {
    const count = current.getStore();
    if (count !== undefined) count.reads += args.filter((a) => a instanceof DocumentReference).length;
    return getAll.apply(this, args);
  };
  Object.defineProperty(Firestore.prototype, "getAll", { value: countedGetAll, writable: true, configurable: true });
  type Commit = (this: WriteBatch) => Promise<unknown>;
  const commit = original<Commit>(WriteBatch.prototype, "commit");
  const countedCommit: Commit = async function (this: WriteBatch) {
    const count = current.getStore();
    // The batch's number of writes: @google-cloud/firestore keeps it as `_opCount` (its own trace attribute).
    const ops = (this as unknown as { _opCount?: unknown })._opCount;
    if (count !== undefined && typeof ops !== "number") throw new Error("WriteBatch has no _opCount: the benchmark cannot count this client's writes");
    const results = await commit.apply(this);
    if (count !== undefined) count.writes += ops as number;
    return results;
  };
  Object.defineProperty(WriteBatch.prototype, "commit", { value: countedCommit, writable: true, configurable: true });
  type QueryGet = (this: Query) => Promise<QuerySnapshot>;
  const queryGet = original<QueryGet>(Query.prototype, "get");
  const countedQueryGet: QueryGet = async function (this: Query) {
    const count = current.getStore();
    const snap = await queryGet.apply(this);
    // Billed a read per document answered, and one for a query that answers none.
    if (count !== undefined) count.otherReads += Math.max(1, snap.size);
    return snap;
  };
  Object.defineProperty(Query.prototype, "get", { value: countedQueryGet, writable: true, configurable: true });
  type TxGetAll = (this: Transaction, ...args: unknown[]) => Promise<unknown>;
  const txGetAll = original<TxGetAll>(Transaction.prototype, "getAll");
  const countedTxGetAll: TxGetAll = function (this: Transaction, ...args) {
    const count = current.getStore();
    if (count !== undefined) count.otherReads += args.filter((a) => a instanceof DocumentReference).length;
    return txGetAll.apply(this, args);
  };
  Object.defineProperty(Transaction.prototype, "getAll", { value: countedTxGetAll, writable: true, configurable: true });
  // The functions' logger is one module too (the instances share firebase-functions), and the functions call
  // its debug through its exports object: an inline rollup's ops line, logged in a counted run, is noted there.
  const logger = load("firebase-functions/logger") as { debug: (...args: unknown[]) => void };
  const debug = logger.debug;
  logger.debug = (...args: unknown[]) => {
    const count = current.getStore();
    const fields = args[args.length - 1];
    if (count !== undefined && args[0] === "rollup ops" && isInlineOps(fields)) {
      count.inline.reads += fields.reads;
      count.inline.writes += fields.writes;
      count.inline.lines++;
    }
    debug(...args);
  };
}

const load = createRequire(__filename);

function isInlineOps(fields: unknown): fields is { reads: number; writes: number } {
  if (typeof fields !== "object" || fields === null) return false;
  const { inline, reads, writes } = fields as Record<string, unknown>;
  return inline === true && typeof reads === "number" && typeof writes === "number";
}

/** Runs `work`, counting the Firestore reads and writes made in its async context. */
export async function counting<T>(work: () => Promise<T>): Promise<{ result: T; ops: OpCount } | { error: unknown; ops: OpCount }> {
  install();
  const ops: OpCount = { reads: 0, writes: 0, otherReads: 0, inline: { reads: 0, writes: 0, lines: 0 } };
  try {
    return { result: await current.run(ops, work), ops };
  } catch (error) {
    return { error, ops };
  }
}
