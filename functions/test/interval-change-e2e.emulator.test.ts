// ROLLUP_INTERVAL_MS changed while a counter is busy, on the real emulator suite: the test writes
// functions/.env.local and touches functions/lib/index.js, which makes the functions emulator reload the
// functions with the new value (test/helpers/local-params.ts), while increments keep coming. After the last
// increment the total must be exact within one interval (the new one) and a second. The env file is
// restored afterwards, whatever happens.
import { randomUUID } from "node:crypto";
import { signedInClient, untilAnswered, type Client } from "../../test/helpers/client";
import { e2eAdminDb, waitFor } from "../../test/helpers/admin";
import { shardSumIn } from "../../test/helpers/documents";
import type { Timestamp } from "firebase-admin/firestore";
import { counterRef, TRAILING_DUE_AT } from "../src/model/paths";
import { localParam } from "../../test/helpers/local-params";

jest.setTimeout(300_000);

const DEFAULT_INTERVAL_MS = Number(process.env.ROLLUP_INTERVAL_MS);
const RELOAD_TIMEOUT_MS = 90_000;

const db = e2eAdminDb();
let client: Client;
const interval = localParam("ROLLUP_INTERVAL_MS");

/** Sets ROLLUP_INTERVAL_MS for the functions emulator (undefined: back to what it was) and makes it reload. */
function setRollupInterval(intervalMs: number | undefined): void {
  if (intervalMs === undefined) interval.restore();
  else interval.set(String(intervalMs));
}

/**
 * The interval the running rollup uses, as it records it: the first commit on a new counter (a leading
 * edge) writes its own ROLLUP_INTERVAL_MS into rollup.intervalMs.
 */
async function intervalInUse(): Promise<number | undefined> {
  const counterId = `e2e-probe-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  // Probes run while the functions reload, which may reset a call (isTransportFailure): sent again.
  await untilAnswered(() => client.call("createCounter", { counterId, numShards: 1 }).catch((error: unknown) => {
    if ((error as { code?: string }).code === "functions/already-exists") return undefined; // the reset call had created it
    throw error;
  }));
  const requestId = randomUUID();
  await untilAnswered(() => client.call("incrementCounter", { counterId, requestId }));
  await waitFor(async () => (await client.readCounter(counterId))?.total, 1, 30_000);
  return (await counterRef(db, counterId).get()).get("rollup.intervalMs") as number | undefined;
}

/** Waits until the functions emulator has reloaded with `intervalMs`. */
async function reloadedWith(intervalMs: number): Promise<void> {
  const started = Date.now();
  let seen = await intervalInUse();
  while (seen !== intervalMs && Date.now() - started < RELOAD_TIMEOUT_MS) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    seen = await intervalInUse();
  }
  expect(seen).toBe(intervalMs);
}

/** Increments `counterId` every ~`gapMs` until `until()` says stop; returns the sum applied and when the last call returned. */
async function keepIncrementing(counterId: string, gapMs: number, until: () => boolean): Promise<{ sum: number; lastAt: number }> {
  let sum = 0;
  let lastAt = Date.now();
  for (let i = 0; !until(); i++) {
    const delta = i % 5 === 4 ? -1 : 2;
    // One requestId per increment, sent again with it if the reload resets the call, as the client
    // package does: counted once whether or not the reset attempt had applied it.
    const requestId = randomUUID();
    await untilAnswered(() => client.call("incrementCounter", { counterId, delta, requestId }));
    sum += delta;
    lastAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  return { sum, lastAt };
}

/**
 * Waits until the counter's pending promise is due at most `intervalMs` (and 500 ms of slack) after the
 * commit that made it: its chain's owner runs at most at that interval.
 */
async function promisingWithin(counterId: string, intervalMs: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    const parent = await counterRef(db, counterId).get();
    const dueAt = parent.get(TRAILING_DUE_AT) as Timestamp | undefined;
    if (dueAt !== undefined && parent.updateTime !== undefined && dueAt.toMillis() - parent.updateTime.toMillis() <= intervalMs + 500) return;
    if (Date.now() - started > RELOAD_TIMEOUT_MS) throw new Error(`no promise within ${intervalMs} ms on ${counterId} after ${RELOAD_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  client = await signedInClient();
});

afterAll(async () => {
  try {
    setRollupInterval(undefined);
    await reloadedWith(DEFAULT_INTERVAL_MS);
  } finally {
    await client?.close();
  }
});

describe("changing ROLLUP_INTERVAL_MS while a counter is busy", () => {
  it.each([
    [DEFAULT_INTERVAL_MS, 3000],
    [3000, DEFAULT_INTERVAL_MS],
  ])("keeps the total exact within an interval and a second of the last increment, from %p ms to %p ms", async (fromMs, toMs) => {
    if ((await intervalInUse()) !== fromMs) {
      setRollupInterval(fromMs === DEFAULT_INTERVAL_MS ? undefined : fromMs);
      await reloadedWith(fromMs);
    }
    const counterId = `e2e-interval-${fromMs}-${toMs}-${Date.now()}`;
    await client.call("createCounter", { counterId, numShards: 5 });
    // Busy under the old interval, through the reload, and a while under the new one.
    let phase: "before" | "switching" | "after" = "before";
    let afterSince = 0;
    const incrementing = keepIncrementing(counterId, 100, () => phase === "after" && Date.now() - afterSince > 2 * toMs + 2000);
    await new Promise((resolve) => setTimeout(resolve, 2 * fromMs + 1000));
    phase = "switching";
    setRollupInterval(toMs === DEFAULT_INTERVAL_MS ? undefined : toMs);
    await reloadedWith(toMs);
    // An invocation in flight at the change keeps the params it started with (the emulator's reload, like a
    // deploy, lets it finish): a chain it owns runs at the old interval until it ends (docs/rollup.md,
    // "Interval changes are safe"). The new interval's bound holds from the first promise made at it on.
    await promisingWithin(counterId, toMs);
    afterSince = Date.now();
    phase = "after";
    const { sum, lastAt } = await incrementing;

    const { value: total } = await waitFor(async () => (await client.readCounter(counterId))?.total, sum, 30_000);
    const lagMs = Date.now() - lastAt;
    const parent = await counterRef(db, counterId).get();
    console.log(`${fromMs} -> ${toMs} ms: exact ${lagMs} ms after the last increment; rollup.intervalMs ${String(parent.get("rollup.intervalMs"))}, ${String(parent.get("rollup.commits"))} commits`);
    expect(total).toBe(sum);
    expect(await shardSumIn(db, counterId)).toBe(sum);
    expect(lagMs).toBeLessThanOrEqual(toMs + 1000);
  });
});
