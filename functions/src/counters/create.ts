// createParentAndShards, createCounter's write: the parent and all its shards, in one transaction that
// refuses an id still being deleted (deletion.ts), with the new total (0) on the counter's mirror targets
// (mirror-writes.ts); for an id that EXTENSION_COUNTERS names, what the extension's field holds, taken once
// with its record (model/extension-field.ts).
import { FieldValue, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { dayOf, windowsOf } from "../model/windows";
import { CounterError, GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";
import { mirrorRefs, writeMirrors } from "./mirror-writes";
import { cleanupRef, COUNTERS, counterRef, shardRef } from "../model/paths";
import { ADMIN_TRANSACTION_ATTEMPTS, rememberShape } from "./shape";
import { NEW_SHARD } from "./shard-writes";
import { shardIds } from "../model/shards";
import type { ExtensionSource } from "../model/extension-rules";
import { extensionRefs, settleExtension, type ExtensionReads } from "./extension-take";
import { BOARD_FIELD, writeEntry } from "../leaderboard/entry-writes";

export interface CreateResult {
  counterId: string;
  numShards: number;
  unique: boolean;
  windowed: boolean;
}

/** A new auto id (20 characters), as Firestore makes them: createCounter without a counterId. */
export function newCounterId(db: Firestore): string {
  return db.collection(COUNTERS).doc().id;
}

/**
 * A new counter's parent document: `total` 0, no rollup yet; a windowed counter starts with its windows at
 * 0 for the day of `nowMs`, and no day counted (model/windows.ts). Also what a fold of an extension
 * counter creates (extension/fold.ts), so both make the same counter.
 */
export function newCounterDocument(numShards: number, shape: { unique: boolean; windowed: boolean; nowMs: number }): Record<string, unknown> {
  const { unique, windowed } = shape;
  return {
    numShards,
    total: 0,
    unique,
    windowed,
    ...(windowed ? { windows: windowsOf({}, dayOf(shape.nowMs)) } : {}),
    createdAt: FieldValue.serverTimestamp(),
    rollup: windowed ? { commits: 0, days: {} } : { commits: 0 },
  };
}

/**
 * Creates the parent (`numShards`, `unique`, `windowed`, `total: 0`) and all its shards (`count: 0`) in one short
 * transaction. Shards exist from the start because increments use `update()`, which fails on a missing
 * shard: that is what keeps an increment from recreating a shard removed by a reshard or a deleted counter.
 *
 * The transaction reads the parent and the deletion marker (deletion.ts) and refuses while the marker
 * exists: a counter deleted moments ago may still have members and idempotency records being removed, and
 * a new counter with the same id must start with none of them. Reading the marker in the transaction
 * serializes the create with the cleanup's last step, which removes the marker only once nothing is left.
 */
export async function createParentAndShards(
  db: Firestore,
  counterId: string,
  numShards: number,
  options: { unique?: boolean; windowed?: boolean; mirrors?: readonly MirrorTarget[]; extension?: readonly ExtensionSource[]; board?: string; now?: () => number } = {},
): Promise<CreateResult> {
  const counter = {
    numShards,
    unique: options.unique ?? false,
    windowed: options.windowed ?? false,
    mirrors: options.mirrors ?? [],
    extension: options.extension ?? [],
    ...(options.board === undefined ? {} : { board: options.board }),
  };
  const id = counterId;
  const parent = counterRef(db, id);
  try {
    await db.runTransaction(
      async (tx) => {
        const mirrors = mirrorRefs(db, counter.mirrors);
        const sources = extensionRefs(db, counter);
        const [existing, marker, ...rest] = await tx.getAll(parent, cleanupRef(db, id), ...mirrors, ...sources);
        if (existing!.exists) throw new CounterError("already-exists", `counter "${id}" already exists`);
        if (marker!.exists) {
          throw new CounterError("failed-precondition", `counter "${id}" is still being deleted; try again shortly`);
        }
        writeNewCounter(tx, db, id, counter, rest.slice(0, mirrors.length), options.now ?? Date.now, rest.slice(mirrors.length));
      },
      { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
    );
  } catch (error) {
    if (grpcCode(error) === GRPC.ALREADY_EXISTS) throw new CounterError("already-exists", `counter "${id}" already exists`);
    throw error;
  }
  rememberShape(id, { numShards, unique: counter.unique, windowed: counter.windowed });
  return { counterId: id, numShards, unique: counter.unique, windowed: counter.windowed };
}

/**
 * The writes of a new counter, in a transaction that has read the parent (absent), the deletion marker
 * (absent), `counter.mirrors`' targets (`targets`, in order) and, for an id EXTENSION_COUNTERS names, its
 * sources' documents and records (`extension`: extension-take.ts, extensionRefs): the parent at `total: 0`,
 * every shard at 0, 0 on the mirror targets that exist, and, for a counter on a leaderboard, its entry at 0
 * (leaderboard/entry-writes.ts); or, when the id takes an extension's field now,
 * shard 0 holding what it takes, the records, and the field that holds it left as it is (the first rollup
 * commits that total within about one interval: the shards' writes wake it). Shared by createParentAndShards
 * and AUTO_CREATE (auto-create.ts). Throws failed-precondition when a source's field is not an integer.
 */
export function writeNewCounter(
  tx: Transaction,
  db: Firestore,
  counterId: string,
  counter: { numShards: number; unique: boolean; windowed: boolean; mirrors: readonly MirrorTarget[]; extension?: readonly ExtensionSource[]; board?: string },
  targets: readonly DocumentSnapshot[],
  now: () => number,
  extension: ExtensionReads = [],
): void {
  const { numShards, unique, windowed } = counter;
  const settled = settleExtension(tx, db, counterId, counter, extension);
  const board = counter.board;
  tx.create(counterRef(db, counterId), { ...newCounterDocument(numShards, { unique, windowed, nowMs: now() }), ...(board === undefined ? {} : { [BOARD_FIELD]: board }) });
  if (board !== undefined) writeEntry(tx, db, board, counterId, 0);
  for (const shardId of shardIds(numShards)) tx.set(shardRef(db, counterId, shardId), shardId === "0" && settled.taken !== 0 ? { ...NEW_SHARD, count: settled.taken } : NEW_SHARD);
  // A counter created again after a delete starts its mirror at 0 too, not at the old total; a field that
  // holds what the counter takes of it keeps it.
  const kept = counter.mirrors.map((target, i) => ({ target, snap: targets[i] })).filter(({ target }) => !settled.keeps(target));
  writeMirrors(
    tx,
    counterId,
    kept.map((k) => k.target),
    kept.map((k) => k.snap),
    0,
    counter,
  );
}
