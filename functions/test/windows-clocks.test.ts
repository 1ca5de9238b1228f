// Windows at midnight with instances whose clocks disagree (model/windows.ts, CLOCK_AHEAD_MS): the real
// rollup code (rollupShardWrite) over the model check's in-memory Firestore, whose commit and read times
// follow a simulated clock, with each rollup instance's clock set apart from it. A clock up to a minute
// ahead commits in the last seconds of a day as if it were the next day; the instances after it, whose
// clocks are right, must still find every day of their own 30-day window.
import { logger } from "../../test/helpers/logger";
import { addDays, CLOCK_AHEAD_MS, dayOf, dayStartMs, type Windows, windowsOf } from "../src/model/windows";
import { rollupShardWrite } from "../src/rollup/index";
import { staleAfterMsFor } from "../src/rollup/plan";
import type { RollupDeps, RollupOutcome } from "../src/rollup/types";
import { Sim } from "../../test/helpers/model/sim";
import { World } from "../../test/helpers/model/world";

beforeEach(() => {
  for (const level of ["debug", "info", "warn", "error"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

const INTERVAL_MS = 1000;
const COUNTER = "views";

/** A day D, and the day 29 days before it: the oldest day of D's `last30Days`. */
const D = "2027-03-30";
const OLDEST = addDays(D, -29);

function setUp(startIso: string): { sim: Sim; world: World } {
  const sim = new Sim(Date.parse(startIso) * 1000);
  const world = new World(sim);
  world.createCounter(COUNTER, 2, false, dayOf(sim.now() / 1000));
  return { sim, world };
}

/** A rollup instance whose clock is `skewMs` off the store's: deps as rollupTotal builds them. */
function instance(sim: Sim, world: World, skewMs: number): RollupDeps {
  const nowMs = () => Math.floor(sim.now() / 1000) + skewMs;
  return { store: world, intervalMs: INTERVAL_MS, staleAfterMs: staleAfterMsFor(INTERVAL_MS), nowMs, sleep: (ms) => sim.sleep(ms) };
}

/** At `iso` on the store's clock: an increment whose writer's clock reads the same, and its event run on `deps`. */
async function incrementAndRollUp(sim: Sim, world: World, iso: string, delta: number, deps: RollupDeps): Promise<RollupOutcome> {
  const atUs = Date.parse(iso) * 1000;
  let outcome: Promise<RollupOutcome> | undefined;
  sim.at(atUs, () => {
    const event = world.increment(COUNTER, 0, delta, undefined, { day: dayOf(atUs / 1000), clockMs: atUs / 1000 });
    outcome = rollupShardWrite(event, deps);
  });
  await sim.run();
  return await outcome!;
}

function windows(world: World): Windows {
  return world.state(COUNTER).windowed!.windows;
}

describe("windows when a rollup instance's clock runs ahead near midnight", () => {
  it("a commit by a clock up to a minute ahead in a day's last seconds drops no day the next commits need", async () => {
    expect(CLOCK_AHEAD_MS).toBe(60_000);
    const { sim, world } = setUp(`${OLDEST}T12:00:00Z`);
    const right = instance(sim, world, 0);
    // One view on the oldest day of D's month, two on D.
    expect((await incrementAndRollUp(sim, world, `${OLDEST}T12:00:00Z`, 1, right)).kind).toBe("committed");
    expect((await incrementAndRollUp(sim, world, `${D}T12:00:00Z`, 2, right)).kind).toBe("committed");
    expect(windows(world)).toEqual({ day: D, today: 2, last7Days: 2, last30Days: 3 });

    // 23:59:10 on D: a view rolled up by an instance whose clock is 59 s ahead (it reads 00:00:09 on D + 1).
    const ahead = instance(sim, world, CLOCK_AHEAD_MS - 1000);
    expect((await incrementAndRollUp(sim, world, `${D}T23:59:10Z`, 1, ahead)).kind).toBe("committed");
    expect(windows(world)).toEqual(windowsOf({ [OLDEST]: 1, [D]: 3 }, addDays(D, 1)));

    // 23:59:50 on D: a view rolled up by an instance whose clock is right. Its windows are for D, whose
    // 30 days still begin with OLDEST.
    expect((await incrementAndRollUp(sim, world, `${D}T23:59:50Z`, 1, right)).kind).toBe("committed");
    expect(windows(world)).toEqual({ day: D, today: 4, last7Days: 4, last30Days: 5 });
    expect(world.trueDays(COUNTER, sim.now())).toEqual({ [OLDEST]: 1, [D]: 4 });
    expect(world.violations).toEqual([]);
    expect(sim.now()).toBeLessThan(dayStartMs(addDays(D, 1)) * 1000);
  });

  it("an instance a few seconds behind after midnight still finds the day its windows begin with", async () => {
    const { sim, world } = setUp(`${OLDEST}T12:00:00Z`);
    const right = instance(sim, world, 0);
    await incrementAndRollUp(sim, world, `${OLDEST}T12:00:00Z`, 1, right);
    await incrementAndRollUp(sim, world, `${D}T12:00:00Z`, 2, right);
    // 00:00:05 on D + 1, by a right clock: its windows are for D + 1, whose month no longer holds OLDEST.
    await incrementAndRollUp(sim, world, `${addDays(D, 1)}T00:00:05Z`, 1, right);
    expect(windows(world)).toEqual({ day: addDays(D, 1), today: 1, last7Days: 3, last30Days: 3 });
    // 00:00:20 by a clock 30 s behind (23:59:50 on D): its windows are for D, month included.
    const behind = instance(sim, world, -30_000);
    await incrementAndRollUp(sim, world, `${addDays(D, 1)}T00:00:20Z`, 1, behind);
    expect(windows(world)).toEqual({ day: D, today: 2, last7Days: 2, last30Days: 3 });
    expect(world.violations).toEqual([]);
  });
});
