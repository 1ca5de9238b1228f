// What the rollup trigger does with bad settings and failures it cannot get past: a bad callable setting
// never stops totals, a bad ROLLUP_INTERVAL_MS, SHARD_WRITES_PER_SECOND or MAX_GROWN_SHARDS falls back to
// the default (logged at ERROR, naming it), a
// permanent Firestore error is logged at ERROR and the event completes, a transient one throws so the
// platform retries the event.
import type { Firestore } from "firebase-admin/firestore";
import * as rollupFirestore from "../src/rollup/firestore-store";
import { call, deliver, functions, newCounter, readCounter, uniqueId, writeShard } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { captureErrorLogs } from "../../test/helpers/rollup";
import type { RollupStore } from "../src/rollup/store";

beforeAll(requireEmulators);

const errors = captureErrorLogs();
const saved: Record<string, string | undefined> = {};

function setParams(values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) {
    saved[name] ??= process.env[name];
    process.env[name] = value;
  }
}

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    delete saved[name];
  }
});

const realStore = rollupFirestore.firestoreRollupStore;

/** The production store, except that every read of the parent fails with this gRPC code. */
function failingStore(code: number): (db: Firestore) => RollupStore {
  return (db) => ({
    ...realStore(db),
    readParent: () => Promise.reject(Object.assign(new Error(`simulated Firestore error ${code}`), { code })),
  });
}

describe("rollupTotal with bad settings", () => {
  it("keeps rolling up when DEFAULT_SHARDS exceeds MAX_SHARDS, which only the callables use", async () => {
    const counterId = await newCounter("bad-shards", 2);
    setParams({ DEFAULT_SHARDS: "50", MAX_SHARDS: "10" });
    await expect(call(functions.createCounter, { counterId: uniqueId("refused") })).rejects.toMatchObject({ code: "internal" });
    await deliver(await writeShard(counterId, 1, 6));
    expect((await readCounter(counterId)).total).toBe(6);
  });

  it.each(["0", "600000", "fast"])("rolls up with the default interval when ROLLUP_INTERVAL_MS=%s, and logs an error naming it", async (value) => {
    const counterId = await newCounter("bad-interval", 2);
    setParams({ ROLLUP_INTERVAL_MS: value });
    await deliver(await writeShard(counterId, 0, 4));
    expect((await readCounter(counterId)).total).toBe(4);
    expect(errors.lines.some((e) => e.includes("ROLLUP_INTERVAL_MS must be an integer from 1 to 60000"))).toBe(true);
  });

  it.each([
    ["SHARD_WRITES_PER_SECOND", "0", "SHARD_WRITES_PER_SECOND must be an integer from 1 to 10000"],
    ["MAX_GROWN_SHARDS", "20000", "MAX_GROWN_SHARDS must be an integer from 1 to 10000"],
  ])("rolls up with growth's default when %s=%s, and logs an error naming it", async (name, value, message) => {
    const counterId = await newCounter("bad-growth", 2);
    setParams({ [name]: value });
    await deliver(await writeShard(counterId, 1, 5));
    expect((await readCounter(counterId)).total).toBe(5);
    expect(errors.lines.some((e) => e.includes(message))).toBe(true);
  });
});

describe("rollupTotal failures", () => {
  it("logs a permanent error (Firestore INVALID_ARGUMENT) at ERROR with the event's context and completes the event", async () => {
    const counterId = await newCounter("permanent", 2);
    jest.spyOn(rollupFirestore, "firestoreRollupStore").mockImplementation(failingStore(3));
    const w = await writeShard(counterId, 0, 1);
    await expect(deliver(w)).resolves.toBeUndefined();
    expect(errors.lines.some((e) => e.includes("rollup failed for good") && e.includes(counterId) && e.includes(w.eventId))).toBe(true);
  });

  it("throws on a transient error (Firestore UNAVAILABLE), so the platform retries the event", async () => {
    const counterId = await newCounter("transient", 2);
    jest.spyOn(rollupFirestore, "firestoreRollupStore").mockImplementation(failingStore(14));
    const w = await writeShard(counterId, 0, 1);
    await expect(deliver(w)).rejects.toThrow("simulated Firestore error 14");
    jest.restoreAllMocks();
    await deliver(w); // the retry, once Firestore answers again
    expect((await readCounter(counterId)).total).toBe(1);
  });
});
