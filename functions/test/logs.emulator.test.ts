// The log lines docs/operations.md's log-based metrics and alerts filter on, emitted by the real rollup
// over the Firestore emulator, with exactly the fields the filters and value extractors read:
// "rollup committed" at INFO {counterId, total, lagMs, path}, "rollup threw; the event is retried" at
// WARNING {counterId, shardId, eventId, error}, and the per-invocation "rollup ops" line at debug only
// (the benchmark counts operations from it: scripts/bench/ops.ts).
import { logger } from "../../test/helpers/logger";
import { deliver, newCounter, writeShard } from "../../test/helpers/functions";
import { requireEmulators } from "../../test/helpers/emulators";
import { rollupDeps, shardWriteOf } from "../../test/helpers/rollup";
import { rollupShardWrite } from "../src/rollup/index";
import { type RollupStore } from "../src/rollup/store";
import { COMMITTED_MESSAGE, THREW_MESSAGE } from "../src/model/log-lines";

beforeAll(requireEmulators);

type Line = { severity: string; message: unknown; fields: Record<string, unknown> };
let lines: Line[] = [];

beforeEach(() => {
  lines = [];
  for (const [method, severity] of [["debug", "DEBUG"], ["info", "INFO"], ["warn", "WARNING"], ["error", "ERROR"]] as const) {
    jest.spyOn(logger, method).mockImplementation((...args: unknown[]) => {
      lines.push({ severity, message: args[0], fields: (args[1] ?? {}) as Record<string, unknown> });
    });
  }
});
afterEach(() => jest.restoreAllMocks());

const of = (counterId: string, severity?: string) => lines.filter((l) => l.fields.counterId === counterId && (severity === undefined || l.severity === severity));

describe("the rollup's INFO lines", () => {
  it("logs one 'rollup committed' line per commit, with exactly counterId, total, lagMs and path", async () => {
    const counterId = await newCounter("log-lead", 2);
    await deliver(await writeShard(counterId, 0, 3));
    const info = of(counterId, "INFO");
    expect(info).toHaveLength(1);
    expect(info[0]!.message).toBe(COMMITTED_MESSAGE);
    expect(Object.keys(info[0]!.fields).sort()).toEqual(["counterId", "lagMs", "path", "total"]);
    expect(info[0]!.fields).toMatchObject({ counterId, total: 3, path: "lead" });
    expect(Number.isSafeInteger(info[0]!.fields.lagMs) && (info[0]!.fields.lagMs as number) >= 0).toBe(true);
  });

  it("says path slot for a busy counter's slot commit", async () => {
    const counterId = await newCounter("log-slot", 2);
    await deliver(await writeShard(counterId, 0, 1)); // the leading edge commits at once
    await deliver(await writeShard(counterId, 1, 1)); // within the interval: claims the slot, waits, commits
    const commits = of(counterId, "INFO").map((l) => l.fields);
    expect(commits).toEqual([
      { counterId, total: 1, lagMs: expect.any(Number) as number, path: "lead" },
      { counterId, total: 2, lagMs: expect.any(Number) as number, path: "slot" },
    ]);
  });

  it("logs nothing at INFO or above for an event that is already covered; the ops line stays at debug", async () => {
    const counterId = await newCounter("log-dup", 1);
    const write = await writeShard(counterId, 0, 1);
    await deliver(write);
    lines = [];
    await deliver(write);
    expect(of(counterId).filter((l) => l.severity !== "DEBUG")).toEqual([]);
    const ops = of(counterId, "DEBUG").filter((l) => l.message === "rollup ops");
    expect(ops).toHaveLength(1);
    expect(ops[0]!.fields).toMatchObject({ counterId, outcome: expect.stringMatching(/^skip-covered/) as string, writes: 0, aggregations: 0 });
  });
});

describe("a rollup invocation that throws", () => {
  it("logs 'rollup threw; the event is retried' at WARNING with exactly counterId, shardId, eventId and error", async () => {
    const counterId = await newCounter("log-threw", 1);
    const write = shardWriteOf(await writeShard(counterId, 0, 1));
    const deps = rollupDeps();
    const failing: RollupStore = { ...deps.store, readParent: () => Promise.reject(new Error("UNAVAILABLE: try again")) };
    await expect(rollupShardWrite(write, { ...deps, store: failing })).rejects.toThrow("UNAVAILABLE");
    const warnings = of(counterId, "WARNING");
    expect(warnings).toEqual([
      { severity: "WARNING", message: THREW_MESSAGE, fields: { counterId, shardId: "0", eventId: write.eventId, error: "UNAVAILABLE: try again" } },
    ]);
    expect(of(counterId, "DEBUG").find((l) => l.message === "rollup ops")?.fields.outcome).toBe("threw");
  });
});
