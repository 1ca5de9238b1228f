// A hot counter, end to end: an app calls incrementCounter 10 times a second through the JS SDK on a
// counter created with 1 shard, the real rollupTotal runs in the functions emulator, and the counter grows
// its own shards (docs/growth.md: 1 -> 4 -> 10), counting every increment exactly.
//
// Why 10/s and not more: the functions emulator runs callables and triggers on this machine's two cores,
// and delivers trigger events one at a time (production delivers them concurrently); 40 calls a second
// outran it (calls queued past the SDK's 70 s deadline). So the rollup's commits, and with them growth,
// trail the load here by however far that queue is behind: the test keeps the load on until the counter
// has 8 shards, for at most 90 s, and prints how long it took. 40 increments/s growing 1 -> 16 within
// 30 s is checked under production-like delivery in growth.emulator.test.ts.
import { signedInClient, type Client } from "../../test/helpers/client";
import { e2eAdminDb, waitFor } from "../../test/helpers/admin";
import { shardsRef } from "../src/model/paths";

jest.setTimeout(240_000);

const RATE = 10;
const IN_FLIGHT = 4;
const GROWN = 8;
const db = e2eAdminDb();
let client: Client;

beforeAll(async () => {
  client = await signedInClient();
});

afterAll(async () => {
  await client?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

it(`grows a counter created with 1 shard that takes ${RATE} increments/s through the callables, and counts every increment`, async () => {
  const counterId = `e2e-grow-${Date.now()}`;
  await expect(client.call("createCounter", { counterId, numShards: 1 })).resolves.toMatchObject({ numShards: 1 });

  const started = Date.now();
  let sent = 0;
  let expected = 0;
  let inFlight = 0;
  const calls: Promise<unknown>[] = [];
  let grewAtMs: number | null = null;
  const seen: number[] = [];
  for (let tick = 0; grewAtMs === null && Date.now() - started < 90_000; tick++) {
    await sleep(started + (tick * 1000) / RATE - Date.now());
    while (inFlight >= IN_FLIGHT) await sleep(5);
    const delta = 1 + (tick % 3);
    inFlight++;
    sent++;
    expected += delta;
    calls.push(client.call("incrementCounter", { counterId, delta }).finally(() => inFlight--));
    if (tick % RATE === 0) {
      const numShards = (await client.readCounter(counterId))?.numShards as number;
      seen.push(numShards);
      if (numShards >= GROWN) grewAtMs = Date.now() - started;
    }
  }
  await Promise.all(calls);
  console.log(`grew to ${seen.at(-1)} shards ${grewAtMs} ms after the first of ${sent} increments; numShards once a second: ${seen.join(" ")}`);
  expect(grewAtMs).not.toBeNull();

  const { value: total } = await waitFor(async () => (await client.readCounter(counterId))?.total, expected, 60_000);
  expect(total).toBe(expected);
  const parent = await client.readCounter(counterId);
  const shards = await shardsRef(db, counterId).get();
  expect(shards.docs.map((d) => d.id).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: parent!.numShards as number }, (_, i) => String(i)));
  expect(shards.docs.reduce((n, d) => n + (d.get("count") as number), 0)).toBe(expected);
  expect(shards.docs.reduce((n, d) => n + (d.get("writes") as number), 0)).toBe(sent);
});
