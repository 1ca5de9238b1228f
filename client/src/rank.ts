// A counter's rank on its leaderboard (docs/leaderboards.md): rank() reads it once, watchRank() keeps it live.
// A rank is the counter (its total, and `board`, the board its entry is on), the board's summary, and at most
// one count() of the entries above the total within its bucket (board.ts): 2 document reads and one count().
// A watch listens to the counter and the summary (one pair of listeners per counter, shared by its watchers:
// registry.ts) and counts again after each snapshot of either (one count at a time; a snapshot that comes
// during a count makes one more), telling the watchers only of changes.
import { collection, doc, getCountFromServer, getDoc, onSnapshot, query, where, type Firestore, type Query } from "firebase/firestore";
import { rankFrom, rankQuery, summaryOf, type BoardSummary } from "./board.js";
import { CounterNotFoundError, tellMissing } from "./missing.js";
import { createRegistry, type Listening, type Watched } from "./registry.js";

/** A counter's rank on its board: 1 + the counters whose total is greater (ties share a rank), of `of`, at `total`. */
export interface RankValue {
  rank: number;
  of: number;
  total: number;
}

/** A counter that exists but is on no leaderboard (LEADERBOARDS names none for its id, or it is not backfilled yet). */
export class NotOnBoardError extends Error {
  readonly code = "not-found";
  constructor(readonly counterId: string) {
    super(`counters/${counterId} is on no leaderboard: LEADERBOARDS names none for its id, or it existed before the rule (run firestore-exact-counter backfill --board)`);
    this.name = "NotOnBoardError";
  }
}

/** The board's documents, as the functions write them (functions/src/model/paths.ts). */
const BOARDS = ["counters", "~exactCounter", "exactCounterBoards"] as const;

/** The counter's total and board as a snapshot holds them; null fields when absent or not of their type. */
function counterOf(snap: { exists(): boolean; get(field: string): unknown }): { exists: boolean; total: number | null; board: string | null } {
  if (!snap.exists()) return { exists: false, total: null, board: null };
  const total = snap.get("total");
  const board = snap.get("board");
  return { exists: true, total: typeof total === "number" ? total : null, board: typeof board === "string" ? board : null };
}

/** What a rank counts: the entries of `board` strictly between the query's bounds. */
function aboveQuery(firestore: Firestore, board: string, count: { greaterThan: number; lessThan: number | null }): Query {
  const entries = collection(firestore, ...BOARDS, board, "exactCounterEntries");
  const above = where("total", ">", count.greaterThan);
  return count.lessThan === null ? query(entries, above) : query(entries, above, where("total", "<", count.lessThan));
}

/** The rank of `total` on `board` from its summary: one count() at most. */
async function rankOn(firestore: Firestore, board: string, summary: BoardSummary, total: number): Promise<RankValue> {
  const q = rankQuery(summary, total);
  const counted = q.count === null ? 0 : (await getCountFromServer(aboveQuery(firestore, board, q.count))).data().count;
  return { rank: rankFrom(q, counted), of: summary.of, total };
}

interface RankWatcher {
  onValue: (value: RankValue | null) => void;
  onError: ((error: Error) => void) | undefined;
  /** The value it was told last (as JSON). */
  last: string | undefined;
  toldMissing: boolean;
  toldOffBoard: boolean;
}

interface RankState extends Watched<RankWatcher> {
  total: number | null;
  board: string | null;
  summary: BoardSummary | null;
  /** The board's listener, while `board` is known. */
  stopBoard: (() => void) | undefined;
  counting: boolean;
  /** A snapshot came while a count ran: count again after it. */
  again: boolean;
  value: RankValue | null;
  /** Moves on when the listeners stop: a count started before answers for nothing then. */
  generation: number;
}

export interface Ranks {
  rank(counterId: string): Promise<RankValue>;
  watchRank(counterId: string, onValue: (value: RankValue | null) => void, onError?: (error: Error) => void): () => void;
  dispose(): void;
  listening(): Listening;
}

