// The admin entry's leaderboards (docs/leaderboards.md): rankOf, a counter's rank read as the client reads
// it (leaderboard/rank.ts: no params needed, the counter names its board), and backfillBoard, what
// `firestore-exact-counter backfill --board` runs: LEADERBOARDS from the options' env or this process's
// environment, compared with the deployed params before a run that writes (params-check.ts).
import { getFirestore } from "firebase-admin/firestore";
import { envSettings } from "../model/env-settings";
import { CounterError } from "../model/errors";
import { isBoardName, parseLeaderboardRules, rulesOfBoard } from "../model/leaderboard-rules";
import { ID_PATTERN } from "../model/schema";
import { backfillBoard as backfill, type BoardBackfillReport } from "../leaderboard/backfill";
import { readRank, type RankOf } from "../leaderboard/rank";
import { tool, type ToolOptions } from "./maintenance";
import { appOf, checkedOptions, type AdminOptions } from "./options";

/**
 * `{ board, counterId, rank, of, total }` of `counterId`: invalid-argument for an id that is not a counter id,
 * not-found for a counter that does not exist or is on no board (docs/api.md, "Leaderboards").
 */
export async function rankOf(counterId: string, options: AdminOptions = {}): Promise<RankOf> {
  const { app } = checkedOptions(options, []);
  if (typeof counterId !== "string" || !ID_PATTERN.test(counterId)) throw new CounterError("invalid-argument", "counterId must be 1-128 characters of A-Z, a-z, 0-9, _ or -");
  return await readRank(getFirestore(appOf(app), envSettings().databaseId()), counterId);
}

/**
 * Puts every counter the board's rules name on it (its entry and `board`) and removes the entries of
 * counters that are gone or no longer named, exactly while the rollup runs; resolves to how many it saw,
 * joined and removed. `dryRun` writes nothing. A board no rule of LEADERBOARDS names, or a value that does
 * not parse: invalid-argument, and nothing is read.
 */
export async function backfillBoard(board: string, options: ToolOptions & { dryRun?: boolean } = {}): Promise<BoardBackfillReport> {
  const { db, rest, check } = tool(options, ["dryRun"]);
  if (typeof board !== "string" || !isBoardName(board)) throw new CounterError("invalid-argument", "board must be 1-64 characters of A-Z, a-z, 0-9, _ or -");
  const env = options.env ?? process.env;
  let rules;
  try {
    rules = rulesOfBoard(parseLeaderboardRules("LEADERBOARDS", env.LEADERBOARDS ?? ""), board);
  } catch (error) {
    throw new CounterError("invalid-argument", error instanceof Error ? error.message : String(error));
  }
  if (rules.length === 0) throw new CounterError("invalid-argument", `no LEADERBOARDS rule names the board ${JSON.stringify(board)}`);
  const dryRun = (rest as { dryRun?: boolean }).dryRun === true;
  if (!dryRun) await check();
  return await backfill(db, board, rules, { dryRun });
}
