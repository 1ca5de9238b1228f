// rollupBoard, on every write of a leaderboard's entry (one per counter on the board, written with its
// total: leaderboard/entry-writes.ts): keeps the board's summary exact, rolled up like a counter's total.
// Here the event becomes the "shard write" rollup/index.ts takes, with the board as its counter and the
// entry as its shard; leaderboard/board-store.ts is the store it runs over. Deployed only while LEADERBOARDS
// names a board (index.ts). Sized like rollupTotal (its params), whose instances it does not share.
import * as logger from "firebase-functions/logger";
import { onDocumentWritten, type Change, type DocumentSnapshot, type FirestoreEvent } from "firebase-functions/v2/firestore";
import { databaseId, ROLLUP_CPU, rollupConcurrency, rollupMemoryMb, rollupTimeoutSeconds } from "../config/params";
import { BOARD_ENTRY_PATTERN } from "../model/paths";
import { BoundedMemo } from "../rollup/commit";
import type { NowMemo, ParentMemo, RollupDeps, ShardWrite } from "../rollup/types";
import { boardDeps } from "./deps";
import { EVERY_FUNCTION } from "./options";
import { eventWriteTimeUs } from "./write-time";
import { rollupOrLogPermanent, shardCreated } from "./rollupTotal";

// This instance's memos, per board (rollup/types.ts).
const leads: NowMemo = new BoundedMemo();
const parents: ParentMemo = new BoundedMemo();

export const rollupBoard = onDocumentWritten(
  {
    ...EVERY_FUNCTION,
    document: BOARD_ENTRY_PATTERN,
    retry: true,
    database: databaseId,
    timeoutSeconds: rollupTimeoutSeconds,
    memory: rollupMemoryMb,
    cpu: ROLLUP_CPU,
    concurrency: rollupConcurrency,
  },
  (event) => rollupBoardEvent(event, boardDeps({ leads, parents })),
);

export type EntryEvent = FirestoreEvent<Change<DocumentSnapshot> | undefined, { board: string; entry: string }>;

/** An entry's total as the board counts it: null for an entry that does not exist (or holds none). */
function totalOf(doc: DocumentSnapshot): number | null {
  const total = doc.exists ? (doc.get("total") as unknown) : undefined;
  return typeof total === "number" ? total : null;
}

export async function rollupBoardEvent(event: EntryEvent, deps: RollupDeps): Promise<void> {
  const { board, entry } = event.params;
  const change = event.data;
  if (change === undefined) {
    logger.error("leaderboard entry event without data", { board, entry, eventId: event.id });
    return;
  }
  const write: ShardWrite = {
    eventId: event.id,
    counterId: board,
    shardId: entry,
    writtenAtUs: eventWriteTimeUs(change, event.time),
    ...shardCreated(change),
    // No document stands for the sum (a board's is a recount), and the board moves only when a total does.
    before: undefined,
    after: undefined,
    countChanged: totalOf(change.before) !== totalOf(change.after),
  };
  await rollupOrLogPermanent(write, deps, "leaderboard rollup failed for good; the event is not retried", { board, entry, eventId: event.id });
}
