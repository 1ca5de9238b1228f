// rank() and watchRank() with the real Firebase JS SDK against the emulators, through firestore.rules: the
// functions emulator runs rollupTotal and rollupBoard with this repository's LEADERBOARDS
// (players=player-{id}-points, functions/.env), so every increment goes the whole way: shard, rollup commit
// with the counter's entry, the board's summary. After a seeded random workload (increments and decrements
// from two users at once, a reset, a delete and a creation again), every rank the client reads, and every
// rank a watch settles at, equals the rank counted from the totals of the board's counters (admin SDK). A
// failure prints its seed; RANK_TEST_SEED=<seed> replays it.
import { randomUUID } from "node:crypto";
import { CounterNotFoundError, NotOnBoardError, createCounterClient, type RankValue } from "../src";
import { internalsOf } from "../src/internals";
import { e2eAdminDb } from "../../test/helpers/admin";
import { pause, threeUsers, until } from "../../test/helpers/client-users";
import { withConcurrency } from "../../test/helpers/client";
import { rngOf } from "../../test/helpers/model/sim";

jest.setTimeout(180_000);

const db = e2eAdminDb();
const users = threeUsers();
const SEED = Number(process.env.RANK_TEST_SEED ?? Math.floor(Math.random() * 1e9));

/** Every counter on the players board and its rank, counted from the counters' own totals. */
async function truth(): Promise<Map<string, RankValue>> {
  const snap = await db.collection("counters").where("board", "==", "players").get();
  const totals = snap.docs.map((d) => [d.id, d.get("total") as number] as const);
  return new Map(totals.map(([id, total]) => [id, { rank: 1 + totals.filter(([, t]) => t > total).length, of: totals.length, total }]));
}

/** Waits until `read()` equals the truth of `counterId` (the rollups settle within about two intervals), or fails naming the seed. */
async function settlesAtTruth(counterId: string, read: () => Promise<RankValue | null> | RankValue | null): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last: { seen: RankValue | null; expected: RankValue | undefined } = { seen: null, expected: undefined };
  while (Date.now() < deadline) {
    const [seen, expected] = [await read(), (await truth()).get(counterId)];
    if (expected !== undefined && JSON.stringify(seen) === JSON.stringify(expected)) return;
    last = { seen, expected };
    await pause(250);
  }
  throw new Error(`seed ${SEED} (RANK_TEST_SEED=${SEED} to replay): ${counterId} shows ${JSON.stringify(last.seen)}, truly ${JSON.stringify(last.expected)}`);
}

describe("rank and watchRank", () => {
  it(`equal the ranks counted from the totals after a random workload (seed ${SEED})`, async () => {
    const random = rngOf(SEED);
    const tag = randomUUID().slice(0, 6);
    const ids = Array.from({ length: 6 }, (_, i) => `player-${tag}${i}-points`);
    for (const counterId of ids) await users.admin.call("createCounter", { counterId });
    const client = createCounterClient({ functions: users.user.functions, firestore: users.user.firestore });
    // A watch from the start: it follows the whole workload.
    const watched: (RankValue | null)[] = [];
    const stop = client.watchRank(ids[0]!, (value) => watched.push(value));
    const moves = Array.from({ length: 30 }, () => ({ counterId: ids[Math.floor(random() * ids.length)]!, delta: random() < 0.2 ? -1 - Math.floor(random() * 3) : 1 + Math.floor(random() * 5), by: random() < 0.5 ? users.user : users.other }));
    await withConcurrency(
      4,
      moves.map((move) => () => move.by.call("incrementCounter", { counterId: move.counterId, delta: move.delta, requestId: randomUUID() })),
    );
    await users.admin.call("resetCounter", { counterId: ids[1]! });
    await users.admin.call("deleteCounter", { counterId: ids[2]! });
    await users.admin.call("createCounter", { counterId: ids[2]! });
    await users.user.call("incrementCounter", { counterId: ids[2]!, delta: 3, requestId: randomUUID() });
    for (const counterId of ids) await settlesAtTruth(counterId, () => client.rank(counterId));
    await settlesAtTruth(ids[0]!, () => watched[watched.length - 1] ?? null);
    // Live: another counter overtakes the watched one, and the watch shows it.
    const before = (await truth()).get(ids[0]!)!;
    await users.other.call("incrementCounter", { counterId: ids[3]!, delta: before.total - ((await truth()).get(ids[3]!)!.total) + 5, requestId: randomUUID() });
    await settlesAtTruth(ids[0]!, () => watched[watched.length - 1] ?? null);
    expect(watched[watched.length - 1]!.rank).toBeGreaterThanOrEqual(before.rank);
    stop();
    expect(internalsOf(client)?.listeningRanks()).toEqual({ counters: 0, watchers: 0 });
    client.dispose();
  });

  it("reject and tell a counter that does not exist, and one on no board", async () => {
    const client = createCounterClient({ functions: users.user.functions, firestore: users.user.firestore });
    const missing = `player-${randomUUID().slice(0, 6)}-points`;
    const offBoard = `rank-off-${randomUUID().slice(0, 6)}`;
    await users.admin.call("createCounter", { counterId: offBoard });
    await expect(client.rank(missing)).rejects.toBeInstanceOf(CounterNotFoundError);
    await expect(client.rank(offBoard)).rejects.toBeInstanceOf(NotOnBoardError);
    await expect(client.rank(offBoard)).rejects.toMatchObject({ code: "not-found", counterId: offBoard });
    await expect(client.rank("no spaces")).rejects.toBeInstanceOf(TypeError);
    const errors: Error[] = [];
    const values: (RankValue | null)[] = [];
    const stops = [client.watchRank(missing, (v) => values.push(v), (e) => errors.push(e)), client.watchRank(offBoard, (v) => values.push(v), (e) => errors.push(e))];
    await until(() => errors.length === 2);
    expect(errors.map((e) => e.name).sort()).toEqual(["CounterNotFoundError", "NotOnBoardError"]);
    expect(values).toEqual([null, null]);
    // Created on the board, the missing one shows its rank.
    await users.admin.call("createCounter", { counterId: missing });
    await settlesAtTruth(missing, () => values[values.length - 1] ?? null);
    stops.forEach((s) => s());
    client.dispose();
  });
});
