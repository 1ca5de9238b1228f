// The callable side of the benchmark's all-in table (scripts/bench/callable.ts), on counters in the
// Firestore emulator: an increment of ours asks the product's shape cache first, as incrementCounter does,
// and the benchmark counts the parent reads that cache makes an instance do: one on a miss, none on a hit,
// one again once the cache has let the shape go. The naive callable reads nothing. One write per call either way.
import { deleteApp, initializeApp } from "firebase-admin/app";
import { SHAPE_CACHE_TTL_MS } from "../../functions/src/model/shape-cache";
import { requireEmulators } from "../../test/helpers/emulators";
import { callableOpsOf, callableRead, forgetPhaseShapes } from "../bench/callable";
import { createBenchCounter, type Rollup } from "../bench/counters";

const PROJECT = "demo-bench-callable";
const app = initializeApp({ projectId: PROJECT }, PROJECT);
const RUN = Date.now().toString(36);

beforeAll(() => requireEmulators());
afterAll(() => deleteApp(app));

/** A new counter of `rollup` whose id starts with its own prefix, as a phase's counters do. */
async function counter(key: string, rollup: Rollup) {
  const prefix = `${key}-${rollup}-${RUN}-`;
  return { prefix, counter: await createBenchCounter(app, rollup, `${prefix}0`, 1) };
}

describe("the benchmark's count of what an increment's call did", () => {
  it("counts a parent read for ours when the callable instance does not hold the shape, and none while it does", async () => {
    const { prefix, counter: c } = await counter("miss", "ours");
    forgetPhaseShapes([c]);
    for (let i = 0; i < 3; i++) callableRead(c);
    expect(callableOpsOf(prefix)).toEqual({ calls: 3, reads: 1, writes: 3 });
  });

  it("counts a read on the first call after createCounter: the admin entry that created the counter is another instance", async () => {
    const { prefix, counter: c } = await counter("created", "ours");
    callableRead(c);
    callableRead(c);
    expect(callableOpsOf(prefix)).toEqual({ calls: 2, reads: 1, writes: 2 });
  });

  it("counts a read again once the cache has let the shape go (SHAPE_CACHE_TTL_MS)", async () => {
    const { prefix, counter: c } = await counter("expired", "ours");
    forgetPhaseShapes([c]);
    callableRead(c);
    await new Promise((resolve) => setTimeout(resolve, SHAPE_CACHE_TTL_MS + 200));
    callableRead(c);
    expect(callableOpsOf(prefix)).toEqual({ calls: 2, reads: 2, writes: 2 });
  }, 30_000);

  it("counts the naive callable's one write and no read", async () => {
    const { prefix, counter: c } = await counter("naive", "naive");
    callableRead(c);
    callableRead(c);
    expect(callableOpsOf(prefix)).toEqual({ calls: 2, reads: 0, writes: 2 });
  });

  it("sums a phase's counters by their shared prefix, and no one else's", async () => {
    const prefix = `phase-ours-${RUN}-`;
    const counters = await Promise.all([0, 1].map((i) => createBenchCounter(app, "ours", `${prefix}${i}`, 1)));
    const other = await createBenchCounter(app, "ours", `phase-ours-${RUN}x-0`, 1);
    forgetPhaseShapes([...counters, other]);
    for (const c of [...counters, ...counters, other]) callableRead(c);
    expect(callableOpsOf(prefix)).toEqual({ calls: 4, reads: 2, writes: 4 });
  });
});
