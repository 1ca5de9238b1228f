// One table, two implementations: the client's days and windows (client/src/windows.ts, built and
// published as its own package) and the functions' (functions/src/model/windows.ts). The client
// cannot import the functions' files (docs/development.md, "One day module"), so these cases hold the two
// together: the same UTC day for a clock, the same next midnight, the same days, the same window sums,
// and the same reading of a parent's `rollup.days`.
import * as functionsWindows from "../../functions/src/model/windows";
import * as client from "../src/windows";

const ms = (iso: string): number => Date.parse(iso);

/** Clock readings around the edges that matter: midnights, a leap day, the year's end, before 1970. */
const CLOCKS = [
  0,
  -1,
  ms("1969-12-31T00:00:00Z"),
  ms("2026-11-26T12:34:56.789Z"),
  ms("2026-12-31T23:59:59.999Z"),
  ms("2027-01-01T00:00:00.000Z"),
  ms("2027-01-01T00:00:00.001Z"),
  ms("2028-02-28T23:59:59.999Z"),
  ms("2028-02-29T00:00:00Z"),
  ms("2028-03-01T00:00:00Z"),
  ms("2100-03-01T00:00:00Z"),
];

/** What might stand where a day is read: days, near-days, other types. */
const MAYBE_DAYS: unknown[] = ["2026-11-26", "2028-02-29", "2027-02-29", "2100-02-29", "2000-02-29", "2026-13-01", "2026-04-31", "2026-1-01", "2026-01-01T00:00:00Z", " 2026-01-01", "", 20260101, null, undefined, {}];

/** A parent's days: the edges of each window ending at 2026-12-31, one day after it, one long before. */
const DAYS = { "2027-01-01": 64, "2026-12-31": 1, "2026-12-30": 2, "2026-12-25": 4, "2026-12-24": 8, "2026-12-02": 16, "2026-12-01": 32, "2026-10-01": 128 };
const WINDOW_DAYS_ENDING = ["2026-11-30", "2026-12-01", "2026-12-02", "2026-12-24", "2026-12-25", "2026-12-30", "2026-12-31", "2027-01-01", "2027-01-07", "2027-01-31", "2027-02-01"];

/** What a parent's `rollup.days` may hold, as both sides read it. */
const STORED_DAYS: [string, unknown][] = [
  ["days with counts", { "2026-12-31": 1, "2026-12-30": -2 }],
  ["a day at 0", { "2026-12-31": 0 }],
  ["no days", {}],
  ["a key that is not a day", { "2026-12-31": 1, "2027-02-29": 2 }],
  ["a key that is no date at all", { "2026-12-31": 1, x: 2 }],
  ["a count that is not an integer", { "2026-12-31": 1.5 }],
  ["a count that is a string", { "2026-12-31": "1" }],
  ["a count past the safe integers", { "2026-12-31": 2 ** 53 }],
  ["a count that is null", { "2026-12-31": null }],
  ["an array", [1, 2]],
  ["a number", 7],
  ["null", null],
  ["nothing", undefined],
];

describe("the client's and the functions' days agree", () => {
  it.each(CLOCKS)("the UTC day of the clock %p", (clock) => {
    expect(client.dayOf(clock)).toBe(functionsWindows.dayOf(clock));
  });

  it.each(CLOCKS)("the next UTC midnight after the clock %p", (clock) => {
    expect(clock + client.msUntilNextUtcMidnight(clock)).toBe(functionsWindows.nextMidnightMs(clock));
  });

  it.each(MAYBE_DAYS.map((value) => [value]))("whether %p is a day", (value) => {
    expect(client.isDay(value)).toBe(functionsWindows.isDay(value));
  });

  it.each([-400, -366, -31, -30, -7, -1, 0, 1, 6, 29, 30, 366])("the day %p days after each day", (n) => {
    for (const day of ["2026-11-26", "2026-12-31", "2028-02-29", "2100-02-28", "1970-01-01"]) {
      expect(client.addDays(day, n)).toBe(functionsWindows.addDays(day, n));
    }
  });
});

describe("the client's and the functions' windows agree", () => {
  it("name the same windows with the same spans", () => {
    expect(client.WINDOW_DAYS).toEqual(functionsWindows.WINDOW_DAYS);
  });

  it.each(WINDOW_DAYS_ENDING)("sum the same days for the windows ending at %s", (day) => {
    const windows = functionsWindows.windowsOf(DAYS, day);
    for (const window of functionsWindows.WINDOW_NAMES) expect(client.sumWindow(DAYS, window, day)).toBe(windows[window]);
  });

  it.each(STORED_DAYS)("read rollup.days by one rule: %s", (_name, stored) => {
    const parent = { get: (field: string): unknown => (field === "windowed" ? true : field === "rollup.days" ? stored : undefined) };
    expect(client.readServerWindows(parent)?.days).toEqual(functionsWindows.dayCountsOf(stored));
  });
});