export function createRanks(firestore: Firestore): Ranks {
  async function rank(counterId: string): Promise<RankValue> {
    const counter = counterOf(await getDoc(doc(firestore, "counters", counterId)));
    if (!counter.exists) throw new CounterNotFoundError(counterId);
    if (counter.board === null || counter.total === null) throw new NotOnBoardError(counterId);
    const summary = summaryOf((await getDoc(doc(firestore, ...BOARDS, counter.board))).data());
    return await rankOn(firestore, counter.board, summary, counter.total);
  }

  const registry = createRegistry<RankWatcher, RankState>({
    create: () => ({ watchers: new Set(), unsubscribe: undefined, seenUntil: null, total: null, board: null, summary: null, stopBoard: undefined, counting: false, again: false, value: null, generation: 0 }),
    listen: (counterId, state) => {
      const stopCounter = onSnapshot(
        doc(firestore, "counters", counterId),
        (snap) => onCounter(counterId, state, counterOf(snap)),
        (error) => registry.fail(state, error),
      );
      return () => {
        stopCounter();
        state.stopBoard?.();
        state.stopBoard = undefined;
      };
    },
    // A watcher that joins gets the rank at once when it is known (else with the next count).
    publish: (_counterId, state) => {
      if (state.value !== null) for (const watcher of state.watchers) tellRank(watcher, state.value);
    },
    stopped: (state) => {
      Object.assign(state, { total: null, board: null, summary: null, value: null, again: false, generation: state.generation + 1 });
    },
    busy: (state) => state.counting,
  });

  function onCounter(counterId: string, state: RankState, counter: ReturnType<typeof counterOf>): void {
    if (!counter.exists || counter.board === null || counter.total === null) {
      state.value = null;
      for (const watcher of state.watchers) {
        tellRank(watcher, null);
        if (!counter.exists) tellMissing(watcher, counterId);
        else if (!watcher.toldOffBoard) {
          watcher.toldOffBoard = true;
          watcher.onError?.(new NotOnBoardError(counterId));
        }
      }
    } else {
      for (const watcher of state.watchers) Object.assign(watcher, { toldMissing: false, toldOffBoard: false });
    }
    const board = counter.exists ? counter.board : null;
    if (board !== state.board) {
      state.stopBoard?.();
      state.stopBoard = undefined;
      state.summary = null;
      if (board !== null) {
        state.stopBoard = onSnapshot(
          doc(firestore, ...BOARDS, board),
          (snap) => {
            state.summary = summaryOf(snap.data());
            recount(counterId, state);
          },
          (error) => registry.fail(state, error),
        );
      }
    }
    state.board = board;
    state.total = counter.exists ? counter.total : null;
    recount(counterId, state);
  }

  /** Counts again from what the listeners delivered last (one count at a time), and tells the watchers. */
  function recount(counterId: string, state: RankState): void {
    if (state.counting) {
      state.again = true;
      return;
    }
    const { board, summary, total, generation } = state;
    if (board === null || summary === null || total === null || state.unsubscribe === undefined) return;
    state.counting = true;
    state.again = false;
    const settled = (): boolean => {
      state.counting = false;
      if (state.generation === generation) return true;
      // The listeners stopped meanwhile: forget the state, or, if they started again, count for them.
      if (state.unsubscribe === undefined) registry.forgetIfIdle(counterId, state);
      else if (state.again) recount(counterId, state);
      return false;
    };
    rankOn(firestore, board, summary, total).then(
      (value) => {
        if (!settled()) return;
        // Newer snapshots came meanwhile: this value is of older ones; count again instead.
        if (state.again) return recount(counterId, state);
        state.value = value;
        for (const watcher of state.watchers) tellRank(watcher, value);
      },
      (error: unknown) => {
        if (!settled()) return;
        registry.fail(state, error instanceof Error ? error : new Error(String(error)));
        if (state.again) recount(counterId, state);
      },
    );
  }

  function watchRank(counterId: string, onValue: (value: RankValue | null) => void, onError?: (error: Error) => void): () => void {
    return registry.watch(counterId, { onValue, onError, last: undefined, toldMissing: false, toldOffBoard: false });
  }

  return { rank, watchRank, dispose: () => registry.dispose(), listening: () => registry.listening() };
}

/** Tells a watcher the rank to show (null: none), unless it was told exactly this last. */
function tellRank(watcher: RankWatcher, value: RankValue | null): void {
  const key = JSON.stringify(value);
  if (watcher.last === key) return;
  watcher.last = key;
  watcher.onValue(value);
}
