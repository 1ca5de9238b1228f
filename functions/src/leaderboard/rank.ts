// A counter's rank on its leaderboard, read (docs/leaderboards.md): the counter (its total, and `board`, the
// board its entry is on), the board's summary, and at most one count() of the entries above its total within
// its own bucket (model/board.ts, rankQuery), all in one read-only transaction: one consistent snapshot, no
// lock. 2 document reads and at most one count() over at most about one bucket's entries.
import type { Firestore } from "firebase-admin/firestore";
import { rankFrom, rankQuery, summaryOf } from "../model/board";
import { CounterError } from "../model/errors";
import { boardRef, counterRef, entriesRef } from "../model/paths";
import { parentBoardOf } from "./entry-writes";

export interface RankOf {
  board: string;
  counterId: string;
  /** 1 + the counters of the board whose total is strictly greater (ties share a rank). */
  rank: number;
  /** The counters on the board. */
  of: number;
  total: number;
}

/** The rank of `counterId`; not-found for a counter that does not exist or is on no board. */
export async function readRank(db: Firestore, counterId: string): Promise<RankOf> {
  return await db.runTransaction(
    async (tx) => {
      const parent = await tx.get(counterRef(db, counterId));
      if (!parent.exists) throw new CounterError("not-found", `counter "${counterId}" does not exist`);
      const board = parentBoardOf(parent);
      const total = parent.get("total") as unknown;
      if (board === null || typeof total !== "number") {
        throw new CounterError("not-found", `counter "${counterId}" is on no leaderboard (LEADERBOARDS names none for its id, or it existed before the rule: run firestore-exact-counter backfill --board)`);
      }
      const summary = summaryOf((await tx.get(boardRef(db, board))).data());
      const query = rankQuery(summary, total);
      let counted = 0;
      if (query.count !== null) {
        let above = entriesRef(db, board).where("total", ">", query.count.greaterThan);
        if (query.count.lessThan !== null) above = above.where("total", "<", query.count.lessThan);
        counted = (await tx.get(above.count())).data().count;
      }
      return { board, counterId, rank: rankFrom(query, counted), of: summary.of, total };
    },
    { readOnly: true },
  );
}
